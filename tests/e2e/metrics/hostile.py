#!/usr/bin/env python3
"""hostile.py - slow and hostile HTTP clients for surge's --metrics endpoint
(tests/e2e/test_misuse_metrics.sh). Bounded: it ends after --seconds.

  hostile.py PORT MODE N --seconds S

keeps N connections to 127.0.0.1:PORT open, each doing MODE, and opens a new
one whenever the server closes one (the pressure stays). Prints "ready" once
the first N are open and have started.

  trickle   a request line, then a header line every 2 s (never inactive,
            never complete)
  idle      connects and says nothing
  huge      a request line and a 1 MiB header, sent as fast as taken
  garbage   a line of bytes that is not HTTP, then nothing
  pipeline  200 complete GET /metrics requests in one write, then never reads
            an answer
"""
import argparse
import errno
import select
import socket
import time

MODES = ("trickle", "idle", "huge", "garbage", "pipeline")


def first_bytes(mode: str) -> bytes:
    if mode == "trickle":
        return b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
    if mode == "huge":
        return b"GET /metrics HTTP/1.1\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n"
    if mode == "garbage":
        return b"\x00\xff\x7f GARBAGE \xc0\xaf /../ HTTP/0.1 \x1b[2J\r\n"
    if mode == "pipeline":
        return b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 200
    return b""


class Conn:
    def __init__(self, port: int, mode: str) -> None:
        # not waiting for the handshake: a full listen queue leaves it to
        # the kernel's retries, and the others still start
        self.sock = socket.socket()
        self.sock.setblocking(False)
        rc = self.sock.connect_ex(("127.0.0.1", port))
        if rc not in (0, errno.EINPROGRESS):
            raise OSError(rc, "connect")
        self.pending = first_bytes(mode)
        self.mode = mode
        self.next_line = time.monotonic() + 2.0
        self.lines = 0

    def closed(self) -> bool:
        """The server ended it (read nothing: the pipeline never reads)."""
        p = select.poll()
        p.register(self.sock, select.POLLRDHUP)
        return any(ev & (select.POLLRDHUP | select.POLLHUP | select.POLLERR) for _, ev in p.poll(0))

    def step(self, now: float) -> bool:
        """Sends what is due; False once the server closed the connection."""
        try:
            if self.mode == "pipeline":
                if self.closed():
                    return False
            else:
                # an answer or a close: read it; a refusal (400, 413, 431)
                # is followed by a close
                try:
                    if self.sock.recv(65536) == b"":
                        return False
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError as e:
                    if e.errno != errno.ENOTCONN:   # still connecting
                        raise
            if self.mode == "trickle" and now >= self.next_line:
                self.pending += b"X-Trickle-%d: x\r\n" % self.lines
                self.lines += 1
                self.next_line = now + 2.0
            if self.pending:
                try:
                    n = self.sock.send(self.pending)
                    self.pending = self.pending[n:]
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError as e:
                    if e.errno != errno.ENOTCONN:   # still connecting
                        raise
        except OSError:
            return False
        return True

    def close(self) -> None:
        self.sock.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("mode", choices=MODES)
    ap.add_argument("n", type=int)
    ap.add_argument("--seconds", type=float, default=10.0)
    a = ap.parse_args()
    end = time.monotonic() + a.seconds
    conns: list[Conn] = []
    reopened = 0
    # the first N: all open before "ready"; the kernel's queue may hold
    # some of them unaccepted, which is the point
    for _ in range(a.n):
        conns.append(Conn(a.port, a.mode))
    for c in conns:
        c.step(time.monotonic())
    print("ready", flush=True)
    while time.monotonic() < end:
        now = time.monotonic()
        for i, c in enumerate(conns):
            if not c.step(now):
                c.close()
                try:
                    conns[i] = Conn(a.port, a.mode)
                    reopened += 1
                except OSError:
                    pass
        time.sleep(0.05)
    for c in conns:
        c.close()
    print("reopened %d" % reopened, flush=True)


if __name__ == "__main__":
    main()
