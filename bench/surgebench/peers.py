"""surgebench.peers - one run of each program scripts/bench measures, each
giving its rate (Mpps, the median of its per-second samples) and keeping
its log and samples in the work folder: surge (its per-second stats lines,
or DPDK telemetry from outside), bench/ceiling.c (surge-ceiling),
dpdk-testpmd (its --stats-period displays, or telemetry), Pktgen-DPDK
(telemetry). A run that fails prints its log's tail and ends the bench."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from typing import Dict, List, Optional, Sequence, Tuple

from . import common, cpu, stats

SURGE_TX = re.compile(r"^\[ *[0-9.]+s\] port 0 +TX +([0-9.]+) Mpps")
TELEMETRY_LINE = re.compile(r"^interval pps_raw=(\S+)")


class Runs:
    """The programs, their settings and what the runs measured so far."""

    def __init__(self, root: str, work: common.Work, prefix: str, duration: int, size: int, burst: int,
                 surge: str, ceiling: str, testpmd: str, cpu_time: bool) -> None:
        self.root, self.work, self.prefix = root, work, prefix
        self.duration, self.size, self.burst = duration, size, burst
        self.surge, self.ceiling, self.testpmd = surge, ceiling, testpmd
        self.cpu_time = cpu_time
        self.run = 0
        self.huge = True
        self.surge_mem: List[str] = []
        self.tpmd_mem: List[str] = ["--huge-unlink"]
        self.surge_lcores: List[str] = []
        self.ceil_lcores: List[str] = []
        self.tx = 1
        self.script = os.path.join(root, "examples/udp-flood.lua")
        self.script_of: Dict[str, str] = {}
        self.nohuge_of: Dict[str, bool] = {}
        self.samples: Dict[str, List[float]] = {}     # all-KEY.samples: every second of a row's side
        self.shares: List[str] = []                    # --cpu-time: the CPU shares measured
        self.bg: Optional["subprocess.Popen[bytes]"] = None

    # --- bookkeeping -----------------------------------------------------------
    def log(self, what: str) -> str:
        self.run += 1
        return self.work.file("%02d-%s.log" % (self.run, what))

    def fail_run(self, log: str, why: str) -> None:
        common.err("bench: %s; last lines of %s:" % (why, log))
        for line in common.tail(log, 25):
            common.err(common.ANSI.sub("", line))
        raise common.Fail()

    def keep(self, key: str, log: str, samples: Sequence[float]) -> None:
        self.samples.setdefault(key, []).extend(samples)
        with open(self.work.file("all-%s.samples" % key), "a") as f:
            f.writelines("%s\n" % fmt(s) for s in samples)

    def start(self, cmd: Sequence[str], log: str, cwd: Optional[str] = None) -> "subprocess.Popen[bytes]":
        with open(log, "wb") as out:
            self.bg = subprocess.Popen(list(cmd), stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, cwd=cwd)
        return self.bg

    def sampler(self, p: "subprocess.Popen[bytes]") -> Optional[cpu.TxShare]:
        if not self.cpu_time:
            return None
        t = cpu.TxShare(p.pid, self.duration, self.tx)
        t.start()
        return t

    def finish(self, p: "subprocess.Popen[bytes]", sampler: Optional[cpu.TxShare], log: str) -> int:
        rc = common.status(p.wait())
        self.bg = None
        if sampler is not None:
            sampler.join()
            with open(log + ".cpu", "w") as f:
                f.write("%.4f\n" % sampler.share)
        return rc

    def stop_bg(self) -> None:
        if self.bg is not None:
            common.stop_proc(self.bg, grace=15)
            self.bg = None

    def cpu_scale(self, log: str, samples: List[float], share: Optional[float]) -> List[float]:
        """--cpu-time: the samples per CPU-second of a TX lcore (each divided
        by the measured share), the share kept for the table's footnote."""
        if not self.cpu_time:
            return samples
        if share is None or not share > 0.05:
            self.fail_run(log, "no CPU share measured for the TX lcores ('%s')" % ("" if share is None else "%.4f" % share))
        assert share is not None
        samples = stats.per_cpu(samples, share)
        self.write_samples(log, samples)
        self.shares.append("%.4f" % share)
        return samples

    @staticmethod
    def write_samples(log: str, samples: Sequence[float]) -> None:
        with open(log + ".samples", "w") as f:
            f.writelines("%s\n" % fmt(s) for s in samples)

    @staticmethod
    def share_of(log: str) -> Optional[float]:
        try:
            return float(open(log + ".cpu").read())
        except (OSError, ValueError):
            return None

    # --- surge and surge-ceiling: their per-second stats lines ---------------------
    def stats_samples(self, log: str, what: str, key: str) -> float:
        """The per-second "[   1.00s] port 0  TX  x Mpps" lines, the first
        (the start of traffic) dropped, DURATION of them: the rate, their median."""
        got: List[float] = []
        n = 0
        with open(log, errors="replace") as f:
            for line in f:
                m = SURGE_TX.match(line)
                if not m:
                    continue
                n += 1
                if n == 1 or n > self.duration + 1:
                    continue
                got.append(float(m.group(1)))
        self.write_samples(log, got)
        if len(got) != self.duration:
            self.fail_run(log, "%s: %d per-second samples, wanted %d" % (what, len(got), self.duration))
        got = self.cpu_scale(log, got, self.share_of(log))
        self.keep(key, log, got)
        return stats.median(got)

    def surge_run(self, name: str, args: Sequence[str], binary: Optional[str] = None) -> float:
        """surge on net_null0,no-rx=1 for 1 + DURATION seconds and a half."""
        log = self.log("surge-" + name)
        mem = ["--no-huge"] if self.nohuge_of.get(name) else self.surge_mem
        d = self.duration
        p = self.start(["timeout", "-k", "5", str(d + 60), binary or self.surge, "run", *mem, *self.surge_lcores,
                        "--vdev", "net_null0,no-rx=1", "--stats-interval", "1", "--duration", "%d.5" % (d + 1),
                        self.script_of.get(name, self.script), "--size", str(self.size), "--burst", str(self.burst),
                        *args], log)
        rc = self.finish(p, self.sampler(p), log)
        if rc != 0:
            self.fail_run(log, "surge %s exited with status %d" % (name, rc))
        if "no leak" not in open(log, errors="replace").read():
            self.fail_run(log, "surge %s: no clean pool check at exit" % name)
        return self.stats_samples(log, "surge " + name, "surge-" + name)

    def ceiling_run(self, mode: str, queues: int) -> float:
        """bench/ceiling.c: the bare loops, on the same sink, lcores and memory."""
        log = self.log("ceiling-" + mode)
        pfx = "%s-%d" % (self.prefix, self.run)
        mem = ["--in-memory"] if self.huge else ["--no-huge", "-m", "512", "--file-prefix", pfx]
        d = self.duration
        p = self.start(["timeout", "-k", "5", str(d + 60), self.ceiling, *self.ceil_lcores, "--no-pci",
                        "--log-level=warning", *mem, "--vdev", "net_null0,no-rx=1", "--", "--mode", mode,
                        "--queues", str(queues), "--size", str(self.size), "--burst", str(self.burst),
                        "--duration", "%d.5" % (d + 1)], log)
        rc = self.finish(p, self.sampler(p), log)
        common.rm_runtime(pfx)
        if rc != 0:
            self.fail_run(log, "surge-ceiling %s exited with status %d" % (mode, rc))
        return self.stats_samples(log, "ceiling " + mode, "ceiling-" + mode)

    # --- testpmd: its --stats-period displays ----------------------------------------
    def tpmd_samples(self, log: str) -> List[float]:
        """testpmd prints TX-packets and "Tx-pps" since the last display, on
        its own clock. The first display holds nothing, the display where
        TX-packets first is non-zero holds the start of traffic; both are
        dropped, the next DURATION Tx-pps values are the samples."""
        out: List[float] = []
        txp, started = 0.0, False
        with open(log, errors="replace") as f:
            for line in f:
                w = line.split()
                if "TX-packets:" in line and "TX-errors:" in line[line.index("TX-packets:"):]:
                    txp = num(w[1]) if len(w) > 1 else 0.0
                if "Tx-pps:" in line:
                    v = num(w[1]) if len(w) > 1 else 0.0
                    if not started:
                        started = txp > 0
                        continue
                    if len(out) < self.duration:
                        out.append(float("%.6f" % (v / 1e6)))
        return out

    def testpmd_run(self, name: str, args: Sequence[str]) -> float:
        """testpmd on net_null0,no-rx=1, stopped (SIGTERM, a clean exit) as
        soon as it has printed its samples."""
        log = self.log("testpmd-" + name)
        pfx = "%s-%d" % (self.prefix, self.run)
        d = self.duration
        p = self.start(["stdbuf", "-oL", "-eL", "timeout", "-k", "5", str(d + 60), self.testpmd, *self.ceil_lcores,
                        "--no-pci", "--file-prefix", pfx, *self.tpmd_mem, "--vdev", "net_null0,no-rx=1", "--",
                        "--burst=%d" % self.burst, "--stats-period", "1", "--auto-start", *args], log)
        sampler = self.sampler(p)
        limit, waited = (d + 60) * 4, 0
        while p.poll() is None:
            if len(self.tpmd_samples(log)) >= d:
                break
            time.sleep(0.25)
            waited += 1
            if waited >= limit:
                break
        if p.poll() is None:
            p.terminate()
        rc = self.finish(p, sampler, log)
        common.rm_runtime(pfx)
        got = self.tpmd_samples(log)
        self.write_samples(log, got)
        if len(got) != d:
            self.fail_run(log, "testpmd %s (status %d): %d per-second samples, wanted %d" % (name, rc, len(got), d))
        if rc not in (0, 130, 143):
            self.fail_run(log, "testpmd %s exited with status %d" % (name, rc))
        got = self.cpu_scale(log, got, self.share_of(log))
        self.keep("testpmd-" + name, log, got)
        return stats.median(got)

    # --- from outside: DPDK telemetry (bench/telemetry-rate.py) ----------------------
    def tele_samples(self, pfx: str, counter: str, log: str, extra: Sequence[str] = (),
                     out_file: Optional[str] = None) -> Tuple[List[float], str]:
        """DURATION one-second samples of the port's COUNTER after 1.5 s of
        warm-up, in Mpps; and telemetry-rate.py's whole output."""
        d = self.duration
        with open(log + ".tele", "ab") as e:
            r = subprocess.run(["python3", os.path.join(self.root, "bench/telemetry-rate.py"), *extra, pfx, "0",
                                "1.5", str(d), counter, str(d)], stdout=subprocess.PIPE, stderr=e)
        text = r.stdout.decode(errors="replace")
        if out_file:
            with open(out_file, "w") as f:
                f.write(text)
        got = []
        for line in text.splitlines():
            m = TELEMETRY_LINE.match(line)
            if m:
                got.append(float("%.6f" % (num(m.group(1)) / 1e6)))
        self.write_samples(log, got)
        return got, text

    def tele_finish(self, log: str, what: str, got: List[float], key: str) -> float:
        if len(got) != self.duration:
            tele = open(log + ".tele", errors="replace").read() if os.path.exists(log + ".tele") else ""
            self.fail_run(log, "%s: %d telemetry samples, wanted %d (%s)" % (what, len(got), self.duration,
                                                                              tele.rstrip("\n")))
        got = self.cpu_scale(log, got, self.share_of(log))
        self.keep(key, log, got)
        return stats.median(got)

    def rx_surge(self, name: str, counter: str, vdev: str, script: str, args: Sequence[str]) -> float:
        log = self.log("surge-" + name)
        pfx = "%s-%d" % (self.prefix, self.run)
        d = self.duration
        p = self.start(["timeout", "-k", "5", str(d + 60), self.surge, "run", *self.surge_mem, *self.surge_lcores,
                        "--file-prefix", pfx, "--vdev", vdev, "--duration", str(d + 3), script, *args], log)
        sampler = self.sampler(p)
        got, _ = self.tele_samples(pfx, counter, log)
        rc = self.finish(p, sampler, log)
        common.rm_runtime(pfx)
        if rc != 0:
            self.fail_run(log, "surge %s exited with status %d" % (name, rc))
        if "no leak" not in open(log, errors="replace").read():
            self.fail_run(log, "surge %s: no clean pool check at exit" % name)
        return self.tele_finish(log, "surge " + name, got, "surge-" + name)

    def rx_testpmd(self, name: str, vdev: str) -> float:
        log = self.log("testpmd-" + name)
        pfx = "%s-%d" % (self.prefix, self.run)
        d = self.duration
        # --stats-period: without it testpmd waits for a key on stdin, which is /dev/null here
        p = self.start(["timeout", "-k", "5", str(d + 60), self.testpmd, *self.ceil_lcores, "--no-pci",
                        "--file-prefix", pfx, *self.tpmd_mem, "--vdev", vdev, "--", "--burst=%d" % self.burst,
                        "--forward-mode=rxonly", "--auto-start", "--stats-period", "1"], log)
        sampler = self.sampler(p)
        got, _ = self.tele_samples(pfx, "ipackets", log)
        if p.poll() is None:
            p.terminate()
        rc = self.finish(p, sampler, log)
        common.rm_runtime(pfx)
        if rc not in (0, 130, 143):
            self.fail_run(log, "testpmd %s exited with status %d" % (name, rc))
        return self.tele_finish(log, "testpmd " + name, got, "testpmd-" + name)


def num(s: str) -> float:
    """A number as awk reads a field: its leading numeric part, else 0."""
    m = re.match(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", s)
    return float(m.group(0)) if m else 0.0


def fmt(x: float) -> str:
    """A sample as the samples files keep it."""
    return ("%.6f" % x).rstrip("0").rstrip(".") if x != int(x) else "%d" % x


def copy_samples(work: common.Work, src: str, dst: str) -> None:
    try:
        shutil.copy(work.file("all-%s.samples" % src), work.file("all-%s.samples" % dst))
    except OSError:
        pass
