"""surgebench.bench - scripts/bench: surge against dpdk-testpmd and the
bare-metal ceiling, in one run, on the same machine (its options and rows:
the head of scripts/bench, which runs this)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from typing import List

from . import common, huge, peers, stats
from .common import Fail, err


class Bench:
    """The options, the programs and the run's settings."""

    def __init__(self) -> None:
        self.duration, self.reps, self.flows, self.clones = 5, 3, 1024, 8
        self.burst, self.size = 32, 60          # 60 bytes without FCS: 64-byte frames on the wire
        self.markdown = False
        self.logdir = ""
        self.lcores = 0                         # 0: the four pairs; N: the scaling mode with N TX lcores
        self.nohuge = True
        self.allow_nohuge = False
        self.cpu_time = False
        self.ab_ref = ""
        self.rows = "all"
        self.root = ""
        self.tsc_hz = 0
        self.huge = True
        self.cpus = 1
        self.pktgen = ""
        self.runs: peers.Runs

    @property
    def tx(self) -> int:
        return self.lcores if self.lcores > 0 else 1

    def table(self, rows: List[List[str]]) -> None:
        # a table measured without hugepages says so on its first line
        common.table(rows, self.markdown,
                     "" if self.huge else "NOT COMPARABLE with docs/performance.md: measured without hugepages (--allow-no-huge)")

    def cyc(self, mpps: float) -> float:
        return stats.cycles_per_packet(self.tsc_hz, mpps)

    def footer(self) -> None:
        r = self.runs
        share = ""
        if self.cpu_time:
            share = ("rates per CPU-second of the TX lcores (their CPU share: median %s, min %s);"
                     % (stats.median_text(r.shares), min(r.shares, key=float)))
        print("")
        print(" ".join([
            "medians of %d run(s) x %d s; %d TX lcore(s) each; net_null0 no-rx=1;" % (self.reps, self.duration, self.tx),
            "%d-byte frames + FCS; burst %d; cycles/pkt = TSC %d Hz / pps per TX lcore;" % (self.size, self.burst, self.tsc_hz),
            "hugepages %s;" % ("yes" if self.huge else "no"),
            share,
            "%d CPUs (%s);" % (self.cpus, common.cpu_model()),
            common.utc_now()]))


def die(msg: str) -> None:
    err("bench: " + msg)
    raise Fail()


def is_uint(s: str) -> bool:
    return re.fullmatch(r"[0-9]+", s) is not None and int(s) > 0


def usage(root: str) -> None:
    with open(os.path.join(root, "scripts/bench")) as f:
        lines = f.read().splitlines()[1:]
    for line in lines:
        if not line.startswith("#"):
            break
        print(re.sub(r"^# ?", "", line))


def parse(b: Bench, argv: List[str]) -> bool:
    """The options into b; False when --help was printed."""
    opts = {"--duration": "duration", "--reps": "reps", "--flows": "flows", "--lcores": "lcores",
            "--ab": "ab", "--rows": "rows", "--logs": "logs"}
    needs = {"--duration": "--duration needs a value", "--reps": "--reps needs a value",
             "--flows": "--flows needs a value", "--lcores": "--lcores needs a value",
             "--ab": "--ab needs a surge binary", "--rows": "--rows needs tx, rx, pktgen, otg, hosts or all",
             "--logs": "--logs needs a directory"}
    val = {"duration": "5", "reps": "3", "flows": "1024", "lcores": "0", "ab": "", "rows": "all", "logs": ""}
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, v = a.partition("=")
        if name in opts and eq:
            val[opts[name]] = v
            i += 1
        elif a in opts:
            if i + 1 >= len(argv):
                die(needs[a])
            val[opts[a]] = argv[i + 1]
            i += 2
        elif a == "--no-nohuge":
            b.nohuge = False
            i += 1
        elif a == "--allow-no-huge":
            b.allow_nohuge = True
            i += 1
        elif a == "--cpu-time":
            b.cpu_time = True
            i += 1
        elif a == "--quick":
            val["duration"], val["reps"] = "2", "1"
            i += 1
        elif a == "--markdown":
            b.markdown = True
            i += 1
        elif a in ("-h", "--help"):
            usage(b.root)
            return False
        else:
            die("unknown option '%s' (try --help)" % a)
    if not is_uint(val["duration"]):
        die("--duration: want whole seconds >= 1, got '%s'" % val["duration"])
    if not is_uint(val["reps"]):
        die("--reps: want a count >= 1, got '%s'" % val["reps"])
    if not (is_uint(val["flows"]) and int(val["flows"]) <= 64512):
        die("--flows: want 1..64512, got '%s'" % val["flows"])
    if val["lcores"] != "0" and not (is_uint(val["lcores"]) and int(val["lcores"]) <= 64):
        die("--lcores: want 1..64, got '%s'" % val["lcores"])
    if val["rows"] not in ("tx", "rx", "pktgen", "otg", "hosts", "all"):
        die("--rows: want tx, rx, pktgen, otg, hosts or all, got '%s'" % val["rows"])
    b.duration, b.reps, b.flows = int(val["duration"]), int(val["reps"]), int(val["flows"])
    b.lcores, b.ab_ref, b.rows, b.logdir = int(val["lcores"]), val["ab"], val["rows"], val["logs"]
    return True


