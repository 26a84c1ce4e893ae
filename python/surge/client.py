"""The client of one surge instance's control socket (``surge run --control PATH``).

The wire format is surge's own (docs/repl.md, "Attaching"): each message is
its length in ASCII decimal, a newline, then that many bytes; a request is
``e`` + Lua source, a reply ``o`` (done), ``m`` (more lines needed) or ``e``
(error) + text. Every call of this client is the same one-line request,
``require("surge.remote").run(JSON)``: the JSON names a function of the Lua
module ``surge.remote`` (lua/surge/remote.lua, tested in tests/lua) and its
arguments, as data. Its reply is what the code printed, a marker, then the
value as JSON; ``scenario`` also gets ``p`` frames (progress lines) before the
reply, which only this client asks for. Nothing changes on the server's side
of the protocol.

Anything that is not such a reply (a socket that is not surge's: garbage, a
length out of range, half a frame, an early close, no answer) is a
:class:`SurgeError` within the call's timeout, and the connection is closed.
"""
from __future__ import annotations

import json
import math
import re
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, NoReturn, Optional, Union

__all__ = ["Client", "Lua", "SurgeError", "ConnectionClosed", "Task", "connect", "lua_literal"]

MAX_FRAME = 1 << 20          # surge's limit on a request or a reply (core/front/socket.c)
MARK = "\x00surge-py\x00"     # separates what the code printed from its value (surge.remote.MARK)
MAX_INT = 1 << 53            # Lua numbers are doubles: integers beyond this are not exact
# tags of the values JSON has no form for (surge.remote's PAIRS, LUA, HEX, FLOAT)
PAIRS, LUA, HEX, FLOAT = "\x00surge:pairs", "\x00surge:lua", "\x00surge:hex", "\x00surge:float"
_LEN_DIGITS = len(str(MAX_FRAME))
# how surge's prompt answers code that left it (core's repl/init.lua serve_request)
_LEFT = ("os.exit: the instance ends", "exit() leaves the prompt")


class SurgeError(Exception):
    """surge refused or failed a request; ``str(e)`` is surge's one-line error
    (``prompt:1: attempt to perform arithmetic on a nil value``)."""

    def __init__(self, message: str, *, instance: Optional[str] = None) -> None:
        self.message = message
        self.instance = instance
        super().__init__(f"{instance}: {message}" if instance else message)


class ConnectionClosed(SurgeError):
    """The control socket is gone: the instance ended (or never listened)."""


@dataclass(frozen=True)
class Lua:
    """A Lua expression passed as it is, e.g. ``Lua("surge.port(0):txq(0)")``."""
    expr: str


def _utf8(s: str) -> bytes:
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise TypeError(f"cannot pass a str with a lone surrogate to Lua ({e.reason})") from None


def _check_int(v: int) -> int:
    if not -MAX_INT <= v <= MAX_INT:
        raise TypeError(f"cannot pass the int {v} to Lua: its numbers hold integers up to 2^53 exactly")
    return v


# what a Lua string literal cannot hold as it is: quotes, backslashes, control
# characters (a newline or a CR would end the line); bytes also >= 0x80
_STR_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')
_BYTES_ESCAPE = re.compile(rb'["\\\x00-\x1f\x7f-\xff]')


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    # a decimal escape is 3 digits, so a digit after it cannot join it
    return "\\" + c if c in '"\\' else "\\%03d" % ord(c)


def _escape_byte(m: re.Match[bytes]) -> bytes:
    c = m.group()[0]
    return b"\\" + bytes([c]) if c in (0x22, 0x5C) else b"\\%03d" % c


