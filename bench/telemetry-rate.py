#!/usr/bin/python3
"""telemetry-rate.py [--from-traffic] [--cpu-of PID] PREFIX PORT START_S WINDOW_S [COUNTER [STEPS]]
- a port's TX (or RX) rate measured from outside the generator.

Connects to DPDK's telemetry socket /var/run/dpdk/PREFIX/dpdk_telemetry.v2
(waiting up to 20 s for it), waits START_S seconds from the first answer
(with --from-traffic: from the first answer in which COUNTER is non-zero,
waiting up to 20 s for it, for a program that sets up its ports long after
its socket answers and starts sending later still, as Pktgen-DPDK does),
then samples /ethdev/stats,PORT COUNTER (opackets, the default, or
ipackets for RX) at the start and the end of WINDOW_S seconds, each
sample's time the middle of the request's round trip on CLOCK_MONOTONIC_RAW
and CLOCK_MONOTONIC. Prints: pps_raw=X pps_mono=Y packets=N seconds=S.
With STEPS (an integer >= 1) the window is sampled STEPS + 1 times, evenly,
and each interval's rate is printed first, one line each, even for STEPS 1:
interval pps_raw=X (scripts/bench's per-second samples of its RX and
Pktgen-DPDK rows, one with --duration 1).
With --cpu-of PID it also prints cpu_share=X: the CPU time PID's DPDK
worker threads (rte-worker-N) got over the same window, per second and per
thread (scripts/bench --cpu-time: the share its rates are divided by).
"""
import json
import os
import socket
import sys
import time
from typing import Tuple

sys.dont_write_bytecode = True     # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from surgebench.cpu import HZ, worker_ticks  # noqa: E402
from surgebench.telemetry import connect  # noqa: E402


def sample(s: socket.socket, port: int, counter: str) -> Tuple[int, float, float]:
    a_raw, a_mono = time.clock_gettime(time.CLOCK_MONOTONIC_RAW), time.monotonic()
    s.send(("/ethdev/stats,%d" % port).encode())
    reply = json.loads(s.recv(1 << 16))
    b_raw, b_mono = time.clock_gettime(time.CLOCK_MONOTONIC_RAW), time.monotonic()
    return reply["/ethdev/stats"][counter], (a_raw + b_raw) / 2, (a_mono + b_mono) / 2


def wait_traffic(s: socket.socket, port: int, counter: str, limit: float) -> None:
    """Returns once the port's COUNTER is non-zero; exits after limit
    seconds without it (the port may not exist yet: its stats are null)."""
    end = time.monotonic() + limit
    while True:
        s.send(("/ethdev/stats,%d" % port).encode())
        stats = json.loads(s.recv(1 << 16))["/ethdev/stats"]
        if stats and stats[counter] > 0:
            return
        if time.monotonic() > end:
            sys.exit("telemetry-rate.py: port %d's %s stayed 0 for %g s" % (port, counter, limit))
        time.sleep(0.05)


def main() -> None:
    args = sys.argv[1:]
    from_traffic, cpu_of = False, 0
    while args and args[0] in ("--from-traffic", "--cpu-of"):
        if args[0] == "--from-traffic":
            from_traffic, args = True, args[1:]
        elif len(args) > 1 and args[1].isdigit():
            cpu_of, args = int(args[1]), args[2:]
        else:
            sys.exit("telemetry-rate.py: --cpu-of wants a process id")
    if len(args) not in (4, 5, 6):
        sys.exit("usage: telemetry-rate.py [--from-traffic] [--cpu-of PID] PREFIX PORT START_S WINDOW_S [COUNTER [STEPS]]")
    prefix, port, start, window = args[0], int(args[1]), float(args[2]), float(args[3])
    counter = args[4] if len(args) > 4 else "opackets"
    if counter not in ("opackets", "ipackets"):
        sys.exit("telemetry-rate.py: COUNTER is opackets or ipackets, not '%s'" % counter)
    steps = int(args[5]) if len(args) > 5 else 1
    if steps < 1:
        sys.exit("telemetry-rate.py: STEPS is an integer >= 1, not '%s'" % args[5])
    s = connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix, 20)
    if from_traffic:
        wait_traffic(s, port, counter, 20)
    time.sleep(start)
    first = last = sample(s, port, counter)
    t0 = time.monotonic()
    cpu0 = worker_ticks(cpu_of) if cpu_of else (0, 0)
    for k in range(1, steps + 1):
        time.sleep(max(0.0, t0 + window * k / steps - time.monotonic()))
        now = sample(s, port, counter)
        if len(args) > 5:
            print("interval pps_raw=%.3f" % ((now[0] - last[0]) / (now[1] - last[1])))
        last = now
    n0, r0, m0 = first
    n1, r1, m1 = last
    if cpu_of:
        cpu1 = worker_ticks(cpu_of)
        share = (cpu1[0] - cpu0[0]) / HZ / (r1 - r0) / max(1, cpu1[1])
        print("cpu_share=%.4f" % share)
    print("pps_raw=%.3f pps_mono=%.3f packets=%d seconds=%.6f" % (
        (n1 - n0) / (r1 - r0), (n1 - n0) / (m1 - m0), n1 - n0, r1 - r0))


if __name__ == "__main__":
    main()
