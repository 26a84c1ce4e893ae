"""The client of one surge instance's control socket (``surge run --control PATH``).

The wire format is surge's own (docs/repl.md, "Attaching"): each message is
its length in ASCII decimal, a newline, then that many bytes; a request is
``e`` + Lua source, a reply ``o`` (done), ``m`` (more lines needed) or ``e``
(error) + text. To get *values* rather than printed text, :meth:`Client.eval`
sends the user's code inside a small Lua wrapper that runs it in the prompt's
environment and prints its values as JSON after a marker; the wrapper may also
send ``p`` frames (progress lines) before the reply, which only this client asks
for. Nothing changes on the server's side of the protocol.
"""
from __future__ import annotations

import json
import socket
import time
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

__all__ = ["Client", "Lua", "SurgeError", "ConnectionClosed", "Task", "connect", "lua_literal"]

MAX_FRAME = 1 << 20          # surge's limit on a request or a reply (core/front/socket.c)
MARK = "\x00surge-py\x00"     # separates what the code printed from its values


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


def lua_literal(v: Any) -> str:
    """Python data as Lua source: None, bool, int, float, str, list/tuple, dict
    and :class:`Lua` (inserted verbatim)."""
    if isinstance(v, Lua):
        return "(" + v.expr + ")"
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "(0/0)"
        if v in (float("inf"), float("-inf")):
            return "math.huge" if v > 0 else "-math.huge"
        return repr(v)
    if isinstance(v, (bytes, str)):
        b = v.encode("utf-8") if isinstance(v, str) else v
        out = []
        for c in b:
            if c in (0x22, 0x5C):
                out.append("\\" + chr(c))
            elif 0x20 <= c < 0x7F:
                out.append(chr(c))
            else:
                # a decimal escape is 3 digits, so a digit after it cannot join it
                out.append("\\%03d" % c)
        return '"' + "".join(out) + '"'
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua_literal(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join("[" + lua_literal(k) + "] = " + lua_literal(x) for k, x in v.items()) + "}"
    raise TypeError(f"cannot pass a {type(v).__name__} to Lua")


# Runs the user's code (%(code)s) as the prompt runs a line: first as an
# expression, then as a statement, under the name "prompt" so errors read as at
# the prompt. Its values become JSON: tables with keys 1..n arrays, other tables
# objects (keys as strings), handles (ports, queues, tasks) their printed text,
# 64-bit counters numbers. One line, so that nothing shifts the user's lines.
_WRAPPER = (
    "do local code, progress = %(code)s, %(progress)s "
    "local json = require('surge.results.json') "
    "local env = getfenv(1) "
    "local fn, err = load('return (function(...) return ... end)(' .. code .. '\\n)', '=prompt', 't') "
    "if not fn then fn, err = load(code, '=prompt', 't') end "
    "if not fn then error(err, 0) end "
    "setfenv(fn, env) jit.off(fn, true) "
    "local function conv(v, seen) local t = type(v) "
    "if t == 'number' or t == 'string' or t == 'boolean' then return v end "
    "if t == 'nil' then return json.null end "
    "if t == 'cdata' then local n = tonumber(v) if n then return n end return tostring(v) end "
    "if t ~= 'table' then return tostring(v) end "
    "local mt = getmetatable(v) "
    "if v == json.null then return v end "
    "if type(mt) == 'table' and rawget(mt, '__json') == 'array' then local a = json.array() "
    "for i = 1, #v do a[i] = conv(v[i], seen) end return a end "
    "if mt ~= nil then return require('surge.repl.show').format(v, 1) end "
    "if seen[v] then return '<cycle>' end seen[v] = true "
    "local n, max = 0, 0 for k in pairs(v) do n = n + 1 "
    "if type(k) == 'number' and k >= 1 and k == math.floor(k) then max = math.max(max, k) end end "
    "local out if n == max then out = json.array() for i = 1, n do out[i] = conv(v[i], seen) end "
    "else out = {} for k, x in pairs(v) do out[tostring(k)] = conv(x, seen) end end "
    "seen[v] = nil return out end "
    "local R = package.loaded['surge.repl'] local id = R and R.requester and R.requester() "
    "local P = require('surge.results.progress') local tapped, old_tap = false, nil "
    "if progress and id then local replio = require('surge.replio') tapped = true "
    "old_tap = P.tap(function(s) pcall(replio.reply, id, 'p', s) end) end "
    "local function restore() if tapped then P.tap(old_tap) tapped = false end end "
    "local function where(e) restore() "
    "if type(e) ~= 'string' or e:match('^[^\\n]-:%%d+: ') or e:match('^interrupted %%(') then return e end "
    "for level = 2, 400 do local info = debug.getinfo(level, 'Sl') if not info then break end "
    "if info.source == '=prompt' and info.currentline > 0 then "
    "return ('prompt:%%d: %%s'):format(info.currentline, e) end end return e end "
    "local function pack(...) return { n = select('#', ...), ... } end "
    "local res = pack(xpcall(fn, where)) restore() "
    "if not res[1] then error(res[2], 0) end "
    "local vals = json.array() for i = 2, res.n do vals[i - 1] = conv(res[i], {}) end "
    "print(%(mark)s .. json.encode(vals)) end"
)


def _frame(kind: bytes, payload: bytes) -> bytes:
    body = kind + payload
    return str(len(body)).encode() + b"\n" + body


class Task:
    """A task launched through :meth:`Client.launch` (its id is its lcore)."""

    def __init__(self, client: "Client", task_id: int, name: str) -> None:
        self.client, self.id, self.name = client, task_id, name

    def state(self) -> str:
        """``running``, ``stopping``, ``done`` or ``failed``."""
        return self.client.eval(f"(function() for _, t in ipairs(surge.tasks()) do if t.id == {self.id} then "
                                "if t.ok == nil then return t.stopping and 'stopping' or 'running' end "
                                "return t.ok and 'done' or 'failed' end end return 'gone' end)()")

    def stop(self) -> int:
        """Asks the task to end (its ``surge.running()`` turns false)."""
        return self.client.eval(f"stop({self.id})")

    def wait(self, timeout: Optional[float] = None) -> Any:
        """Waits for the task to end; returns its first value (a failure raises :class:`SurgeError`)."""
        return self.client.eval(f"surge.wait({self.id}, {lua_literal(timeout)})")

    def __repr__(self) -> str:
        return f"Task({self.id}, {self.name!r})"


class Client:
    """One connection to a surge control socket. Calls are serialised (one
    request at a time per connection, as surge serves them); a client may be
    used from several threads."""

    def __init__(self, path: str, timeout: Optional[float] = 30.0, name: Optional[str] = None) -> None:
        self.path = path
        self.name = name          # prefixes errors when given (a fleet's instance name)
        self.timeout = timeout
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
    def _recv_exact(self, n: int) -> bytes:
        assert self._sock is not None
        buf = bytearray()
        while len(buf) < n:
            chunk = self._sock.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return bytes(buf)

    def _recv_frame(self) -> bytes:
        head = b""
        while not head.endswith(b"\n"):
            head += self._recv_exact(1)
            if len(head) > 12:
                raise SurgeError(f"not a surge reply (header {head!r})", instance=self.name)
        return self._recv_exact(int(head))

    def request(self, kind: str, text: str, timeout: Optional[float] = None,
                on_progress: Optional[Callable[[str], None]] = None) -> tuple[str, str]:
        """Sends one raw request (``e`` or ``c``); returns (reply kind, text)."""
        payload = text.encode("utf-8")
        if len(payload) + 1 > MAX_FRAME:
            raise SurgeError(f"the request is {len(payload) + 1} bytes, more than the {MAX_FRAME} surge takes",
                             instance=self.name)
        with self._lock:
            if self._sock is None:
                raise ConnectionClosed("the connection is closed", instance=self.name)
            self._sock.settimeout(timeout if timeout is not None else self.timeout)
            try:
                self._sock.sendall(_frame(kind.encode(), payload))
                while True:
                    body = self._recv_frame()
                    k, rest = body[:1].decode(), body[1:].decode("utf-8", "replace")
                    if k == "p":
                        if on_progress is not None:
                            for line in rest.replace("\r", "\n").splitlines():
                                line = line.strip().removeprefix("progress: ").strip()
                                if line:
                                    on_progress(line)
                        continue
                    return k, rest
            except socket.timeout:
                # the reply would come later and answer the wrong call: this connection is done
                self._close_locked()
                raise SurgeError(f"no reply within {timeout if timeout is not None else self.timeout} s "
                                 "(the connection was closed; the command it sent was interrupted)",
                                 instance=self.name) from None
            except (EOFError, OSError) as e:
                self._close_locked()
                why = "" if isinstance(e, EOFError) else f": {e.strerror or e}"
                raise ConnectionClosed(f"the control socket closed during the call (the instance ended){why}",
                                       instance=self.name) from None

    def _close_locked(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def close(self) -> None:
        """Detaches (the run goes on)."""
        with self._lock:
            self._close_locked()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._sock is None

    # -- evaluation -----------------------------------------------------------
    def eval_output(self, code: str, timeout: Optional[float] = None,
                    on_progress: Optional[Callable[[str], None]] = None) -> tuple[Any, str]:
        """Evaluates Lua code in the instance's master VM, as a line typed at its
        prompt; returns (value, what the code printed). The value: None for no
        value, the value for one, a tuple for several."""
        wrapped = _WRAPPER % {"code": lua_literal(code), "progress": "true" if on_progress else "false",
                              "mark": lua_literal(MARK)}
        kind, text = self.request("e", wrapped, timeout, on_progress)
        if kind == "e":
            raise SurgeError(text.strip().removeprefix("error: ").strip() or "error", instance=self.name)
        if kind != "o":
            raise SurgeError(f"unexpected reply {kind!r}: {text.strip()}", instance=self.name)
        out, sep, js = text.rpartition(MARK)
        if not sep:
            # the code left the prompt (exit(), os.exit): surge said what happened
            return None, text
        vals = json.loads(js)
        value = None if not vals else vals[0] if len(vals) == 1 else tuple(vals)
        return value, out

    def eval(self, code: str, timeout: Optional[float] = None,
             on_progress: Optional[Callable[[str], None]] = None) -> Any:
        """Evaluates Lua code (an expression or statements) and returns its value as
        Python data. A Lua error raises :class:`SurgeError` with surge's line."""
        return self.eval_output(code, timeout, on_progress)[0]

    def call(self, fn: str, *args: Any, timeout: Optional[float] = None) -> Any:
        """Calls a Lua function by name with Python arguments: ``call("surge.ports")``."""
        return self.eval(f"{fn}({', '.join(lua_literal(a) for a in args)})", timeout)

    def complete(self, word: str) -> list[str]:
        """What Tab would complete ``word`` to at the prompt."""
        kind, text = self.request("c", word)
        return [w for w in text.split("\n") if w] if kind == "o" else []

    # -- tasks, rates, stats ----------------------------------------------------
    def launch(self, fn: str, *args: Any) -> Task:
        """Starts a task: the script's global function ``fn`` (or ``MODULE:FUNCTION``)
        with the arguments (Python data or :class:`Lua` expressions)."""
        tid, name = self.eval(f"(function(t) return t.id, t.name end)(launch({lua_literal(fn)}"
                              + "".join(", " + lua_literal(a) for a in args) + "))")
        return Task(self, int(tid), name)

    def stop(self, task: Optional[Union[Task, int]] = None) -> int:
        """Stops one task (a :class:`Task` or id) or every running task; returns how many."""
        tid = task.id if isinstance(task, Task) else task
        return self.eval(f"stop({lua_literal(tid)})")

    def wait(self, timeout: Optional[float] = None) -> Any:
        """Waits for every task (``surge.wait()``)."""
        return self.eval(f"surge.wait(nil, {lua_literal(timeout)})", timeout=None if timeout is None else timeout + 10)

    def tasks(self) -> list[dict[str, Any]]:
        """Every task of the run: id (lcore), fn, state and its error when it failed."""
        return self.eval("(function() local out = {} for _, t in ipairs(surge.tasks()) do "
                         "out[#out + 1] = { id = t.id, fn = (t.fn:gsub('^=', '')), "
                         "state = t.ok == nil and (t.stopping and 'stopping' or 'running') "
                         "or (t.ok and 'done' or 'failed'), "
                         "error = t.ok == false and tostring(t.value):match('^[^\\n]*') or nil } end "
                         "return out end)()") or []

    def set_rate(self, port: int, queue: int, rate: Union[str, float]) -> str:
        """Re-rates tx queue ``queue`` of port ``port`` (``"2mpps"``, ``"1gbps"``, packets/s);
        takes effect at the task's next send. Returns the queue's line."""
        return self.eval(f"surge.port({int(port)}):txq({int(queue)}):set_rate({lua_literal(rate)})")

    def stats(self) -> dict[str, Any]:
        """The running instance's counters now: ``ports`` (``port:stats()`` of each open
        port, with ``port``), ``queues`` (each tx/rx queue's stats, with ``port``,
        ``queue``, ``dir``) and ``counters`` (custom counters and gauges: ``name``,
        ``kind``, ``value``, ``lcores``). Reading them changes nothing in the results."""
        return self.eval(
            "(function() local A = require('surge.results.json').array "
            "local ports, queues = A(), A() "
            "for p = 0, surge.ports() - 1 do local port = surge.handles.port(p) "
            "local ok, s = pcall(port.stats, port) if ok then s.port = p ports[#ports + 1] = s "
            "local info = port:info() "
            "for i = 0, info.txq - 1 do local q = port:txq(i):stats() q.port, q.queue, q.dir = p, i, 'tx' "
            "queues[#queues + 1] = q end "
            "for i = 0, info.rxq - 1 do local q = port:rxq(i):stats() q.port, q.queue, q.dir = p, i, 'rx' "
            "queues[#queues + 1] = q end end end "
            "return { ports = ports, queues = queues, counters = A(require('surge.counter').all()) } end)()")

    def results(self, timeout: Optional[float] = None) -> dict[str, Any]:
        """The run's results so far (``surge.results.collect()``), the structure
        ``--output`` writes (status ``running`` while tasks run)."""
        return json.loads(self.eval("require('surge.results.json').encode(surge.results.collect())", timeout))

    def scenario(self, name: str, options: Optional[dict[str, Any]] = None,
                 progress: Optional[Callable[[str], None]] = None, timeout: Optional[float] = None) -> Any:
        """Runs scenario ``name`` (``rfc2544``, ``load-latency``, ... or a module of the
        instance's path) with its options (CLI names, ``_`` for ``-``) and returns its
        results. ``progress(line)`` gets each progress line as the CLI prints it."""
        mod = "surge.scenario." + name.replace("-", "_") if "." not in name else name
        code = (f"(function() local ok, m = pcall(require, {lua_literal(mod)}) "
                f"if not ok then ok, m = pcall(require, {lua_literal(name)}) end "
                f"if not ok then error({lua_literal('unknown scenario ' + repr(name))}, 0) end "
                f"return m.run({lua_literal(options or {})}) end)()")
        return self.eval(code, timeout=timeout, on_progress=progress or (lambda _line: None))

    def stop_run(self) -> None:
        """Ends the whole run, as SIGTERM would (``surge.stop()``): the instance writes its
        ``--output`` and exits."""
        try:
            self.eval("surge.stop()")
        except ConnectionClosed:
            pass


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