def main(argv: List[str]) -> int:
    cwd = os.getcwd()
    b = Bench()
    b.root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    surge = os.environ.get("SURGE", "")
    if surge and not surge.startswith("/"):
        surge = os.path.join(cwd, surge)          # relative to where we were called
    pktgen = os.environ.get("PKTGEN", "")
    if pktgen and not pktgen.startswith("/"):
        pktgen = os.path.join(cwd, pktgen) if "/" in pktgen else (shutil.which(pktgen) or os.path.join(cwd, pktgen))
    b.pktgen = pktgen
    os.chdir(b.root)
    if not parse(b, argv):
        return 0
    # the Pktgen-DPDK row (issue 20): a wrong PKTGEN fails here, before any run
    if b.rows == "pktgen" and not pktgen:
        die("--rows pktgen needs PKTGEN=/path/to/pktgen (docs/performance.md, \"Pktgen-DPDK\", says how to build it)")
    if pktgen:
        if not (os.path.isfile(pktgen) and os.access(pktgen, os.X_OK)):
            die("PKTGEN=%s: no executable there (docs/performance.md, \"Pktgen-DPDK\", says how to build it)" % pktgen)
        if not (b.lcores == 0 and not b.ab_ref and b.rows != "rx"):
            err("bench: PKTGEN is set but the Pktgen-DPDK row runs with the TX rows only (not --lcores, --ab or --rows rx)")
    if b.ab_ref:
        if not b.ab_ref.startswith("/"):
            b.ab_ref = os.path.join(cwd, b.ab_ref)
        if not os.access(b.ab_ref, os.X_OK):
            die("--ab: no surge binary at %s" % b.ab_ref)
    testpmd = os.environ.get("TESTPMD") or "dpdk-testpmd"
    if not shutil.which(testpmd):
        die("%s not found (Debian: apt-get install dpdk-dev)" % testpmd)
    if not shutil.which("stdbuf"):
        die("stdbuf (coreutils) not found")

    # --- surge binary -------------------------------------------------------------
    if not surge:
        surge = os.path.join(b.root, "build-bench/surge")
        err("bench: building surge (Release) in build-bench/")
        subprocess.run(["cmake", "-S", ".", "-B", "build-bench", "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF"],
                       stdout=subprocess.DEVNULL, check=False)
        r = subprocess.run(["cmake", "--build", "build-bench", "-j", str(os.cpu_count() or 1), "--target", "surge",
                            "surge-ceiling"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            for line in r.stdout.decode(errors="replace").splitlines()[-30:]:
                err(line)
            die("build failed")
    if not os.access(surge, os.X_OK):
        die("no surge binary at %s" % surge)
    ceiling = os.environ.get("CEILING") or os.path.join(os.path.dirname(surge), "surge-ceiling")
    if not os.access(ceiling, os.X_OK):
        die("no surge-ceiling at %s (cmake --build BUILD --target surge-ceiling, or set CEILING=)" % ceiling)
    script = os.path.join(b.root, "examples/udp-flood.lua")
    if not os.access(script, os.R_OK):
        die("cannot read %s" % script)

    # --- work directory and clean-up ------------------------------------------------
    work = common.Work("surge-bench.", b.logdir, ["*.log", "*.samples"])
    prefix = "surge-bench-%d" % os.getpid()
    pages = huge.Pages()
    runs = b.runs = peers.Runs(b.root, work, prefix, b.duration, b.size, b.burst, surge, ceiling, testpmd, b.cpu_time)
    common.on_signals()
    try:
        return measure(b, runs, pages, work)
    finally:
        runs.stop_bg()
        common.rm_runtime(prefix + "-*")
        pages.restore()
        work.close()


def measure(b: Bench, runs: peers.Runs, pages: huge.Pages, work: common.Work) -> int:
    # --- hugepages ------------------------------------------------------------------
    # testpmd's default pool alone takes ~340 MB; the two programs run in turn.
    if not huge.mount() and os.getuid() == 0:
        os.makedirs("/dev/hugepages", exist_ok=True)
        subprocess.run(["mount", "-t", "hugetlbfs", "nodev", "/dev/hugepages"], check=False)
    # what bench-conn's dperf peers left (a file no process holds): 1 GB each
    for f in huge.sweep("dperf-*map_*"):
        err("bench: removed a leftover hugepage file: %s" % f)
    refusal = pages.preflight("bench", 768, 1024)
    if refusal is not None:
        if not b.allow_nohuge:
            die(refusal[len("bench: "):] + "; --allow-no-huge measures without them")
        b.huge = False
        err("bench: WARNING: --allow-no-huge: %s: both programs run with --no-huge; every table is flagged"
            % refusal[len("bench: refusing to measure: "):])
    runs.huge = b.huge
    if not b.huge:
        runs.surge_mem, runs.tpmd_mem = ["--no-huge"], ["--no-huge", "-m", "2048"]

    # --- TSC frequency, from DPDK (rte_get_tsc_hz) through surge --------------------
    tsc = work.file("tsc.lua")
    with open(tsc, "w") as t:
        t.write('function master() print(("tsc_hz %d"):format(require("surge").tsc_hz())) return 0 end\n')
    with open(work.file("tsc.err"), "wb") as e:
        r = subprocess.run(["timeout", "-k", "5", "60", runs.surge, "run", "-q", *runs.surge_mem, "--vdev",
                            "net_null0,no-rx=1", tsc], stdout=subprocess.PIPE, stderr=e, stdin=subprocess.DEVNULL)
    hz = [w[1] for w in (line.split() for line in r.stdout.decode(errors="replace").splitlines())
          if len(w) > 1 and w[0] == "tsc_hz"]
    if not hz or not re.fullmatch(r"[1-9][0-9]*", hz[-1]):
        sys.stderr.write(open(work.file("tsc.err"), errors="replace").read())
        die("could not read the TSC frequency through surge")
    b.tsc_hz = int(hz[-1])

    # --- lcores -----------------------------------------------------------------------
    # lcore 0 prints stats; lcores 1..TX send. With fewer CPUs than lcores the
    # lcores share CPUs (EAL's --lcores form), which measures nothing useful.
    tx = runs.tx = b.tx
    b.cpus = os.cpu_count() or 1
    if tx + 1 <= b.cpus:
        runs.ceil_lcores, runs.surge_lcores = ["-l", "0-%d" % tx], ["--lcores", "0-%d" % tx]
    else:
        runs.ceil_lcores = ["--lcores", "(0-%d)@(0-%d)" % (tx, b.cpus - 1)]
        runs.surge_lcores = list(runs.ceil_lcores)
        err("bench: WARNING: %d lcores on %d CPUs: TX lcores share CPUs, rates are not per core" % (tx + 1, b.cpus))

    from .rows import ab, hosts, otg, pktgen, rx, scaling, tx as txrows
    if b.lcores > 0:
        scaling.run(b)
        b.footer()
        return 0
    if b.ab_ref:
        ab.run(b)
        return 0
    if b.rows == "hosts":
        hosts.run(b)     # the emulated hosts (issue 33): not in "all", a row of their own
        b.footer()
        return 0
    if b.rows in ("tx", "all"):
        txrows.run(b)
    if b.rows in ("rx", "all"):
        rx.run(b)
    if b.rows not in ("rx", "otg"):
        pktgen.run(b)
    if b.rows in ("tx", "otg", "all"):
        otg.run(b)
    b.footer()
    return 0


def entry(argv: List[str]) -> int:
    try:
        return main(argv)
    except Fail:
        return 1