def lua_literal(v: Any) -> str:
    """Python data as Lua source: None, bool, int (up to 2^53), float, str, bytes,
    list/tuple, dict and :class:`Lua` (inserted verbatim). Anything else, or a value
    Lua would hold changed, is a ``TypeError``."""
    if isinstance(v, Lua):
        return "(" + v.expr + ")"
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(_check_int(v))
    if isinstance(v, float):
        if math.isnan(v):
            return "(0/0)"
        if math.isinf(v):
            return "math.huge" if v > 0 else "-math.huge"
        return repr(v)
    if isinstance(v, str):
        # the request is sent as UTF-8, so other characters reach Lua's lexer as
        # their own bytes, which a string literal takes as they are
        _utf8(v)
        return '"' + _STR_ESCAPE.sub(_escape, v) + '"'
    if isinstance(v, bytes):
        return '"' + _BYTES_ESCAPE.sub(_escape_byte, v).decode("ascii") + '"'
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua_literal(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join("[" + lua_literal(k) + "] = " + lua_literal(x) for k, x in v.items()) + "}"
    raise TypeError(f"cannot pass a {type(v).__name__} to Lua")


def to_wire(v: Any) -> Any:
    """Python data as the JSON surge.remote reads (its header says how): a value
    Lua cannot hold as it is raises ``TypeError`` here, before anything is sent."""
    if v is None or isinstance(v, (bool, str)):
        if isinstance(v, str):
            _utf8(v)
        return v
    if isinstance(v, int):
        return _check_int(v)
    if isinstance(v, float):
        if math.isnan(v):
            return {FLOAT: "nan"}
        if math.isinf(v):
            return {FLOAT: "inf" if v > 0 else "-inf"}
        return v
    if isinstance(v, Lua):
        return {LUA: v.expr}
    if isinstance(v, (bytes, bytearray)):
        return {HEX: bytes(v).hex()}
    if isinstance(v, (list, tuple)):
        return [to_wire(x) for x in v]
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v):
            return {k: to_wire(x) for k, x in v.items()}
        for k in v:
            if k is None or (isinstance(k, float) and math.isnan(k)):
                raise TypeError(f"cannot pass the table key {k!r} to Lua")
        return {PAIRS: [[to_wire(k), to_wire(x)] for k, x in v.items()]}
    raise TypeError(f"cannot pass a {type(v).__name__} to Lua")


class _NotPython(Exception):
    """A Lua value Python's data cannot hold as it is (the message says which)."""


_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _from_wire(obj: dict[str, Any]) -> Any:
    """json.loads' object hook, surge.remote's tags read back (the inner objects
    first, so a key is already decoded): FLOAT (NaN, the infinities) a float, HEX
    (a Lua string that is not UTF-8) bytes, PAIRS (a table with keys of several
    types) a dict with those keys. A value that is not such a tag's is ValueError,
    the caller's "not surge.remote's JSON"."""
    if len(obj) != 1:
        return obj
    tag, v = next(iter(obj.items()))
    if tag == FLOAT:
        if v not in _FLOATS:
            raise ValueError(f"a float that is not one: {str(v)[:40]}")
        return _FLOATS[v]
    if tag == HEX:
        if not isinstance(v, str):
            raise ValueError(f"bytes that are not hex: {str(v)[:40]}")
        return bytes.fromhex(v)
    if tag == PAIRS and isinstance(v, list):
        out: dict[Any, Any] = {}
        for kv in v:
            # surge.remote's keys are numbers, strings, booleans and bytes
            if not (isinstance(kv, list) and len(kv) == 2 and isinstance(kv[0], (str, int, float, bool, bytes))):
                raise ValueError(f"a key-value pair that is not one: {str(kv)[:40]}")
            k = kv[0]
            if k in out:
                # 1 and true, 0 and false (or a table key shown as text and that
                # text) are one key of a dict: one value would be lost
                old = next(o for o in out if o == k)
                raise _NotPython(f"a Lua table whose keys {old!r} and {k!r} are one key in a Python dict")
            out[k] = kv[1]
        return out
    return obj


def _frame(kind: bytes, payload: bytes) -> bytes:
    body = kind + payload
    return str(len(body)).encode() + b"\n" + body


