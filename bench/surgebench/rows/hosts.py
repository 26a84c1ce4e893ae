"""--rows hosts: the emulated hosts (issue 33, docs/hosts.md), two processes
over a net_memif pair, one lcore each (bench/hosts.lua is both sides):

  dhcp   N DHCPv4 clients (surge.hosts) against surge's DHCP server
         (surge.hosts.server, a pool of N): bindings per second from the
         first DISCOVER to the last ACK, the client lcore's cycles per
         binding, bytes per host; the server's own count of ACKs (another
         process) must equal the bindings
  arp    N static hosts answering the ARP requests of an asker sending as
         fast as the pair takes them, against the reference in the same run:
         dpdk-testpmd --forward-mode=macswap as the answering side (the
         pair's request/answer line rate); the hosts' requests in must equal
         the requests sent (none lost) and the answers written, and the
         answers back at the asker plus those the TX ring refused (tx_full,
         counted: a table sends without waiting for room) must equal them

The DHCP row's reference is TRex EMU's published figure (about 3 000
clients per second per thread, docs/performance.md cites it): the table
gives surge's rate over it."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence

from .. import common, stats

if TYPE_CHECKING:
    from ..bench import Bench

TREX_EMU_PER_THREAD = 3000.0
PFX = "{file-prefix}"     # in a side's command: its own --file-prefix
COUNT = 1000000
CLIENT = re.compile(r"dhcp-client: bound (\d+) of (\d+) in ([0-9.]+) s, (\d+) bindings/s, (\d+) cycles per binding, "
                    r"(\d+) bytes per host")
SERVER = re.compile(r"dhcp-server: (\d+) discovers, (\d+) offers, (\d+) requests, (\d+) acks, (\d+) naks, "
                    r"(\d+) no address, (\d+) bytes per lease")
ASKER = re.compile(r"arp-asker: (\d+) requests sent, (\d+) replies in ([0-9.]+) s, (\d+) replies/s")
HOSTS = re.compile(r"arp-hosts: (\d+) requests in, (\d+) replies out, (\d+) other, (\d+) tx_full")
TPMD_RX = re.compile(r"RX-packets:\s+(\d+)")


def grab(log: str, rx: "re.Pattern[str]") -> Optional["re.Match[str]"]:
    with open(log, errors="replace") as f:
        found = None
        for line in f:
            m = rx.search(common.ANSI.sub("", line))
            if m:
                found = m
        return found


def run(b: "Bench") -> None:
    r = b.runs
    script = os.path.join(b.root, "bench/hosts.lua")
    sock = r.work.file("hosts-memif.sock")
    memif = "id=0,socket=%s,socket-abstract=no" % sock

    def pair(name: str, server: Sequence[str], client: Sequence[str], server_secs: int, ends: float = 0) -> List[str]:
        """The memif server side, then the client side; their logs. ends: the
        server side ends on its own within that many seconds of the client
        (else it is stopped with SIGINT once the client is done)."""
        if os.path.exists(sock):
            os.unlink(sock)
        slog, clog = r.log(name + "-server"), r.log(name + "-client")
        spfx, cpfx = "%s-%d-s" % (r.prefix, r.run), "%s-%d-c" % (r.prefix, r.run)
        sp = r.start(["timeout", "-k", "5", str(server_secs + 60), *(spfx if a == PFX else a for a in server)], slog)
        time.sleep(2)
        cp = r.start(["timeout", "-k", "5", str(server_secs + 60), *(cpfx if a == PFX else a for a in client)], clog)
        crc = common.status(cp.wait())
        if ends > 0:
            try:
                sp.wait(ends)
            except subprocess.TimeoutExpired:
                pass
        src = common.stop_proc(sp, signal.SIGINT)   # a clean stop: its summary printed
        common.rm_runtime(spfx)
        common.rm_runtime(cpfx)
        if crc != 0:
            r.fail_run(clog, "%s: the client side exited with status %d" % (name, crc))
        if src not in (0, 130, 143, 124):
            r.fail_run(slog, "%s: the server side exited with status %d" % (name, src))
        return [slog, clog]

    def surge_side(role: str, mif: str, lcore: int, extra: Sequence[str]) -> List[str]:
        return [r.surge, "run", "-q", "--file-prefix", PFX, *r.surge_mem, "--lcores", "0@%d,1@%d" % (lcore, lcore), "--vdev",
                "net_memif0,role=%s,%s" % (mif, memif), script, "--role", role, "--count", str(COUNT), *extra]

    d = b.duration
    rates: Dict[str, List[float]] = {"dhcp": [], "cyc": [], "arp": [], "ref": []}
    bph = 0
    lost: List[int] = []
    common.err("bench: hosts rows, %d repetition(s): %d DHCP clients against surge's server; ARP answered by %d hosts "
               "against testpmd macswap, %d s each" % (b.reps, COUNT, COUNT, d))
    for rep in range(1, b.reps + 1):
        # the server ends on its own 2 s after its last ACK
        slog, clog = pair("dhcp", surge_side("dhcp-server", "server", 1, ["--seconds", str(d + 30)]),
                          surge_side("dhcp-client", "client", 0, ["--seconds", str(d + 20), "--outstanding", "256"]),
                          d + 30, 10)
        c, s = grab(clog, CLIENT), grab(slog, SERVER)
        if c is None or s is None:
            r.fail_run(clog if c is None else slog, "dhcp: no summary line")
        assert c is not None and s is not None
        if int(c.group(1)) != COUNT or int(s.group(4)) != COUNT:
            r.fail_run(clog, "dhcp: %s of %d bound, the server ACKed %s" % (c.group(1), COUNT, s.group(4)))
        rates["dhcp"].append(float(c.group(4)))
        rates["cyc"].append(float(c.group(5)))
        bph = int(c.group(6))
        asker = surge_side("arp-asker", "client", 0, ["--seconds", str(d)])
        # the hosts stop on their own (d + 4 s after the link came up), not
        # by a signal while the pair's link goes down
        slog, clog = pair("arp", surge_side("arp-hosts", "server", 1, ["--seconds", str(d + 4)]), asker, d + 8, 10)
        a, h = grab(clog, ASKER), grab(slog, HOSTS)
        if a is None or h is None:
            r.fail_run(clog if a is None else slog, "arp: no summary line")
        assert a is not None and h is not None
        sent, back = int(a.group(1)), int(a.group(2))
        got_in, out, full = int(h.group(1)), int(h.group(2)), int(h.group(4))
        # every request in, every one answered; the answers the TX ring
        # refused counted (tx_full), every other one back at the asker
        if got_in != sent or out != got_in or back + full != out:
            r.fail_run(slog, "arp: %d requests sent, %d in (%s not for a bound host), %d answered, %d refused by the "
                       "ring, %d back" % (sent, got_in, h.group(3), out, full, back))
        lost.append(full)
        rates["arp"].append(float(a.group(4)))
        tp = [r.testpmd, "--lcores", "0@1,1@1", "--file-prefix", PFX, "--no-pci", *r.tpmd_mem, "--vdev", "net_memif0,role=server,%s" % memif, "--",
              "--forward-mode=macswap", "--port-topology=loop", "--auto-start"]
        tp = ["sh", "-c", 'sleep %d | "$@"' % (d + 8), "sh", *tp]   # testpmd quits when its stdin ends
        slog, clog = pair("arp-ref", tp, asker, d + 8, 10)
        a = grab(clog, ASKER)
        if a is None:
            r.fail_run(clog, "arp-ref: no summary line")
        assert a is not None
        rates["ref"].append(float(a.group(4)))
        common.err("bench: rep %d/%d dhcp %.0f bindings/s (%.0f cycles each)  arp %.0f replies/s  testpmd macswap %.0f/s"
                   % (rep, b.reps, rates["dhcp"][-1], rates["cyc"][-1], rates["arp"][-1], rates["ref"][-1]))
    dh, cy, ar, rf = (stats.median(rates[k]) for k in ("dhcp", "cyc", "arp", "ref"))
    b.table([["row", "surge", "reference", "surge/ref", "notes"],
             ["DHCPv4 bindings/s, %d clients, 1 lcore" % COUNT, "%.0f" % dh, "%.0f (TRex EMU, published)"
              % TREX_EMU_PER_THREAD, "%.0fx" % (dh / TREX_EMU_PER_THREAD),
              "%.0f cycles per binding, %d bytes per host" % (cy, bph)],
             ["ARP answers/s, %d hosts, 1 lcore" % COUNT, "%.0f" % ar, "%.0f (testpmd macswap)" % rf,
              stats.ratio(ar, rf), "requests in = sent = answered; answers refused by the TX ring: %s"
              % ", ".join(str(x) for x in lost)]])
    print("")
    print("medians of %d run(s); net_memif pair, one lcore a side; %s" % (b.reps, common.utc_now()))
