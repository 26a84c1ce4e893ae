"""The OTG row (issue 32 item 7): a flow set through `surge otg` (snappi's
config from bench/otg-flow.py: 60-byte UDP frames, the source port
incremented over FLOWS values, continuous, at 1e9 pps, the pacer's highest:
no rate a queue reaches) against the same flow from a Lua script
(examples/udp-flood.lua --flows FLOWS --rate 1gpps: the same rate through
the same pacer, since an OTG flow always has one), each one TX lcore on
net_null0 (no-rx=1: a port that receives nothing on both sides; the OTG
task still polls it, the script does not), both measured alike from
outside: telemetry's opackets, DURATION one-second samples after 1.5 s of
traffic. The OTG side
is driven by Debian's /usr/bin/python3 with snappi from ../shared/peers/otg
(OTG_PEERS= another folder); without it the row is skipped with a line."""
from __future__ import annotations

import os
import random
import subprocess
from typing import TYPE_CHECKING, Dict, List

from .. import common, stats

if TYPE_CHECKING:
    from ..bench import Bench


RATE = "1gpps"    # bench/otg-flow.py's rate.pps (10 ** 9)


def peers_dir(b: "Bench") -> str:
    return os.environ.get("OTG_PEERS") or os.path.join(os.path.dirname(b.root), "shared/peers/otg")


def run(b: "Bench") -> None:
    r = b.runs
    peers = peers_dir(b)
    if not os.path.isdir(os.path.join(peers, "snappi")):
        common.err("bench: no snappi at %s (OTG_PEERS=): no OTG row" % peers)
        return

    def side(which: str) -> float:
        log = r.log("otg-" + which)
        pfx = "%s-%d" % (r.prefix, r.run)
        stop = which == "otg"
        if which == "lua":
            cmd = [r.surge, "run", *r.surge_mem, *r.surge_lcores, "--file-prefix", pfx, "--vdev", "net_null0,no-rx=1",
                   "--duration", str(b.duration + 5), r.script, "--size", str(b.size), "--burst", str(b.burst),
                   "--flows", str(b.flows), "--rate", RATE]
        else:
            listen = "127.0.0.1:%d" % random.randint(20000, 40000)
            cmd = [r.surge, "otg", *r.surge_mem, *r.surge_lcores, "--file-prefix", pfx, "--vdev", "net_null0,no-rx=1",
                   "--http", "--listen", listen]
        # --foreground: timeout passes our SIGTERM to surge alone; without it
        # timeout also signals its process group, so surge got a second
        # SIGTERM (the default action: killed before its summary and pool
        # check) in some runs
        p = r.start(["timeout", "--foreground", "-k", "5", str(b.duration + 60), *cmd], log)
        # --cpu-time: the TX thread's share of a CPU from 1.5 s after its traffic began (the script's
        # task starts at once; the server's when the driver below has started it)
        sampler = r.sampler(p) if which == "lua" else None
        if which == "otg":
            env = dict(os.environ, PYTHONPATH=peers)
            with open(log + ".driver", "wb") as out:
                d = subprocess.run(["/usr/bin/python3", os.path.join(b.root, "bench/otg-flow.py"), "http://" + listen,
                                    "net_null0", str(b.size), str(b.flows), "--wait"], env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
            if d.returncode != 0:
                p.terminate()
                r.finish(p, None, log)
                common.rm_runtime(pfx)
                r.fail_run(log + ".driver", "bench/otg-flow.py exited with status %d" % d.returncode)
            sampler = r.sampler(p)
        got, _ = r.tele_samples(pfx, "opackets", log, ["--from-traffic"])
        if stop and p.poll() is None:
            p.terminate()            # surge otg serves until SIGTERM: traffic stopped, pools checked, exit 0
        rc = r.finish(p, sampler, log)
        common.rm_runtime(pfx)
        # the SIGTERM went to timeout(1), which passes it on (and may exit 143 itself)
        if not (rc == 0 or (stop and rc == 143)):
            r.fail_run(log, "surge %s exited with status %d" % (which, rc))
        if "no leak" not in open(log, errors="replace").read():
            r.fail_run(log, "surge %s: no clean pool check at exit" % which)
        return r.tele_finish(log, "surge " + which, got, "otg-" + which)

    runs: Dict[str, List[float]] = {}
    ratios: List[str] = []
    common.err("bench: %d repetition(s) x the OTG row (a flow through surge otg vs udp-flood.lua --flows %d "
               "--rate %s), %d s measured per run from telemetry" % (b.reps, b.flows, RATE, b.duration))
    for rep in range(1, b.reps + 1):
        got: Dict[str, float] = {}
        for s in (["otg", "lua"] if rep % 2 else ["lua", "otg"]):
            got[s] = side(s)
            runs.setdefault(s, []).append(got[s])
        ratios.append(stats.ratio(got["otg"], got["lua"]))
        common.err("bench: rep %d/%d otg %8.3f Mpps  lua %8.3f  ratio %s" % (rep, b.reps, got["otg"], got["lua"],
                                                                         ratios[-1]))
    o, lu = stats.median(runs["otg"]), stats.median(runs["lua"])
    lo, hi = stats.spread(ratios)
    ob, lb = stats.best(r.samples["otg-otg"]), stats.best(r.samples["otg-lua"])
    b.table([["row (from telemetry)", "Mpps", "cycles/pkt", "otg/lua", "per-rep ratios", "best-second ratio", "target"],
             ["Lua script: udp-flood.lua --flows %d --rate %s" % (b.flows, RATE), "%.1f" % lu, "%.1f" % b.cyc(lu), "-", "-", "-", "-"],
             ["OTG flow (snappi, src port increment x %d, 1e9 pps)" % b.flows, "%.1f" % o, "%.1f" % b.cyc(o),
              "%.2f" % (o / lu), "%s-%s" % (lo, hi), "%.2f (%.1f/%.1f)" % (ob / lb, ob, lb),
              ">= 0.95 %s" % stats.reached(o / lu, 0.95)]])