def _seconds(v: Optional[float], what: str) -> Optional[float]:
    """A socket timeout as the socket module takes it: None or infinity (no limit), or
    seconds >= 0; anything else is one error naming the argument (it was the socket
    module's OverflowError for infinity, 'Timeout value out of range' for -1)."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{what}: seconds (a number) or None, not a {type(v).__name__}")
    if math.isnan(v) or v < 0:
        raise ValueError(f"{what}: seconds >= 0 or None, not {v}")
    return None if v > 1e9 else float(v)       # beyond 30 years: no limit (the socket's bound)


def _want(v: Any, kind: Union[type, tuple[type, ...]]) -> Any:
    """v when it is a ``kind`` (a bool is no int here), else TypeError: what the
    shapes of surge.remote's values (Client._remote_as) are made of."""
    if not isinstance(v, kind) or (isinstance(v, bool) and kind in (int, float, (int, float))):
        raise TypeError(f"not a {kind}")
    return v


def _values(v: Any) -> Any:
    """A list of Lua values as Python returns them: None, the value, or a tuple."""
    vals = _want(v, list)
    return None if not vals else vals[0] if len(vals) == 1 else tuple(vals)


def _waited(r: Any) -> tuple[bool, Any]:
    r = _want(r, dict)
    return _want(r["done"], bool), r.get("value")


class Task:
    """A task launched through :meth:`Client.launch` (its id is its lcore)."""

    def __init__(self, client: Client, task_id: int, name: str) -> None:
        self.client, self.id, self.name = client, task_id, name

    def state(self) -> str:
        """``running``, ``stopping``, ``done``, ``failed`` or ``gone`` (collected by a wait)."""
        return str(self.client._remote_as("state", lambda v: _want(v, str), {"id": self.id}))

    def stop(self) -> int:
        """Asks the task to end (its ``surge.running()`` turns false)."""
        return int(self.client._remote_as("stop", lambda v: _want(v, int), {"id": self.id}))

    def wait(self, timeout: Optional[float] = None) -> Any:
        """Waits for the task to end (at most ``timeout`` s: then None); returns its
        first value (a failure raises :class:`SurgeError`). A wait longer than the
        client's timeout is several requests, so it is never cut."""
        return self.client._wait(self.id, timeout)

    def __repr__(self) -> str:
        return f"Task({self.id}, {self.name!r})"


