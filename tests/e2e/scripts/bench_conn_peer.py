#!/usr/bin/python3
"""bench_conn_peer.py - a stand-in for both programs scripts/bench-conn runs,
for tests/e2e/test_bench_conn_huge.sh (dperf is not packaged, and a real
pair busy-polls two CPUs for half a minute).

As dperf (`-c CONF`): like DPDK without --in-memory, it maps its
socket_mem of hugepages from a file named by its PID on the hugetlbfs mount
(dperf-PIDmap_0, allocated for real: the pages are taken), holds a shared
flock on it as DPDK does, and leaves it behind when it ends; it serves a
telemetry socket at /var/run/dpdk/dperf-PID/dpdk_telemetry.v2 and prints
dperf's per-second counts until its `duration`, SIGINT or SIGTERM.
As surge (`run ... --file-prefix P ... --duration N ...`): no hugepage
file (surge runs --in-memory), a telemetry socket at
/var/run/dpdk/P/dpdk_telemetry.v2 and surge's stats lines; with
BENCH_PEER_NOHUGE=1 it first says, as surge does, that it runs with
--no-huge. BENCH_PEER_FAIL=client: dperf's client ends at once, status 1.
"""
import fcntl
import json
import os
import signal
import socket
import sys
import threading
import time

stop = threading.Event()


def serve(path: str) -> None:
    """DPDK's telemetry socket: a greeting, then /ethdev/stats,0 answers
    counting 1000 packets a second each way."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(path)
    s.listen(4)
    t0 = time.monotonic()

    def one(c: socket.socket) -> None:
        c.send(json.dumps({"version": "stand-in", "pid": os.getpid(), "max_output_len": 16384}).encode())
        while True:
            q = c.recv(1024)
            if not q:
                return
            n = int((time.monotonic() - t0) * 1000)
            c.send(json.dumps({"/ethdev/stats": {"ipackets": n, "opackets": n}}).encode())

    def accept() -> None:
        while True:
            c, _ = s.accept()
            threading.Thread(target=one, args=(c,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def hugepage_file(mb: int) -> int:
    mount = next(line.split()[1] for line in open("/proc/mounts") if line.split()[2] == "hugetlbfs")
    fd = os.open("%s/dperf-%dmap_0" % (mount, os.getpid()), os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH)
    os.posix_fallocate(fd, 0, mb << 20)
    return fd


def main() -> int:
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    args = sys.argv[1:]
    if args[:1] == ["-c"]:
        conf = dict((line.split(None, 1) + [""])[:2] for line in open(args[1]) if line.strip())
        role = conf["mode"].strip()
        fd = hugepage_file(int(conf["socket_mem"]))
        if role == "client" and os.environ.get("BENCH_PEER_FAIL") == "client":
            print("rte_eal_init fail", flush=True)
            return 1
        serve("/var/run/dpdk/dperf-%d/dpdk_telemetry.v2" % os.getpid())
        # dperf's duration runs after its wait and slow start (the bench's window is from second 12)
        secs = [float(conf.get(k, "0").strip().rstrip("s") or 0) for k in ("duration", "wait", "slow_start")]
        end = time.monotonic() + sum(secs)
        sec = 0
        while not stop.wait(1) and time.monotonic() < end:
            sec += 1
            print("seconds %d\nskOpen %d skCon %d http2XX %d" % (sec, 1000, 1000, 1000), flush=True)
        os.close(fd)       # the file stays, as DPDK leaves it
        return 0
    prefix = args[args.index("--file-prefix") + 1]
    duration = float(args[args.index("--duration") + 1])
    if os.environ.get("BENCH_PEER_NOHUGE") == "1":
        print("surge: 0 MB of hugepages free (need 256): running with --no-huge", flush=True)
    serve("/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix)
    t0 = time.monotonic()
    k = 0
    while not stop.wait(1) and time.monotonic() - t0 < duration:
        k += 1
        print("[ %5.1fs] stand-in\ncounters: client.established %d, client.responses %d, client.concurrent %d"
              % (time.monotonic() - t0, 2000 * k, 2000 * k, 1000), flush=True)
    print("client: %d attempted" % (2000 * k), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
