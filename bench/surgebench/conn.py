"""surgebench.conn - scripts/bench-conn: surge's TCP connection engine
against dperf, side by side (its rows and method: the head of
scripts/bench-conn, which runs this)."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Sequence

from . import common, huge
from .common import Fail, err
from .rows import conn as rows

S_MAC, C_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
S_IP, C_IP = "10.9.0.1", "10.9.0.2"


def usage(root: str) -> None:
    with open(os.path.join(root, "scripts/bench-conn")) as f:
        lines = f.read().splitlines()[1:]
    for line in lines:
        if not line.startswith("#"):
            break
        print(re.sub(r"^# ?", "", line))


class Conn:
    def __init__(self, root: str) -> None:
        self.root = root
        self.duration = 5
        self.rows = "tcp,http,ka,cc,kernel"
        self.dperf_cps = "2m"        # dperf's open rate target (it holds what it can; 2m: its 4M sockets allow 2.09M)
        self.surge_cc = "4096"       # surge's client: connections in flight at once (unpaced; 16384 overflows the memif rings)
        self.surge_cc_held = 4000000  # row cc: connections surge's client holds (64 source addresses), as dperf's cc=4m
        self.surge_cc_rate = 600000  # row cc: surge's opens per second (dperf's: 500k after its 10 s ramp)
        self.socket_mem = 1024       # dperf's socket_mem (MB of hugepages) per process
        self.logs = ""
        self.markdown = False
        self.surge = ""
        self.dperf = ""
        self.id = os.getpid()
        self.tmp = ""
        self.ns = "dperf-bc-%d" % self.id
        self.dperf_pids: List[int] = []
        self.children: List["subprocess.Popen[bytes]"] = []
        self.pages = huge.Pages()

    @property
    def memif(self) -> str:
        return "socket=%s,socket-abstract=no,rsize=14" % os.path.join(self.tmp, "memif.sock")

    def f(self, name: str) -> str:
        return os.path.join(self.tmp, name)

    # --- hugepages: the peers' leftovers, the pre-flight --------------------------------
    def sweep_peers(self) -> None:
        """The hugepage files dperf processes left: named by their PID
        ("dperf-PID" here, plain "PID" upstream), this run's and any earlier
        run's no process holds; and this run's peers' runtime folders."""
        for line in huge.sweep("dperf-*map_*", *["%dmap_*" % p for p in self.dperf_pids]):
            err("bench-conn: removed a peer's leftover hugepage file: %s" % line)
        for p in self.dperf_pids:
            common.rm_runtime("dperf-%d" % p)
            common.rm_runtime("%d" % p)

    def preflight(self) -> None:
        """Before a pair: the peers' leftovers removed, then the hugepages it measures with."""
        self.sweep_peers()
        refusal = self.pages.preflight("bench-conn", 2 * self.socket_mem, 1536)
        if refusal is not None:
            err(refusal)
            raise Fail()

    def cleanup(self) -> None:
        # the children not reaped yet
        for p in self.children:
            if p.returncode is None:
                common.stop_proc(p)
        subprocess.run(["ip", "netns", "del", self.ns], stderr=subprocess.DEVNULL, check=False)
        subprocess.run(["ip", "link", "del", "dpbc0"], stderr=subprocess.DEVNULL, check=False)
        self.sweep_peers()
        for k in "sck":
            common.rm_runtime("bc-%s-%d" % (k, self.id))
        self.pages.restore()           # after the files went: pages a file holds cannot go
        if self.logs:
            try:
                os.makedirs(self.logs, exist_ok=True)
                for n in sorted(os.listdir(self.tmp)):
                    if n.endswith((".log", ".conf")):
                        shutil.copy(self.f(n), self.logs)
            except OSError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def spawn(self, cmd: Sequence[str], log: str) -> "subprocess.Popen[bytes]":
        with open(log, "wb") as out:
            p = subprocess.Popen(list(cmd), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.children.append(p)
        return p

    def telemetry(self, sock: str, start: str, window: int, pids: Sequence[int], log: str) -> None:
        with open(log, "wb") as out:
            subprocess.run(["python3", os.path.join(self.root, "bench/conn-telemetry.py"), sock, start, str(window),
                            *[str(p) for p in pids]], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    # --- the pairs ------------------------------------------------------------------------
    def surge_pair(self, row: str, sargs: Sequence[str], cargs: Sequence[str]) -> int:
        """The server, then the client for 2 + DURATION + 1 s, telemetry on the client's port."""
        self.preflight()
        rm(self.f("memif.sock"))
        d = self.duration
        script = os.path.join(self.root, "bench/conn.lua")
        sp = self.spawn(["taskset", "-c", "1", self.surge, "run", "--lcores", "0@1,1@1", "--file-prefix",
                         "bc-s-%d" % self.id, "--duration", str(d + 8), "--stats-interval", "1", "--vdev",
                         "net_memif0,role=server,id=0,%s,mac=%s" % (self.memif, S_MAC), script, "--role", "server",
                         "--addr", S_IP, "--mac", S_MAC, *sargs], self.f("surge-%s-server.log" % row))
        time.sleep(1.5)
        cp = self.spawn(["taskset", "-c", "0", self.surge, "run", "--lcores", "0@0,1@0", "--file-prefix",
                         "bc-c-%d" % self.id, "--duration", str(d + 3), "--stats-interval", "1", "--vdev",
                         "net_memif0,role=client,id=0,%s,mac=%s" % (self.memif, C_MAC), script, "--role", "client",
                         "--addr", C_IP, "--peer", S_IP, "--mac", C_MAC, "--peer-mac", S_MAC, *cargs],
                        self.f("surge-%s-client.log" % row))
        self.telemetry("/var/run/dpdk/bc-c-%d/dpdk_telemetry.v2" % self.id, "2", d, [sp.pid, cp.pid],
                       self.f("surge-%s-tel.log" % row))
        rc = common.status(cp.wait())
        common.stop_proc(sp, signal.SIGINT)
        if rc != 0:
            err("bench-conn: surge's client failed (%s), see its log:" % row)
            for line in common.tail(self.f("surge-%s-client.log" % row), 5):
                err(line)
        # surge runs without hugepages when it finds too few (core/run/eal.c):
        # then its figures are not the ones to set against dperf's
        nohuge = [line for n in ("server", "client") for line in read_lines(self.f("surge-%s-%s.log" % (row, n)))
                  if "running with --no-huge" in line]
        if nohuge:
            err("bench-conn: refusing to measure: surge's %s pair ran without hugepages: %s" % (row, nohuge[0]))
            raise Fail()
        return rc

    def dperf_conf(self, role: str, out: str, kvs: Sequence[str]) -> None:
        """A config from the shared one, edited."""
        lines = ["mode " + role, "cpu %d" % (1 if role == "server" else 0), "socket_mem %d" % self.socket_mem,
                 "tx_burst 32"]
        lines += ["%s %s" % (kv.split("=", 1)[0], kv.split("=", 1)[-1]) for kv in kvs]
        if role == "server":
            lines.append("port net_memif0,role=server,id=0,%s,mac=%s %s %s %s" % (self.memif, S_MAC, S_IP, C_IP, C_MAC))
        else:
            lines.append("port net_memif0,role=client,id=0,%s,mac=%s %s %s %s" % (self.memif, C_MAC, C_IP, S_IP, S_MAC))
        lines += ["client %s 64" % C_IP, "server %s 1" % S_IP, "listen 80 1"]
        with open(out, "w") as f:
            f.write("\n".join(lines) + "\n")

    def dperf_pair(self, row: str, srv: str, cli: str) -> int:
        """Wait 1 s, ramp 10 s, then the window; telemetry on the client's port from second 12."""
        d = self.duration
        sconf, cconf = self.f("dperf-%s-server.conf" % row), self.f("dperf-%s-client.conf" % row)
        self.dperf_conf("server", sconf, ["duration=%ds" % (d + 30), *srv.split()])
        self.dperf_conf("client", cconf, ["duration=%ds" % (d + 2), "wait=1", "slow_start=10", "launch_num=10",
                                          *cli.split()])
        self.preflight()
        rm(self.f("memif.sock"))
        sp = self.spawn([self.dperf, "-c", sconf], self.f("dperf-%s-server.log" % row))
        self.dperf_pids.append(sp.pid)
        time.sleep(3)
        cp = self.spawn([self.dperf, "-c", cconf], self.f("dperf-%s-client.log" % row))
        self.dperf_pids.append(cp.pid)
        self.telemetry("/var/run/dpdk/dperf-%d/dpdk_telemetry.v2" % cp.pid, "12.5", d, [sp.pid, cp.pid],
                       self.f("dperf-%s-tel.log" % row))
        rc = common.status(cp.wait())
        common.stop_proc(sp, signal.SIGINT)
        self.sweep_peers()          # the pair's hugepage files: the next pair's memory
        if rc != 0:
            err("bench-conn: dperf's client failed (%s), see its log:" % row)
            for line in common.tail(self.f("dperf-%s-client.log" % row), 5):
                err(line)
        return rc

    def kernel(self) -> int:
        p = self.spawn(["bash", os.path.join(self.root, "bench/conn-kernel.sh"), self.tmp, self.ns, self.surge,
                        str(self.duration), str(self.id)], self.f("kernel-setup.log"))
        rc = common.status(p.wait())
        for line in read_lines(self.f("kernel-setup.log")):
            err(line)
        return rc


def rm(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def read_lines(path: str) -> List[str]:
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def bad(msg: str) -> int:
    err("bench-conn: " + msg)
    return 2


def main(argv: List[str]) -> int:
    cwd = os.getcwd()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    c = Conn(root)
    surge, dperf = os.environ.get("SURGE", ""), os.environ.get("DPERF", "")
    surge = os.path.join(cwd, surge) if surge and not surge.startswith("/") else surge
    dperf = os.path.join(cwd, dperf) if dperf and not dperf.startswith("/") else dperf
    os.chdir(root)
    vals: Dict[str, str] = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--duration", "--rows", "--dperf-cps", "--surge-cc", "--socket-mem", "--logs"):
            if i + 1 >= len(argv) or argv[i + 1] == "":
                return bad("%s needs a value" % a)
            vals[a] = argv[i + 1]
            i += 2
        elif a == "--markdown":
            c.markdown = True
            i += 1
        elif a in ("-h", "--help"):
            usage(root)
            return 2
        else:
            return bad("unknown option '%s' (try --help)" % a)
    d = vals.get("--duration", "5")
    if not re.fullmatch(r"[0-9]+", d):
        return bad("--duration %s: whole seconds" % d)
    sm = vals.get("--socket-mem", "1024")
    if not re.fullmatch(r"[0-9]+", sm) or sm == "0":
        return bad("--socket-mem %s: MB, a whole number above 0" % sm)
    c.duration, c.socket_mem = int(d), int(sm)
    c.rows = vals.get("--rows", c.rows)
    c.dperf_cps = vals.get("--dperf-cps", c.dperf_cps)
    c.surge_cc = vals.get("--surge-cc", c.surge_cc)
    c.logs = vals.get("--logs", "")
    for r in c.rows.replace(",", " ").split():
        if r not in ("tcp", "http", "ka", "cc", "kernel"):
            return bad("--rows: '%s' is not tcp, http, ka, cc or kernel" % r)
    if not dperf:
        print("bench-conn: skipped: set DPERF=/path/to/dperf (built as ../shared/peers/dperf/README.md says)")
        return 77
    if not os.access(dperf, os.X_OK):
        err("bench-conn: DPERF=%s is not an executable" % dperf)
        return 1
    c.dperf = dperf
    c.surge = surge or os.path.join(root, "build/surge")
    if not os.access(c.surge, os.X_OK):
        err("bench-conn: %s is not built (cmake --build build, or SURGE=...)" % c.surge)
        return 1
    if (os.cpu_count() or 1) < 2:
        err("bench-conn: needs 2 CPUs")
        return 1
    c.tmp = tempfile.mkdtemp(prefix="bench-conn.")
    common.on_signals()
    try:
        c.preflight()
        out = rows.run(c)
        table(out, c.markdown)
        return 0
    finally:
        c.cleanup()


def table(out: List[str], markdown: bool) -> None:
    """The rows, each "ROW UNIT SURGE DPERF RATIO outside..." split on white space."""
    if markdown:
        print("| row | unit | surge | dperf | surge/dperf | outside (telemetry) |")
        print("|---|---|---:|---:|---:|---|")
    else:
        print("%-5s %-14s %12s %12s %8s  %s" % ("row", "unit", "surge", "dperf", "ratio", "outside (telemetry)"))
    for r in out:
        w = r.split()
        w += [""] * (5 - len(w))
        rest = " ".join(w[5:])
        if markdown:
            print("| %s | %s | %s | %s | %s | %s |" % (w[0], w[1], w[2], w[3], w[4], rest))
        else:
            print("%-5s %-14s %12s %12s %8s  %s" % (w[0], w[1], w[2], w[3], w[4], rest))
    sys.stdout.flush()


def entry(argv: List[str]) -> int:
    try:
        return main(argv)
    except Fail:
        return 1