class Client:
    """One connection to a surge control socket. Calls are serialised (one
    request at a time per connection, as surge serves them); a client may be
    used from several threads."""

    def __init__(self, path: str, timeout: Optional[float] = 30.0, name: Optional[str] = None) -> None:
        self.path = path
        self.name = name          # prefixes errors when given (a fleet's instance name)
        self.timeout = timeout = _seconds(timeout, "timeout")
        self._lock = threading.Lock()
        self._sock: Optional[socket.socket] = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(path)
        except OSError as e:
            self._sock.close()
            self._sock = None
            raise ConnectionClosed(f"cannot connect to the control socket {path}: {e.strerror or e} "
                                   "(is `surge run --control` running?)", instance=name) from None

    # -- the wire -----------------------------------------------------------
    # Every read has the call's deadline: a peer that trickles bytes, sends half
    # a frame or nothing cannot hold a call longer than its timeout.
    def _recv_exact(self, n: int, deadline: Optional[float]) -> bytes:
        assert self._sock is not None
        buf = bytearray()
        while len(buf) < n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise socket.timeout
                self._sock.settimeout(left)
            chunk = self._sock.recv(min(n - len(buf), 1 << 16))
            if not chunk:
                raise EOFError
            buf += chunk
        return bytes(buf)

    def _recv_frame(self, deadline: Optional[float]) -> bytes:
        head = b""
        while True:
            c = self._recv_exact(1, deadline)
            if c == b"\n" and head:
                break
            if not c.isdigit() or len(head) >= _LEN_DIGITS:
                raise _NotSurge(f"a header that is not a length ({(head + c)[:16]!r})")
            head += c
        n = int(head)
        if not 1 <= n <= MAX_FRAME:
            raise _NotSurge(f"a frame of {n} bytes (surge's are 1 to {MAX_FRAME})")
        return self._recv_exact(n, deadline)

    def request(self, kind: str, text: str, timeout: Optional[float] = None,
                on_progress: Optional[Callable[[str], None]] = None) -> tuple[str, str]:
        """Sends one raw request (``e`` or ``c``); returns (reply kind, text). ``timeout``
        (default: the client's) bounds each frame of the reply."""
        payload = _utf8(text)
        if len(payload) + 1 > MAX_FRAME:
            raise SurgeError(f"the request is {len(payload) + 1} bytes, more than the {MAX_FRAME} surge takes",
                             instance=self.name)
        limit = _seconds(timeout, "timeout") if timeout is not None else self.timeout
        with self._lock:
            if self._sock is None:
                raise ConnectionClosed("the connection is closed", instance=self.name)
            try:
                self._sock.settimeout(limit)
                try:
                    self._sock.sendall(_frame(kind.encode(), payload))
                except OSError as e:
                    # surge may have refused the connection ("too many clients attached")
                    # and closed it: its reply is there to read, and says why
                    body = self._pending_reply()
                    if body is None:
                        raise e
                    return self._finish(body, "refused")
                while True:
                    body = self._recv_frame(None if limit is None else time.monotonic() + limit)
                    k, rest = body[:1].decode("latin-1"), body[1:].decode("utf-8", "replace")
                    if k == "p" and on_progress is not None:
                        for line in rest.replace("\r", "\n").splitlines():
                            line = line.strip().removeprefix("progress: ").strip()
                            if line:
                                on_progress(line)
                        continue
                    if k not in ("o", "m", "e"):
                        raise _NotSurge(f"a reply of kind {k!r}")
                    return k, rest
            except socket.timeout:
                # the reply would come later and answer the wrong call: this connection is done
                self._close_locked()
                raise SurgeError(f"no reply within {limit} s "
                                 "(the connection was closed; the command it sent was interrupted)",
                                 instance=self.name) from None
            except _NotSurge as e:
                self._close_locked()
                raise SurgeError(f"{self.path} is not a surge control socket: it sent {e} "
                                 "(the connection was closed)", instance=self.name) from None
            except (EOFError, OSError) as e:
                self._close_locked()
                why = "" if isinstance(e, EOFError) else f": {e.strerror or e}"
                raise ConnectionClosed(f"the control socket closed during the call (the instance ended){why}",
                                       instance=self.name) from None
            except BaseException:
                # anything else (the progress callback raised, Ctrl-C) leaves the rest
                # of the reply unread, which would answer the next call
                self._close_locked()
                raise

    def _pending_reply(self) -> Optional[bytes]:
        """A frame the server sent before it closed, if there is one (briefly waited for)."""
        try:
            return self._recv_frame(time.monotonic() + 1.0)
        except (EOFError, OSError, _NotSurge):
            return None

    def _finish(self, body: bytes, why: str) -> NoReturn:
        self._close_locked()
        text = body[1:].decode("utf-8", "replace").strip()
        raise ConnectionClosed(f"the instance {why} the connection: {text}", instance=self.name)

    def _close_locked(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def close(self) -> None:
        """Detaches (the run goes on)."""
        with self._lock:
            self._close_locked()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._sock is None

    # -- surge.remote ---------------------------------------------------------
    def remote_output(self, fn: str, args: Optional[dict[str, Any]] = None, timeout: Optional[float] = None,
                      on_progress: Optional[Callable[[str], None]] = None) -> tuple[Any, str]:
        """Calls ``surge.remote``'s function ``fn`` with ``args``; returns (its value,
        what was printed meanwhile)."""
        args = dict(args or {})
        code = args.pop("code", None)       # apart: Lua's lexer reads it faster than the JSON decoder
        req = json.dumps({"fn": fn, "args": to_wire(args)}, ensure_ascii=False, allow_nan=False)
        extra = "" if code is None else ", " + lua_literal(str(code))
        kind, text = self.request("e", "require(\"surge.remote\").run(" + lua_literal(req) + extra + ")", timeout,
                                  on_progress)
        if kind == "e":
            raise SurgeError(text.strip().removeprefix("error: ").strip() or "error", instance=self.name)
        if kind != "o":
            self._not_surge(f"a reply of kind {kind!r} to a whole request")
        out, sep, js = text.rpartition(MARK)
        if not sep:
            if fn == "eval" and any(w in text for w in _LEFT):
                return None, text       # the code left the prompt (exit(), os.exit): surge said so
            self._not_surge(f"a reply without surge.remote's marker ({text[:40]!r})")
        try:
            return json.loads(js, object_hook=_from_wire), out
        except _NotPython as e:
            raise SurgeError(f"cannot return {e} (return another value)", instance=self.name) from None
        except (ValueError, RecursionError) as e:
            self._not_surge(f"a reply that is not JSON ({str(e)[:80]})")

    def _not_surge(self, what: str) -> NoReturn:
        self.close()
        raise SurgeError(f"{self.path} is not a surge control socket: it sent {what} "
                         "(the connection was closed)", instance=self.name)

    def remote(self, fn: str, args: Optional[dict[str, Any]] = None, timeout: Optional[float] = None) -> Any:
        """The value of ``surge.remote``'s function ``fn`` (see :meth:`remote_output`)."""
        return self.remote_output(fn, args, timeout)[0]

    def _remote_as(self, fn: str, shape: Callable[[Any], Any], args: Optional[dict[str, Any]] = None,
                   timeout: Optional[float] = None) -> Any:
        """``remote(fn, args)`` read by ``shape``, which raises TypeError (or ValueError,
        KeyError, ...) where the value is not what surge.remote's ``fn`` returns: then the
        peer is not surge (SurgeError), never the reader's own exception."""
        v = self.remote(fn, args, timeout)
        try:
            return shape(v)
        except (TypeError, ValueError, KeyError, IndexError, OverflowError, AttributeError):
            self._not_surge(f"a value of {fn} that is not one ({str(v)[:40]!r})")

    # -- evaluation -----------------------------------------------------------
    def eval_output(self, code: str, timeout: Optional[float] = None,
                    on_progress: Optional[Callable[[str], None]] = None) -> tuple[Any, str]:
        """Evaluates Lua code in the instance's master VM, as a line typed at its
        prompt; returns (value, what the code printed). The value: None for no
        value, the value for one, a tuple for several."""
        vals, out = self.remote_output("eval", {"code": code, "progress": on_progress is not None}, timeout,
                                       on_progress)
        if vals is None and any(w in out for w in _LEFT):
            return None, out            # the code left the prompt (remote_output)
        if not isinstance(vals, list):
            self._not_surge(f"a value of eval that is not a list ({str(vals)[:40]!r})")
        return _values(vals), out

    def eval(self, code: str, timeout: Optional[float] = None,
             on_progress: Optional[Callable[[str], None]] = None) -> Any:
        """Evaluates Lua code (an expression or statements) and returns its value as
        Python data. A Lua error raises :class:`SurgeError` with surge's line."""
        return self.eval_output(code, timeout, on_progress)[0]

    def call(self, fn: str, *args: Any, timeout: Optional[float] = None) -> Any:
        """Calls a Lua function by name with Python arguments: ``call("surge.ports")``."""
        return self._remote_as("call", _values, {"fn": fn, "args": list(args), "n": len(args)}, timeout)

    def complete(self, word: str) -> list[str]:
        """What Tab would complete ``word`` to at the prompt."""
        kind, text = self.request("c", word)
        return [w for w in text.split("\n") if w] if kind == "o" else []

    # -- tasks, rates, stats ----------------------------------------------------
    def launch(self, fn: str, *args: Any) -> Task:
        """Starts a task: the script's global function ``fn`` (or ``MODULE:FUNCTION``)
        with the arguments (Python data or :class:`Lua` expressions)."""
        t = self._remote_as("launch", lambda t: (_want(t["id"], int), _want(t["name"], str)),
                            {"fn": fn, "args": list(args), "n": len(args)})
        return Task(self, t[0], t[1])

    def stop(self, task: Optional[Union[Task, int]] = None) -> int:
        """Stops one task (a :class:`Task` or id) or every running task; returns how many."""
        tid = task.id if isinstance(task, Task) else task
        return int(self._remote_as("stop", lambda v: _want(v, int), {"id": tid}))

    def _wait(self, tid: Optional[int], timeout: Optional[float]) -> Any:
        # slices shorter than the socket's timeout: a long wait is never cut, and
        # never interrupts what it waits for
        deadline = None if timeout is None else time.monotonic() + timeout
        per = 5.0 if self.timeout is None else max(0.05, min(5.0, self.timeout / 3))
        while True:
            left = per if deadline is None else max(0.0, min(per, deadline - time.monotonic()))
            done, value = self._remote_as("wait", _waited, {"id": tid, "slice": left})
            if done:
                return value
            if deadline is not None and time.monotonic() >= deadline:
                return None

    def wait(self, timeout: Optional[float] = None) -> Any:
        """Waits for every task (``surge.wait()``): their first values in launch order,
        or None after ``timeout`` s. Never cut by the client's own timeout."""
        return self._wait(None, timeout)

    def tasks(self) -> list[dict[str, Any]]:
        """Every task of the run: id (lcore), fn, state and its error when it failed."""
        return list(self._remote_as("tasks", lambda v: _want(v or [], list)))

    def set_rate(self, port: int, queue: int, rate: Union[str, float]) -> str:
        """Re-rates tx queue ``queue`` of port ``port`` (``"2mpps"``, ``"1gbps"``, packets/s);
        takes effect at the task's next send. Returns the queue's line."""
        return str(self._remote_as("set_rate", lambda v: _want(v, str),
                                   {"port": int(port), "queue": int(queue), "rate": rate}))

    def stats(self) -> dict[str, Any]:
        """The running instance's counters now: ``ports`` (``port:stats()`` of each open
        port, with ``port``), ``queues`` (each tx/rx queue's stats, with ``port``,
        ``queue``, ``dir``) and ``counters`` (custom counters and gauges: ``name``,
        ``kind``, ``value``, ``lcores``). Reading them changes nothing in the results."""
        return dict(self._remote_as("stats", lambda v: _want(v, dict)))

    def results(self, timeout: Optional[float] = None) -> dict[str, Any]:
        """The run's results so far (``surge.results.collect()``), the structure
        ``--output`` writes (status ``running`` while tasks run)."""
        return dict(self._remote_as("results", lambda v: _want(v, dict), timeout=timeout))

    def scenario(self, name: str, options: Optional[dict[str, Any]] = None,
                 progress: Optional[Callable[[str], None]] = None, timeout: Optional[float] = None) -> Any:
        """Runs scenario ``name`` (``rfc2544``, ``load-latency``, ... or a module of the
        instance's path) with its options (CLI names, ``_`` for ``-``) and returns its
        results. ``progress(line)`` gets each progress line as the CLI prints it."""
        return self.remote_output("scenario", {"name": name, "options": options or {}, "progress": True},
                                  timeout, progress or (lambda _line: None))[0]

    def stop_run(self) -> None:
        """Ends the whole run, as SIGTERM would (``surge.stop()``): the instance writes its
        ``--output`` and exits."""
        try:
            self.remote("stop_run")
        except ConnectionClosed:
            pass


class _NotSurge(Exception):
    """What the peer sent is not surge's protocol (the message says what it was)."""


def connect(path: str, timeout: Optional[float] = 30.0, wait: float = 0.0, name: Optional[str] = None) -> Client:
    """Connects to the control socket at ``path`` (``surge run --control PATH``, or the
    local end of ``ssh -L local.sock:remote.sock``). ``wait``: seconds to keep trying
    while the instance starts."""
    deadline = time.monotonic() + wait
    while True:
        try:
            return Client(path, timeout, name)
        except ConnectionClosed:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
