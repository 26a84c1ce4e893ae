"""surgebench.telemetry - the one client of DPDK's telemetry socket that the
benchmarks and rate tests share (bench/telemetry-rate.py,
bench/conn-telemetry.py, tests/e2e/rate/qrates.py, the harness): they measure surge,
or a peer, from outside the process.
"""
import socket
import time


def connect(path: str, limit: float) -> socket.socket:
    """The socket at path (.../dpdk_telemetry.v2), its greeting read;
    retried until it answers or limit seconds have passed (the process may
    still be starting)."""
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
