#!/usr/bin/python3
"""qrates.py PREFIX PORT START_S WINDOW_S - each TX queue's rate of a port,
measured from outside the generator: DPDK telemetry's /ethdev/stats,PORT
q_opackets, sampled twice WINDOW_S seconds apart (the first START_S seconds
after the socket answers) on CLOCK_MONOTONIC_RAW.

Each sample's time is the middle of its request's round trip; of 5 tries the
one with the shortest round trip is kept, so a preemption of this process
during one does not move the sample's time (0.02 % of a 4 s window is
0.8 ms). Prints: "queue Q pps X packets N" per queue with packets, then
"window S rtt_us A B".
"""
import json
import os
import socket
import sys
import time

sys.dont_write_bytecode = True     # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench"))
from surgebench.telemetry import connect  # noqa: E402


def sample(s: socket.socket, port: int) -> tuple[list[int], float, float]:
    best = None
    for _ in range(5):
        a = time.clock_gettime(time.CLOCK_MONOTONIC_RAW)
        s.send(("/ethdev/stats,%d" % port).encode())
        reply = json.loads(s.recv(1 << 16))
        b = time.clock_gettime(time.CLOCK_MONOTONIC_RAW)
        if best is None or b - a < best[2]:
            best = (reply["/ethdev/stats"]["q_opackets"], (a + b) / 2, b - a)
    assert best is not None
    return best


def main() -> None:
    prefix, port = sys.argv[1], int(sys.argv[2])
    start, window = float(sys.argv[3]), float(sys.argv[4])
    s = connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix, 20)
    time.sleep(start)
    q0, t0, rtt0 = sample(s, port)
    time.sleep(window)
    q1, t1, rtt1 = sample(s, port)
    for q, (a, b) in enumerate(zip(q0, q1)):
        if b > 0:
            print("queue %d pps %.3f packets %d" % (q, (b - a) / (t1 - t0), b - a))
    print("window %.6f rtt_us %.0f %.0f" % (t1 - t0, rtt0 * 1e6, rtt1 * 1e6))


if __name__ == "__main__":
    main()
