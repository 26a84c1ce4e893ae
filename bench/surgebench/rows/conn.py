"""The rows of scripts/bench-conn: tcp, http, ka, cc (surge's pair against
dperf's) and kernel (nginx, ab and wrk, for scale); each rate by the tool
itself and from outside (DPDK telemetry, CPU-seconds of the pair)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, List, Optional

from .. import common
from ..common import Fail
from ..peers import num

if TYPE_CHECKING:
    from ..conn import Conn

STAMP = re.compile(r"^\[ *([0-9.]+)")
NUMERIC = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def is_num(s: str) -> bool:
    return NUMERIC.match(s) is not None


def surge_stat(log: str, name: str, t0: float, t1: float, gauge: bool = False) -> str:
    """NAME's rate between the stats lines at T0 and T1 s (gauge: its value at T1)."""
    t = 0.0
    v: Optional[str] = None
    a = b = None
    ta = tb = 0.0
    for line in common.tail(log, 10 ** 9):
        if re.match(r"^\[ *[0-9.]+s\]", line):
            m = STAMP.match(line)
            t = float(m.group(1)) if m else 0.0
        if "counters:" in line:
            f = [x for x in re.split(r"[ ,]+", line)]
            for i in range(len(f) - 1):
                if f[i] == name:
                    v = f[i + 1]
            if a is None and v is not None and t >= t0 - 0.2:
                a, ta = v, t
            if b is None and v is not None and t >= t1 - 0.2:
                b, tb = v, t
    if a is None or b is None:
        return "nan"
    if gauge:
        return "%.0f" % num(b)
    return "%.0f" % ((num(b) - num(a)) / (tb - ta)) if tb != ta else "nan"


def dperf_stat(log: str, field: str, first: int, n: int, mode: str = "mean") -> str:
    """The mean of FIELD over dperf's per-second blocks FIRST..FIRST+N-1 (max: the largest)."""
    s = 0.0
    total, k, mx = 0.0, 0, 0.0
    for line in common.tail(log, 10 ** 9):
        w = line.split()
        if line.startswith("seconds") and len(w) > 1:
            s = num(w[1])
        for i in range(len(w) - 1):
            if w[i] == field and first <= s < first + n:
                v = num(w[i + 1].replace(",", ""))
                total += v
                k += 1
                mx = max(mx, v)
    if k == 0:
        return "nan"
    if mode == "max":
        return "%d" % mx if mx == int(mx) else "%.6g" % mx
    return "%.0f" % (total / k)


def ratio(a: str, b: str) -> str:
    return "%.2f" % (num(a) / num(b)) if num(b) > 0 and is_num(a) else "n/a"


def cpu_rate(r: str, w: str, c: str) -> str:
    """RATE over a window, per CPU-second the pair ran in it."""
    return "%.0f" % (num(r) * num(w) / num(c)) if num(c) > 0 and is_num(r) else "n/a"


def per(a: str, b: str) -> str:
    return "%.1f" % (num(a) / num(b)) if num(b) > 0 else "n/a"


