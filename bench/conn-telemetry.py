#!/usr/bin/python3
"""conn-telemetry.py SOCKET START_S WINDOW_S [PID...] - a port's packet counts
read from outside the process, for scripts/bench-conn.

Connects to DPDK's telemetry socket SOCKET (waiting up to 30 s for it),
waits START_S seconds from the first answer, then samples /ethdev/stats,0
(ipackets, opackets) twice, WINDOW_S seconds apart. At the second sample it
also reads, for each PID, VmRSS and HugetlbPages from /proc/PID/status: the
memory the process holds, hugepages included; and at both samples each
PID's CPU time (utime + stime of /proc/PID/stat), so that a rate can be
given per CPU-second the processes actually ran: both tools busy-poll, so
on a shared machine the CPU they got, not the wall clock, is what a rate
is fair against. Prints one line:
  rx_pps=X tx_pps=Y rx=N tx=N seconds=S mem_kb=K cpu_s=C
"""
import json
import os
import socket
import sys
import time
from typing import Tuple

sys.dont_write_bytecode = True     # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from surgebench.cpu import process_cpu_s  # noqa: E402
from surgebench.telemetry import connect  # noqa: E402


def sample(s: socket.socket) -> Tuple[int, int, float]:
    a = time.monotonic()
    s.send(b"/ethdev/stats,0")
    reply = json.loads(s.recv(1 << 16))
    b = time.monotonic()
    st = reply["/ethdev/stats"]
    return int(st["ipackets"]), int(st["opackets"]), (a + b) / 2


def mem_kb(pid: str) -> int:
    kb = 0
    try:
        with open("/proc/%s/status" % pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "HugetlbPages:")):
                    kb += int(line.split()[1])
    except OSError:
        pass
    return kb


def main() -> int:
    path, start, window = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    s = connect(path, 30)
    time.sleep(start)
    pids = sys.argv[4:]
    c0 = sum(process_cpu_s(int(p)) for p in pids)
    rx0, tx0, t0 = sample(s)
    time.sleep(window)
    rx1, tx1, t1 = sample(s)
    c1 = sum(process_cpu_s(int(p)) for p in pids)
    mem = sum(mem_kb(p) for p in pids)
    dt = t1 - t0
    print("rx_pps=%.0f tx_pps=%.0f rx=%d tx=%d seconds=%.3f mem_kb=%d cpu_s=%.2f"
          % ((rx1 - rx0) / dt, (tx1 - tx0) / dt, rx1 - rx0, tx1 - tx0, dt, mem, c1 - c0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
