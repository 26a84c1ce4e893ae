"""surgebench.rxab - scripts/bench-rx-ab: two surge builds' measuring
receiver, in pairs (its method: the head of scripts/bench-rx-ab)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from typing import List

from . import common, huge, stats
from .common import Fail, err


def die(msg: str) -> None:
    err("bench-rx-ab: " + msg)
    raise Fail()


def count(opt: str, v: str, least: int) -> int:
    if not (re.fullmatch(r"[0-9]+", v) and int(v) >= least):
        die("%s: want a whole number >= %d, got '%s'" % (opt, least, v))
    return int(v)


def main(argv: List[str]) -> int:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    pairs, windows, frames = 8, 7, 10000000
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--pairs", "--windows", "--frames"):
            if i + 1 >= len(argv):
                die("%s needs a number" % a)
            v = count(a, argv[i + 1], 1000 if a == "--frames" else 1)
            if a == "--pairs":
                pairs = v
            elif a == "--windows":
                windows = v
            else:
                frames = v
            i += 2
        elif a in ("-h", "--help"):
            # the head of scripts/bench-rx-ab, as it is written (lines 2-13)
            with open(os.path.join(root, "scripts/bench-rx-ab")) as f:
                print("\n".join(f.read().splitlines()[1:13]))
            return 0
        elif a.startswith("-"):
            die("unknown option '%s' (--pairs N, --windows W, --frames F)" % a)
        else:
            break
    rest = argv[i:]
    if len(rest) != 2:
        die("want two surge binaries, A and B (got %d)" % len(rest))
    a_bin, b_bin = rest
    for bin_ in rest:
        if not (os.path.isfile(bin_) and os.access(bin_, os.X_OK)):
            die("no surge binary at %s" % bin_)
    os.chdir(root)
    mem = [] if huge.free_pages() >= 256 else ["--no-huge"]
    work = tempfile.mkdtemp(prefix="bench-rx-ab.")
    prefix = "rxab-%d" % os.getpid()
    common.on_signals()
    try:
        loop = os.path.join(root, "bench/rx-loop.lua")
        pcap = os.path.join(work, "test-frames.pcap")
        # bounded: a run that hangs ends at its --duration, then at timeout
        cap = subprocess.run([a_bin, "run", "-q", *mem, "--file-prefix", prefix, "--vdev", "net_pcap0,tx_pcap=" + pcap,
                              loop, "--mode", "capture"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        if cap.returncode != 0:
            die("the test-frame capture failed: %s" % last_line(cap.stdout))

        def one(binary: str) -> float:
            """The best cycles a frame of one run."""
            r = subprocess.run(["timeout", "-k", "5", "300", binary, "run", "-q", *mem, "--file-prefix", prefix,
                                "--duration", "240", "--vdev", "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap, loop,
                                "--mode", "measure", "--cpu-windows", str(windows), "--window-frames", str(frames)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            if r.returncode != 0:
                die("%s failed: %s" % (binary, last_line(r.stdout)))
            for line in r.stdout.decode(errors="replace").splitlines():
                m = re.match(r"^rx-loop: best ([0-9.]*) cycles a frame", line)
                if m and m.group(1):
                    return float(m.group(1))
            die("%s: no figure in: %s" % (binary, last_line(r.stdout)))
            return 0.0

        print("bench-rx-ab: %d pairs, best of %d windows of %d frames each; cycles a frame (TSC), thread CPU"
              % (pairs, windows, frames))
        print("pair  A  B  B/A")
        ratios: List[str] = []
        for k in range(1, pairs + 1):
            if k % 2:
                fa = one(a_bin)
                fb = one(b_bin)
            else:
                fb = one(b_bin)
                fa = one(a_bin)
            ratios.append("%.3f" % (fb / fa))
            print("%d  %.2f  %.2f  %s" % (k, fa, fb, ratios[-1]))
        lo, hi = stats.spread(ratios)
        print("median B/A %.3f over %d pairs (range %s-%s); A = %s, B = %s"
              % (stats.median(float(x) for x in ratios), len(ratios), lo, hi, a_bin, b_bin))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)
        common.rm_runtime(prefix)


def last_line(out: bytes) -> str:
    lines = out.decode(errors="replace").splitlines()
    return lines[-1] if lines else ""


def entry(argv: List[str]) -> int:
    try:
        return main(argv)
    except Fail:
        return 1
