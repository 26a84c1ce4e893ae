"""The misuse class "the Python client against a socket that is not surge":
a fake server on a unix socket answers every call with garbage, lengths out
of range, half frames, an early close or nothing at all. Whatever it sends,
the call raises surge.SurgeError (never ValueError, MemoryError,
JSONDecodeError, RecursionError) within the call's timeout, and the
connection is closed (docs/guarantees.md, "Python clients and fleets")."""
from __future__ import annotations

import os
import random
import socket
import threading
import time
from typing import Callable, Iterator, Optional

import pytest

import surge
from surge.client import MARK

TIMEOUT = 1.0           # the client's timeout in these cases
SLACK = 1.5             # what a loaded 2-CPU machine adds to it


def frame(body: bytes) -> bytes:
    return str(len(body)).encode() + b"\n" + body


def trickle(conn: socket.socket, stop: threading.Event) -> None:
    """A valid header, then one byte every 0.1 s, for ever."""
    conn.sendall(b"1000\no")
    while not stop.wait(0.1):
        conn.sendall(b"x")


# name -> what the server sends after it reads the request (bytes), or a
# function of the connection; `close`: whether it closes after that.
Behaviour = Callable[[socket.socket, threading.Event], None]
CASES: list[tuple[str, object, bool]] = [
    ("garbage", b"hello, this is not surge\n", False),
    ("garbage-then-close", b"\x00\xff\xfe garbage", True),
    ("letters-as-length", b"abc\nxyz", False),
    ("empty-length", b"\n", False),
    ("huge-length", b"99999999999999999999999999\n", False),
    ("length-over-1MiB", b"1048577\n" + b"o" * 64, False),
    ("zero-length", b"0\n", False),
    ("negative-length", b"-5\nhello", False),
    ("half-a-frame-then-close", b"100\nohalf", True),
    ("half-a-frame-then-silence", b"100\nohalf", False),
    ("half-a-header-then-silence", b"12", False),
    ("close-at-once", b"", True),
    ("never-answers", b"", False),
    ("trickles", trickle, False),
    ("unknown-kind", frame(b"zwhat"), False),
    ("unasked-progress", frame(b"pprogress: 50%"), False),
    ("ok-without-the-marker", frame(b"ojust some text"), False),
    ("bad-json", frame(b"o" + MARK.encode() + b"{not json"), False),
    ("deep-json", frame(b"o" + MARK.encode() + b"[" * 200000), False),
    ("not-utf8-json", frame(b"o" + MARK.encode() + b"\xff\xfe"), False),
    ("pairs-with-a-list-key", frame(b"o" + MARK.encode() + b'[{"\\u0000surge:pairs": [[[1], 2]]}]'), False),
    ("pairs-not-pairs", frame(b"o" + MARK.encode() + b'[{"\\u0000surge:pairs": [1, 2]}]'), False),
]


class FakeServer:
    """One listening unix socket; each connection gets `behaviour`."""

    def __init__(self, path: str, behaviour: object, close: bool) -> None:
        self.path, self.behaviour, self.close = path, behaviour, close
        self.stop = threading.Event()
        self.lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.lsock.bind(path)
        self.lsock.listen(4)
        self.lsock.settimeout(0.1)
        self.conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.lsock.accept()
            except socket.timeout:
                continue
            self.conns.append(conn)
            conn.settimeout(5)
            try:
                conn.recv(1 << 16)           # the request (its first part is enough)
                if callable(self.behaviour):
                    self.behaviour(conn, self.stop)
                elif self.behaviour:
                    conn.sendall(self.behaviour)      # type: ignore[arg-type]
                if self.close:
                    conn.close()
            except OSError:
                pass

    def end(self) -> None:
        self.stop.set()
        self.thread.join(10)
        for c in self.conns:
            c.close()
        self.lsock.close()


@pytest.fixture
def fake(tmp: str) -> Iterator[Callable[[object, bool], FakeServer]]:
    made: list[FakeServer] = []

    def make(behaviour: object, close: bool) -> FakeServer:
        s = FakeServer(os.path.join(tmp, f"fake{len(made)}.sock"), behaviour, close)
        made.append(s)
        return s
    yield make
    for s in made:
        s.end()


