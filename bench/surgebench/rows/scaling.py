"""--lcores N: N TX tasks on N queues of one port (udp-flood.lua --queues
N), against the raw ceiling with N queues and testpmd txonly with N
forwarding cores; per-core and total rates."""
from __future__ import annotations

from typing import TYPE_CHECKING, List

from .. import common, stats

if TYPE_CHECKING:
    from ..bench import Bench


def run(b: "Bench") -> None:
    r, n = b.runs, b.tx
    common.err("bench: scaling, %d repetition(s), %d TX lcore(s) on %d queue(s) of one port, "
               "%d s measured per run, TSC %d Hz" % (b.reps, n, n, b.duration, b.tsc_hz))
    targs = ["--forward-mode=txonly", "--txpkts=%d" % b.size, "--nb-cores=%d" % n, "--txq=%d" % n, "--rxq=%d" % n]
    ss: List[float] = []
    ts: List[float] = []
    cs: List[float] = []
    for rep in range(1, b.reps + 1):
        s = r.surge_run("scale", ["--queues", str(n)])
        t = r.testpmd_run("scale", targs)
        c = r.ceiling_run("raw", n)
        ss.append(s)
        ts.append(t)
        cs.append(c)
        common.err("bench: rep %d/%d surge %8.3f  testpmd %8.3f  ceiling raw %8.3f Mpps" % (rep, b.reps, s, t, c))
    s, t, c = stats.median(ss), stats.median(ts), stats.median(cs)
    table = [["program", "total Mpps", "per-lcore Mpps", "cycles/pkt per lcore", "of raw ceiling"]]
    for label, v in (("surge udp-flood --queues %d" % n, s), ("testpmd txonly --nb-cores=%d" % n, t),
                     ("ceiling raw, %d queues" % n, c)):
        table.append([label, "%.1f" % v, "%.1f" % (v / n), "%.1f" % b.cyc(v / n), "%.2f" % (v / c)])
    b.table(table)
