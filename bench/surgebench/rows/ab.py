"""--ab REF: this surge against REF, another surge binary (the build of an
earlier commit, with its own Lua library), on the template, one-field and
1M-flow rows: runs alternate and swap order every repetition; the figure
to read is this/REF per row. No testpmd, no ceilings."""
from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List

from .. import common, stats
from . import tx

if TYPE_CHECKING:
    from ..bench import Bench

ROWS = ["plain", "flows", "flows1m"]


def run(b: "Bench") -> None:
    tx.setup(b)
    r = b.runs
    args = {p: v[1] for p, v in tx.pairs(b).items()}
    label = {"plain": "template path (udp-flood.lua)", "flows": "one varied field (--flows %d)" % b.flows,
             "flows1m": "1M flows (flows.lua)"}
    s_runs: Dict[str, List[float]] = {}
    t_runs: Dict[str, List[float]] = {}
    r_runs: Dict[str, List[str]] = {}
    common.err("bench: A/B, %d repetition(s) x %d rows, %d s measured per run: %s against %s"
               % (b.reps, len(ROWS), b.duration, r.surge, b.ab_ref))
    for rep in range(1, b.reps + 1):
        for p in ROWS:
            if rep % 2:
                s = r.surge_run(p, args[p], r.surge)
                t = r.surge_run(p, args[p], b.ab_ref)
            else:
                t = r.surge_run(p, args[p], b.ab_ref)
                s = r.surge_run(p, args[p], r.surge)
            q = stats.ratio(s, t)
            s_runs.setdefault(p, []).append(s)
            t_runs.setdefault(p, []).append(t)
            r_runs.setdefault(p, []).append(q)
            common.err("bench: rep %d/%d %-7s this %8.3f Mpps  ref %8.3f Mpps  ratio %s" % (rep, b.reps, p, s, t, q))
    table = [["row", "this Mpps", "ref Mpps", "this/ref", "per-rep ratios"]]
    for p in ROWS:
        s, t = stats.median(s_runs[p]), stats.median(t_runs[p])
        lo, hi = stats.spread(r_runs[p])
        table.append([label[p], "%.1f" % s, "%.1f" % t, stats.ratio(s, t), "%s-%s" % (lo, hi)])
    b.table(table)
    print("")
    print("medians of %d run(s) x %d s, alternating; %s against %s; hugepages %s; %s"
          % (b.reps, b.duration, r.surge, b.ab_ref, "yes" if b.huge else "no", common.utc_now()))