@pytest.mark.parametrize("name,behaviour,close", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("call", ["eval", "wait"])
def test_always_surge_error(fake: Callable[[object, bool], FakeServer], name: str, behaviour: object,
                            close: bool, call: str) -> None:
    server = fake(behaviour, close)
    c = surge.connect(server.path, timeout=TIMEOUT)
    t0 = time.monotonic()
    err: Optional[BaseException] = None
    try:
        if call == "eval":
            c.eval("1")
        else:
            c.wait()
    except BaseException as e:  # noqa: B902 - the point is which class it is
        err = e
    took = time.monotonic() - t0
    assert isinstance(err, surge.SurgeError), f"{name}: {type(err).__name__}: {err}"
    assert took < TIMEOUT + SLACK, f"{name}: took {took:.1f} s"
    assert c.closed, f"{name}: the connection stays open after {err}"
    with pytest.raises(surge.ConnectionClosed):
        c.eval("1")


# every public call, each given a well-framed reply whose JSON is not the shape
# that call's surge.remote function returns (a Task, a count, a dict, ...)
CALLS: dict[str, Callable[[surge.Client], object]] = {
    "eval": lambda c: c.eval("1"), "call": lambda c: c.call("f"), "launch": lambda c: c.launch("f"),
    "stop": lambda c: c.stop(), "wait": lambda c: c.wait(), "tasks": lambda c: c.tasks(),
    "set_rate": lambda c: c.set_rate(0, 0, "1mpps"), "stats": lambda c: c.stats(),
    "results": lambda c: c.results(), "task.state": lambda c: surge.Task(c, 1, "x").state(),
    "task.stop": lambda c: surge.Task(c, 1, "x").stop(), "task.wait": lambda c: surge.Task(c, 1, "x").wait(),
}
SHAPES = [b'"x"', b"1e400", b"null", b"[1, 2]", b'{"done": 1}', b'{"id": "x", "name": 1}', b"{}", b"true",
          b'{"\\u0000surge:float": "big"}', b'{"\\u0000surge:hex": "zz"}', b'{"\\u0000surge:hex": 5}']


def test_every_call_refuses_a_value_of_the_wrong_shape(fake: Callable[[object, bool], FakeServer]) -> None:
    """The value is read by the call's shape: a SurgeError naming what came, never
    the reader's TypeError, KeyError, ValueError or OverflowError (before, 63 of
    150 such cases raised one)."""
    for shape in SHAPES:
        server = fake(frame(b"o" + MARK.encode() + shape), False)
        for name, fn in CALLS.items():
            c = surge.connect(server.path, timeout=TIMEOUT)
            try:
                fn(c)
            except surge.SurgeError as e:
                assert "not a surge control socket" in str(e) and c.closed, f"{name} {shape!r}: {e}"
            except BaseException as e:  # noqa: B902 - the point is which class it is
                raise AssertionError(f"{name} given {shape!r}: {type(e).__name__}: {e}") from e
            c.close()


def test_random_replies(fake: Callable[[object, bool], FakeServer]) -> None:
    """A bounded fuzz of the reply reader: 300 replies built from random pieces
    of surge's framing and random bytes, each sent before the server closes.
    A call returns a value (the pieces made a valid reply) or raises SurgeError;
    nothing else, and quickly."""
    rng = random.Random(3111)
    pieces = [b"12\n", b"3\n", b"1048576\n", b"o", b"e", b"p", MARK.encode(), b"[", b"]", b"{", b'"', b"1",
              b"\n", b"99999999", b"\xff", b"\x00"]
    payloads = []
    for _ in range(300):
        body = b"".join(rng.choice(pieces) if rng.random() < 0.7 else bytes([rng.randrange(256)])
                        for _ in range(rng.randrange(0, 40)))
        payloads.append(frame(body) if rng.random() < 0.5 else body)
    it = iter(payloads)
    server = fake(lambda conn, stop: conn.sendall(next(it)), True)
    t0 = time.monotonic()
    returned = 0
    for p in payloads:
        c = surge.connect(server.path, timeout=TIMEOUT)
        try:
            c.eval("1")
            returned += 1
        except surge.SurgeError:
            pass
        except BaseException as e:  # noqa: B902
            raise AssertionError(f"{p!r}: {type(e).__name__}: {e}") from e
        c.close()
    assert time.monotonic() - t0 < 60, "each reply ends at its close"
    assert returned < len(payloads)


def test_progress_callback_that_raises(fake: Callable[[object, bool], FakeServer]) -> None:
    """The callback's exception reaches the caller, and the connection closes: the
    rest of the reply, unread, would otherwise answer the next call."""
    server = fake(frame(b"pprogress: 50%") + frame(b"o" + MARK.encode() + b"[1]"), False)
    c = surge.connect(server.path, timeout=TIMEOUT)

    def boom(line: str) -> None:
        raise RuntimeError(f"the callback's own error at {line}")
    with pytest.raises(RuntimeError, match="the callback's own error at 50%"):
        c.eval("1", on_progress=boom)
    assert c.closed


def test_timeouts_out_of_range(fake: Callable[[object, bool], FakeServer]) -> None:
    """A timeout is seconds >= 0, or None / infinity for none: a bad one is one error
    naming it (the socket module's 'Timeout value out of range' or OverflowError
    before), and math.inf waits as None does (it raised OverflowError and closed)."""
    server = fake(frame(b"o" + MARK.encode() + b"[1]"), False)
    for bad, kind in ((-1, ValueError), (float("nan"), ValueError), ("5", TypeError), (True, TypeError)):
        with pytest.raises(kind, match="^timeout: seconds"):
            surge.connect(server.path, timeout=bad)  # type: ignore[arg-type]
        c = surge.connect(server.path, timeout=TIMEOUT)
        with pytest.raises(kind, match="^timeout: seconds"):
            c.eval("1", timeout=bad)  # type: ignore[arg-type]
        c.close()
    for none in (float("inf"), 1e300):
        c = surge.connect(server.path, timeout=none)
        assert c.timeout is None and c.eval("1") == 1
        c.close()
        c = surge.connect(server.path, timeout=TIMEOUT)
        assert c.eval("1", timeout=none) == 1
        c.close()
