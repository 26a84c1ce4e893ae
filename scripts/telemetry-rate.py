#!/usr/bin/python3
"""telemetry-rate.py PREFIX PORT START_S WINDOW_S [COUNTER [STEPS]] - a port's
TX (or RX) rate measured from outside the generator.

Connects to DPDK's telemetry socket /var/run/dpdk/PREFIX/dpdk_telemetry.v2
(waiting up to 20 s for it), waits START_S seconds from the first answer,
then samples /ethdev/stats,PORT COUNTER (opackets, the default, or
ipackets for RX) at the start and the end of WINDOW_S seconds, each
sample's time the middle of the request's round trip on CLOCK_MONOTONIC_RAW
and CLOCK_MONOTONIC. Prints: pps_raw=X pps_mono=Y packets=N seconds=S.
With STEPS (an integer >= 1) the window is sampled STEPS + 1 times, evenly,
and each interval's rate is printed first, one line each: interval pps_raw=X
(scripts/bench's per-second samples of its RX rows).
"""
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dpdk_telemetry import connect  # noqa: E402


def sample(s: socket.socket, port: int, counter: str) -> tuple:
    a_raw, a_mono = time.clock_gettime(time.CLOCK_MONOTONIC_RAW), time.monotonic()
    s.send(("/ethdev/stats,%d" % port).encode())
    reply = json.loads(s.recv(1 << 16))
    b_raw, b_mono = time.clock_gettime(time.CLOCK_MONOTONIC_RAW), time.monotonic()
    return reply["/ethdev/stats"][counter], (a_raw + b_raw) / 2, (a_mono + b_mono) / 2


def main() -> None:
    if len(sys.argv) not in (5, 6, 7):
        sys.exit("usage: telemetry-rate.py PREFIX PORT START_S WINDOW_S [COUNTER [STEPS]]")
    prefix, port, start, window = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    counter = sys.argv[5] if len(sys.argv) > 5 else "opackets"
    if counter not in ("opackets", "ipackets"):
        sys.exit("telemetry-rate.py: COUNTER is opackets or ipackets, not '%s'" % counter)
    steps = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    if steps < 1:
        sys.exit("telemetry-rate.py: STEPS is an integer >= 1, not '%s'" % sys.argv[6])
    s = connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix, 20)
    time.sleep(start)
    first = last = sample(s, port, counter)
    t0 = time.monotonic()
    for k in range(1, steps + 1):
        time.sleep(max(0.0, t0 + window * k / steps - time.monotonic()))
        now = sample(s, port, counter)
        if steps > 1:
            print("interval pps_raw=%.3f" % ((now[0] - last[0]) / (now[1] - last[1])))
        last = now
    n0, r0, m0 = first
    n1, r1, m1 = last
    print("pps_raw=%.3f pps_mono=%.3f packets=%d seconds=%.6f" % (
        (n1 - n0) / (r1 - r0), (n1 - n0) / (m1 - m0), n1 - n0, r1 - r0))


if __name__ == "__main__":
    main()
