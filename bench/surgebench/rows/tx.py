"""The four pairs (surge against testpmd), each one TX lcore on net_null0
(no-rx=1), the two ceilings of bench/ceiling.c, the setter loop
(bench/setter-loop.lua) and the plain row under --no-huge."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Dict, List, Tuple

from .. import common, stats

if TYPE_CHECKING:
    from ..bench import Bench

PAIRS = ["plain", "flows", "clones", "flows1m"]


def pairs(b: "Bench") -> Dict[str, Tuple[str, List[str], List[str]]]:
    """label, surge's arguments, testpmd's, per pair."""
    n, c, size = b.flows, b.clones, b.size
    return {
        "plain": ("udp-flood vs txonly", [], ["--forward-mode=txonly", "--txpkts=%d" % size]),
        # flowgen sends tx_pkt_length - 4 bytes: its default 64 gives 60-byte frames
        "flows": ("--flows %d vs flowgen" % n, ["--flows", str(n)],
                  ["--forward-mode=flowgen", "--flowgen-flows=%d" % n]),
        "clones": ("--flows %d --clones %d vs flowgen clones=%d" % (n, c, c), ["--flows", str(n), "--clones", str(c)],
                   ["--forward-mode=flowgen", "--flowgen-flows=%d" % n, "--flowgen-clones=%d" % c]),
        # a 1M-flow definition (65536 IPv4 sources x 16 UDP ports, both checksums
        # kept valid) compiled by surge.flow; flowgen's flow count tops out below 65536
        "flows1m": ("flows.lua 1M flows vs flowgen", ["--flows-src", "65536", "--flows-port", "16"],
                    ["--forward-mode=flowgen", "--flowgen-flows=%d" % n]),
    }


def setup(b: "Bench") -> None:
    r = b.runs
    r.script_of["flows1m"] = os.path.join(b.root, "examples/flows.lua")
    # a reference row: the flows row's one field written by a hand loop calling
    # the checked udp.set_sport with a plain Lua counter (bench/setter-loop.lua)
    r.script_of["setter"] = os.path.join(b.root, "bench/setter-loop.lua")
    r.nohuge_of["nohuge"] = True


def run(b: "Bench") -> None:
    setup(b)
    r = b.runs
    nohuge = b.nohuge and b.huge        # without hugepages everything runs --no-huge already
    defs = pairs(b)
    s_runs: Dict[str, List[float]] = {}
    t_runs: Dict[str, List[float]] = {}
    r_runs: Dict[str, List[str]] = {}
    common.err("bench: %d repetition(s) x %d pairs + 2 ceilings + the setter loop%s, %d s measured per run, "
               "TSC %d Hz, hugepages %s" % (b.reps, len(PAIRS), " + --no-huge" if nohuge else "", b.duration,
                                            b.tsc_hz, "yes" if b.huge else "NO"))
    for rep in range(1, b.reps + 1):
        for p in PAIRS:
            _, sa, ta = defs[p]
            if rep % 2:
                s = r.surge_run(p, sa)
                t = r.testpmd_run(p, ta)
            else:
                t = r.testpmd_run(p, ta)
                s = r.surge_run(p, sa)
            q = stats.ratio(s, t)
            s_runs.setdefault(p, []).append(s)
            t_runs.setdefault(p, []).append(t)
            r_runs.setdefault(p, []).append(q)
            common.err("bench: rep %d/%d %-7s surge %8.3f Mpps  testpmd %8.3f Mpps  ratio %s" % (rep, b.reps, p, s, t, q))
        for m in ("alloc", "raw"):
            v = r.ceiling_run(m, 1)
            s_runs.setdefault("ceil-" + m, []).append(v)
            common.err("bench: rep %d/%d ceiling %-5s %8.3f Mpps" % (rep, b.reps, m, v))
        v = r.surge_run("setter", ["--flows", str(b.flows)])
        s_runs.setdefault("setter", []).append(v)
        common.err("bench: rep %d/%d surge setter loop %8.3f Mpps" % (rep, b.reps, v))
        if nohuge:
            v = r.surge_run("nohuge", [])
            s_runs.setdefault("nohuge", []).append(v)
            common.err("bench: rep %d/%d surge plain --no-huge %8.3f Mpps" % (rep, b.reps, v))
    ca, cr = stats.median(s_runs["ceil-alloc"]), stats.median(s_runs["ceil-raw"])

    # The best-second column divides surge's best per-second sample by
    # testpmd's, over all repetitions: interference from other tenants only
    # ever slows a run down, so on a noisy machine the best second is the
    # closest to each program's undisturbed rate (the reasoning behind
    # timeit's minimum).
    table = [["pair", "surge Mpps", "testpmd Mpps", "surge cycles/pkt", "testpmd cycles/pkt", "surge/testpmd",
              "per-rep ratios", "best-second ratio", "of alloc ceiling", "of raw ceiling"]]
    for p in PAIRS:
        s, t = stats.median(s_runs[p]), stats.median(t_runs[p])
        lo, hi = stats.spread(r_runs[p])
        sb, tb = stats.best(r.samples["surge-" + p]), stats.best(r.samples["testpmd-" + p])
        table.append([defs[p][0], "%.1f" % s, "%.1f" % t, "%.1f" % b.cyc(s), "%.1f" % b.cyc(t), "%.2f" % (s / t),
                      "%.2f-%.2f" % (float(lo), float(hi)), "%.2f (%.1f/%.1f)" % (sb / tb, sb, tb),
                      "%.2f" % (s / ca), "%.2f" % (s / cr)])
    b.table(table)

    # The references: the ceilings themselves, the flows row's field written by a
    # hand loop with the checked setter, and the template path without hugepages.
    se, fl, tp = stats.median(s_runs["setter"]), stats.median(s_runs["flows"]), stats.median(t_runs["plain"])
    ref = [["reference", "Mpps", "cycles/pkt", "ratio"],
           ["ceiling alloc (alloc_bulk + tx_burst)", "%.1f" % ca, "%.1f" % b.cyc(ca), "-"],
           ["ceiling raw (mempool get, no reset)", "%.1f" % cr, "%.1f" % b.cyc(cr), "%.2f of alloc" % (cr / ca)],
           ["surge --flows %d by a udp.set_sport loop" % b.flows, "%.1f" % se, "%.1f" % b.cyc(se),
            "%.2f of surge.flow, %.2fx txonly" % (se / fl, se / tp)]]
    if nohuge:
        nh, pl = stats.median(s_runs["nohuge"]), stats.median(s_runs["plain"])
        ref.append(["surge plain --no-huge", "%.1f" % nh, "%.1f" % b.cyc(nh), "%.2f of hugepages" % (nh / pl)])
    b.table(ref)
