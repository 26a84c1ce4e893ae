#!/usr/bin/python3
"""telemetry-rate.py PREFIX PORT START_S WINDOW_S - a port's TX rate measured
from outside the generator.

Connects to DPDK's telemetry socket /var/run/dpdk/PREFIX/dpdk_telemetry.v2
(waiting up to 20 s for it), waits START_S seconds from the first answer,
then samples /ethdev/stats,PORT opackets twice, WINDOW_S seconds apart, each
sample's time the middle of the request's round trip on CLOCK_MONOTONIC_RAW
and CLOCK_MONOTONIC. Prints: pps_raw=X pps_mono=Y packets=N seconds=S.
"""
import json
import socket
import sys
import time


def connect(path, limit):
    end = time.monotonic() + limit
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(path)
            s.recv(1024)                       # the greeting
            return s
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)


def sample(s, port):
    a_raw, a_mono = time.clock_gettime(time.CLOCK_MONOTONIC_RAW), time.monotonic()
    s.send(("/ethdev/stats,%d" % port).encode())
    reply = json.loads(s.recv(1 << 16))
    b_raw, b_mono = time.clock_gettime(time.CLOCK_MONOTONIC_RAW), time.monotonic()
    return reply["/ethdev/stats"]["opackets"], (a_raw + b_raw) / 2, (a_mono + b_mono) / 2


def main():
    prefix, port, start, window = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    s = connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix, 20)
    time.sleep(start)
    n0, r0, m0 = sample(s, port)
    time.sleep(window)
    n1, r1, m1 = sample(s, port)
    print("pps_raw=%.3f pps_mono=%.3f packets=%d seconds=%.6f" % (
        (n1 - n0) / (r1 - r0), (n1 - n0) / (m1 - m0), n1 - n0, r1 - r0))


if __name__ == "__main__":
    main()
