"""The Pktgen-DPDK row (issue 20): Pktgen-DPDK's constant frame against
surge's template path and its one varied field (--flows, UDP checksum
kept), all three measured alike from outside: telemetry's opackets,
DURATION one-second samples after 1.5 s of traffic. --from-traffic:
Pktgen sets up its ports about 1.5 s after its telemetry socket answers
and sends only once its command file has run, so a warm-up timed from the
socket's first answer would measure its start."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Dict, List, Sequence

from .. import common, cpu, stats

if TYPE_CHECKING:
    from ..bench import Bench


def run(b: "Bench") -> None:
    r = b.runs
    if not b.pktgen:
        common.err("bench: PKTGEN not set: no Pktgen-DPDK row (docs/performance.md, \"Pktgen-DPDK\", says how to build it)")
        return
    # UDP, 64 bytes counting the FCS (Pktgen's sizes do), bursts of BURST,
    # and tx_cycles 1 (its debug knob: TSC cycles between bursts): Pktgen
    # paces each port at a share of its link speed, and net_null says 10G
    # (14.88 Mpps at 64 B); one cycle sends as fast as the lcore can.
    pkt = r.work.file("pktgen.pkt")
    with open(pkt, "w") as f:
        f.write("set 0 proto udp\nset 0 size %d\nset 0 burst %d\nset 0 tx_cycles 1\nstart 0\n" % (b.size + 4, b.burst))

    def pg_run(name: str, log: str, pfx: str, stop: bool, cmd: Sequence[str]) -> float:
        p = r.start(["timeout", "-k", "5", str(b.duration + 60), *cmd], log, cwd=r.work.path)
        # --cpu-time: the TX lcore's CPU share over the samples' own window
        # (--cpu-of), not a fixed one from the launch: Pktgen starts sending
        # 1.5-3 s after its launch, and a window from the launch holds its set-up
        extra: List[str] = []
        if b.cpu_time:
            for _ in range(100):
                kid = cpu.child_of(p.pid)
                if kid:
                    extra = ["--cpu-of", str(kid)]
                    break
                time.sleep(0.05)
        got, out = r.tele_samples(pfx, "opackets", log, ["--from-traffic", *extra], log + ".tele.out")
        if b.cpu_time:
            with open(log + ".cpu", "w") as f:
                f.writelines(line[len("cpu_share="):] + "\n" for line in out.splitlines() if line.startswith("cpu_share="))
        # Pktgen runs until stopped (SIGTERM: 143); surge until its --duration
        if stop and p.poll() is None:
            p.terminate()
        rc = r.finish(p, None, log)
        common.rm_runtime(pfx)
        if not (rc == 0 or (stop and rc == 143)):
            r.fail_run(log, "%s exited with status %d" % (name, rc))
        if not stop and "no leak" not in open(log, errors="replace").read():
            r.fail_run(log, "%s: no clean pool check at exit" % name)
        return r.tele_finish(log, name, got, name)

    def side(which: str) -> float:
        name = "pktgen" if which == "pktgen" else "pg-surge-" + which
        log = r.log(name)
        pfx = "%s-%d" % (r.prefix, r.run)
        if which == "pktgen":
            # -m 1.0: lcore 1 serves port 0 (its RX queue, empty on no-rx=1, and
            # TX); lcore 0 runs the CLI and screen. --no-huge: Pktgen sends the
            # same pre-built mbufs again and again, and ran as fast without
            # hugepages (docs/performance.md); its pools want ~1.2 GB of them.
            return pg_run(name, log, pfx, True, [b.pktgen, *r.ceil_lcores, "-n", "1", "--no-pci", "--file-prefix", pfx,
                                                 "--no-huge", "-m", "2048", "--vdev", "net_null0,no-rx=1", "--",
                                                 "-m", "1.0", "-f", pkt])
        extra = [] if which == "plain" else ["--flows", str(b.flows)]
        return pg_run(name, log, pfx, False, [r.surge, "run", *r.surge_mem, *r.surge_lcores, "--file-prefix", pfx,
                                              "--vdev", "net_null0,no-rx=1", "--duration", str(b.duration + 5),
                                              r.script, "--size", str(b.size), "--burst", str(b.burst), *extra])

    runs: Dict[str, List[float]] = {}
    ratios: Dict[str, List[str]] = {}
    common.err("bench: %d repetition(s) x Pktgen-DPDK (%s), surge template and --flows %d, "
               "%d s measured per run from telemetry" % (b.reps, b.pktgen, b.flows, b.duration))
    for rep in range(1, b.reps + 1):
        order = ["plain", "flows", "pktgen"] if rep % 2 else ["pktgen", "flows", "plain"]
        got: Dict[str, float] = {}
        for s in order:
            got[s] = side(s)
            runs.setdefault(s, []).append(got[s])
        for s in ("plain", "flows"):
            ratios.setdefault(s, []).append(stats.ratio(got[s], got["pktgen"]))
        common.err("bench: rep %d/%d pktgen %8.3f Mpps  surge template %8.3f  --flows %8.3f  ratios %s %s"
                   % (rep, b.reps, got["pktgen"], got["plain"], got["flows"], stats.ratio(got["plain"], got["pktgen"]),
                      stats.ratio(got["flows"], got["pktgen"])))
    p = stats.median(runs["pktgen"])
    pb = stats.best(r.samples["pktgen"])
    table = [["row (from telemetry)", "Mpps", "cycles/pkt", "surge/Pktgen", "per-rep ratios", "best-second ratio", "target"],
             ["Pktgen-DPDK 64 B constant frame (-m 1.0, tx_cycles 1)", "%.1f" % p, "%.1f" % b.cyc(p), "-", "-", "-", "-"]]
    for s in ("plain", "flows"):
        v = stats.median(runs[s])
        lo, hi = stats.spread(ratios[s])
        sb = stats.best(r.samples["pg-surge-" + s])
        label = ("surge template path (udp-flood.lua)" if s == "plain"
                 else "surge one varied field, checksum kept (--flows %d)" % b.flows)
        target = "-" if s == "plain" else ">= 1.0 %s" % stats.reached(v / p, 1.0)
        table.append([label, "%.1f" % v, "%.1f" % b.cyc(v), "%.2f" % (v / p), "%.2f-%.2f" % (float(lo), float(hi)),
                      "%.2f (%.1f/%.1f)" % (sb / pb, sb, pb), target])
    b.table(table)