def run(c: "Conn") -> List[str]:
    out: List[str] = []

    def tel(name: str, key: str) -> str:
        for line in common.tail(c.f(name + "-tel.log"), 10 ** 9):
            m = re.search(r"\b%s=([0-9.]*)" % key, line)
            if m:
                return m.group(1)
        return ""

    def add(*words: str) -> None:
        out.append(" ".join(words))

    d = c.duration
    w0, w1, dw0 = 2.0, 2.0 + d, 12      # dperf: wait 1 + slow_start 10, one second to settle
    for row in c.rows.replace(",", " ").split():
        common.err("# row %s: surge pair" % row)
        if row in ("tcp", "http"):
            # the server closes after its answer, its FIN with the response (as dperf's: 3 segments each
            # way), so it holds the TIME_WAITs: room for 10 ms of them at 2 M connections/s, and more
            if c.surge_pair(row, ["--mode", row, "--capacity", "131072", "--close-after", "1"],
                            ["--mode", row, "--concurrency", c.surge_cc]) != 0:
                raise Fail()
            s_own = surge_stat(c.f("surge-%s-client.log" % row), "client.established", w0, w1)
            common.err("# row %s: dperf pair" % row)
            pl = " payload_size=1" if row == "tcp" else ""
            if c.dperf_pair(row, "protocol=tcp" + pl, "protocol=%s cps=%s%s" % (row, c.dperf_cps, pl)) != 0:
                raise Fail()
            d_own = dperf_stat(c.f("dperf-%s-client.log" % row), "skOpen", dw0, d)
            unit = "connections/s"
        elif row == "ka":
            if c.surge_pair("ka", ["--mode", "http", "--idle", "60"],
                            ["--mode", "http", "--concurrency", "1024", "--requests", "65535", "--idle", "60"]) != 0:
                raise Fail()
            s_own = surge_stat(c.f("surge-ka-client.log"), "client.responses", w0, w1)
            common.err("# row ka: dperf pair")
            if c.dperf_pair("ka", "protocol=tcp keepalive=60s", "protocol=http cps=100k cc=1024 keepalive=0us") != 0:
                raise Fail()
            d_own = dperf_stat(c.f("dperf-ka-client.log"), "http2XX", dw0, d)
            unit = "requests/s"
        elif row == "kernel":
            kernel_row(c, add)
            continue
        else:   # cc
            # 64 source addresses, as dperf's client (64 x 64 512 entries: 4 M connections held);
            # a window of at least 10 s: 4 M opens at 600k/s, then held
            c.duration = max(d, 10)
            held = c.surge_cc_held
            if c.surge_pair("cc", ["--mode", "tcp", "--idle", "600", "--capacity", str(held + held // 16)],
                            ["--mode", "tcp", "--addr", "10.9.0.2-10.9.0.65", "--rate", str(c.surge_cc_rate),
                             "--concurrency", str(held), "--requests", "65535", "--think", "600", "--idle", "600"]) != 0:
                raise Fail()
            s_own = surge_stat(c.f("surge-cc-client.log"), "client.concurrent", w0, 2 + c.duration, True)
            c.duration = d
            common.err("# row cc: dperf pair")
            if c.dperf_pair("cc", "protocol=tcp payload_size=1 keepalive=60s",
                            "protocol=tcp payload_size=1 cps=500k cc=4m keepalive=60s") != 0:
                raise Fail()
            d_own = dperf_stat(c.f("dperf-cc-client.log"), "skCon", dw0, d, "max")
            unit = "concurrent"
        s_tx, s_rx, s_mem = tel("surge-" + row, "tx_pps"), tel("surge-" + row, "rx_pps"), tel("surge-" + row, "mem_kb")
        d_tx, d_rx, d_mem = tel("dperf-" + row, "tx_pps"), tel("dperf-" + row, "rx_pps"), tel("dperf-" + row, "mem_kb")
        if row == "cc":
            s_gb = "%.0f" % (num(s_own) / (num(s_mem) / 1048576)) if num(s_mem) > 0 else "n/a"
            d_gb = "%.0f" % (num(d_own) / (num(d_mem) / 1048576)) if num(d_mem) > 0 else "n/a"
            add(row, unit, s_own, d_own, ratio(s_gb, d_gb), "surge %skB %s/GB; dperf %skB %s/GB" % (s_mem, s_gb, d_mem, d_gb))
        else:
            # the same rates per CPU-second the pair ran in the window (both busy-poll:
            # on a shared machine the CPU each pair got is what its rate is fair against)
            s_cpu, d_cpu = tel("surge-" + row, "cpu_s"), tel("dperf-" + row, "cpu_s")
            s_pc = cpu_rate(s_own, tel("surge-" + row, "seconds"), s_cpu)
            d_pc = cpu_rate(d_own, tel("dperf-" + row, "seconds"), d_cpu)
            add(row, unit, s_own, d_own, ratio(s_own, d_own),
                "client port tx/rx pps: surge %s/%s (%s+%s per), dperf %s/%s (%s+%s per);"
                % (s_tx, s_rx, per(s_tx, s_own), per(s_rx, s_own), d_tx, d_rx, per(d_tx, d_own), per(d_rx, d_own)),
                "per CPU-second of the pair: surge %s (%s CPU-s), dperf %s (%s CPU-s), ratio %s"
                % (s_pc, s_cpu, d_pc, d_cpu, ratio(s_pc, d_pc)))
        for n in ("client", "server"):
            for line in common.tail(c.f("surge-%s-%s.log" % (row, n)), 10 ** 9):
                if line.startswith(("client:", "server:")):
                    common.err(line)
    return out


def kernel_row(c: "Conn", add: "Callable[..., None]") -> None:
    import shutil
    for cmd, pkg in (("nginx", "nginx-light"), ("ab", "apache2-utils"), ("wrk", "wrk")):
        if not shutil.which(cmd):
            common.err("bench-conn: kernel row skipped: no %s (apt-get install %s)" % (cmd, pkg))
            return
    if c.kernel() != 0:
        common.err("bench-conn: the kernel row could not be set up")
        raise Fail()
    ab = common.tail(c.f("kernel-ab.log"), 10 ** 9)
    k_cps = next(("%.0f" % num(x.split()[3]) for x in ab if x.startswith("Requests per second")), "")
    k_opens = next((x.split()[1] for x in common.tail(c.f("kernel-nstat.log"), 10 ** 9) if "TcpPassiveOpens" in x), "")
    k_ka = next(("%.0f" % num(x.split()[1]) for x in common.tail(c.f("kernel-wrk.log"), 10 ** 9)
                 if x.startswith("Requests/sec")), "")
    add("kernel", "connections/s", k_cps, "-", "-", "ab -c 32, new connection per GET; nstat TcpPassiveOpens %s in %d s (%s/s)"
        % (k_opens, c.duration, per(k_opens, str(c.duration))))
    add("kernel", "requests/s", k_ka, "-", "-", "wrk -c 64, keep-alive")
    s_syn_l = common.tail(c.f("kernel-surge-syn.log"), 10 ** 9)
    if s_syn_l and any(x.strip() for x in s_syn_l):
        # each tool's own count of connections attempted, against the capture's first SYNs
        comp = fail = 0.0
        for x in ab:
            if x.startswith("Complete requests"):
                comp = num(x.split()[2])
            if x.startswith("Failed requests"):
                fail = num(x.split()[2])
        a_att = "%d" % (comp + fail)
        s_att = next((m.group(1) for x in common.tail(c.f("kernel-surge.log"), 10 ** 9)
                      for m in [re.match(r"^client: ([0-9]*) attempted", x)] if m), "")
        a_syn = "\n".join(common.tail(c.f("kernel-ab-syn.log"), 10 ** 9))
        s_syn = "\n".join(s_syn_l)
        first = next((m.group(1) for m in [re.search(r"first=([0-9]*)", s_syn)] if m), "")
        add("syn", "first-SYNs/attempted", "%s/%s" % (first, s_att), "-", "-",
            "captured on the server's veth: surge %s for %s attempted; ab %s for %s attempted"
            % (s_syn, s_att or "?", a_syn, a_att))
