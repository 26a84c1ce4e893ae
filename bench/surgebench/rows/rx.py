"""The RX rows and several queues (issue 20), measured from outside: DPDK
telemetry's port counters (ipackets; opackets for the queues row), sampled
every second of the DURATION seconds that follow 1.5 s of warm-up
(bench/telemetry-rate.py, CLOCK_MONOTONIC_RAW)."""
from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING, Dict, List

from .. import common, peers, stats

if TYPE_CHECKING:
    from ..bench import Bench

ROWS = ["rxbare", "rxmeasure", "mq"]
LABEL = {"rxbare": "RX q:recv + free vs testpmd rxonly (net_null0)",
         "rxmeasure": "measuring receiver vs testpmd rxonly (net_pcap, 512 test frames)",
         "mq": "one task, 4 TX queues vs 1 queue (net_null0,no-rx=1)"}
TARGET = {"rxbare": "1.0", "rxmeasure": "0.7", "mq": "0.95"}


def run(b: "Bench") -> None:
    r = b.runs
    rxloop = os.path.join(b.root, "bench/rx-loop.lua")
    mqloop = os.path.join(b.root, "bench/mq-loop.lua")
    pcap = r.work.file("test-frames.pcap")
    # surge's own test frames: a surge.dut trial of 512 64-byte frames (64
    # flows, a latency probe in one in 8) into a capture
    cap = r.work.file("capture.log")
    with open(cap, "wb") as f:
        rc = subprocess.run(["timeout", "-k", "5", "60", r.surge, "run", *r.surge_mem, "--vdev",
                             "net_pcap0,tx_pcap=" + pcap, rxloop, "--mode", "capture"],
                            stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode
    if rc != 0:
        r.fail_run(cap, "the test-frame capture failed")
    rx_pcap = "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap
    sb = ["--size", str(b.size), "--burst", str(b.burst)]

    def side(row: str, which: str) -> float:
        if row == "rxbare":
            if which == "surge":
                return r.rx_surge("rxbare", "ipackets", "net_null0", rxloop, ["--mode", "bare", "--burst", str(b.burst)])
            return r.rx_testpmd("rxbare", "net_null0")
        if row == "rxmeasure":
            if which == "surge":
                return r.rx_surge("rxmeasure", "ipackets", rx_pcap, rxloop, ["--mode", "measure"])
            return r.rx_testpmd("rxmeasure", rx_pcap)
        if which == "surge":
            return r.rx_surge("mq", "opackets", "net_null0,no-rx=1", mqloop, ["--queues", "4", *sb])
        v = r.rx_surge("mq1", "opackets", "net_null0,no-rx=1", mqloop, ["--queues", "1", *sb])
        r.samples["testpmd-mq"] = list(r.samples["surge-mq1"])
        peers.copy_samples(r.work, "surge-mq1", "testpmd-mq")
        return v

    s_runs: Dict[str, List[float]] = {}
    t_runs: Dict[str, List[float]] = {}
    r_runs: Dict[str, List[str]] = {}
    common.err("bench: %d repetition(s) x %d RX rows, %d s measured per run from telemetry" % (b.reps, len(ROWS), b.duration))
    for rep in range(1, b.reps + 1):
        for p in ROWS:
            if rep % 2:
                s = side(p, "surge")
                t = side(p, "ref")
            else:
                t = side(p, "ref")
                s = side(p, "surge")
            q = stats.ratio(s, t)
            s_runs.setdefault(p, []).append(s)
            t_runs.setdefault(p, []).append(t)
            r_runs.setdefault(p, []).append(q)
            common.err("bench: rep %d/%d %-9s surge %8.3f Mpps  reference %8.3f Mpps  ratio %s" % (rep, b.reps, p, s, t, q))
    table = [["row", "surge Mpps", "reference Mpps", "surge cycles/pkt", "reference cycles/pkt", "surge/reference",
              "per-rep ratios", "best-second ratio", "target"]]
    for p in ROWS:
        s, t = stats.median(s_runs[p]), stats.median(t_runs[p])
        lo, hi = stats.spread(r_runs[p])
        sbest, tbest = stats.best(r.samples["surge-" + p]), stats.best(r.samples["testpmd-" + p])
        table.append([LABEL[p], "%.1f" % s, "%.1f" % t, "%.1f" % b.cyc(s), "%.1f" % b.cyc(t), "%.2f" % (s / t),
                      "%.2f-%.2f" % (float(lo), float(hi)), "%.2f (%.1f/%.1f)" % (sbest / tbest, sbest, tbest),
                      ">= %s %s" % (TARGET[p], stats.reached(s / t, float(TARGET[p])))])
    b.table(table)
