"""Several surge instances driven as one: a common start time, one stop, one
merged results file; a failed instance fails the run and the others stop.

Each instance is ``surge run --control SOCK SCRIPT`` whose master calls
``require("surge.fleet").wait_start()`` before it launches its tasks. The
controller reaches each socket directly (same host) or through OpenSSH's socket
forwarding (``ssh -L /tmp/a.sock:/run/surge/ctl.sock host``): no protocol of
our own crosses the network. See docs/python.md, "Several instances as one".
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from .client import Client, ConnectionClosed, SurgeError, _want, connect
from .results import merge

__all__ = ["Instance", "Fleet", "FleetError", "merge"]


def _collected(v: Any) -> dict[str, Any]:
    """stop_collect's value: a results structure (its status read by Fleet.stop)."""
    _want(_want(v, dict).get("status"), str)
    if v["status"] == "failed":
        _want(v.get("error"), str)
    return dict(v)


class FleetError(SurgeError):
    """One instance failed; ``instance`` names it, ``message`` is its error."""


@dataclass
class Instance:
    """One member of a fleet: its control socket (local, or the local end of an
    ``ssh -L`` forward), and the process when the fleet started it."""
    name: str
    socket: str
    process: Optional[subprocess.Popen[bytes]] = None
    log: Optional[str] = None                 # its stdout+stderr, when the fleet started it
    client: Optional[Client] = field(default=None, repr=False)
    results: Optional[dict[str, Any]] = field(default=None, repr=False)
    armed_lead_s: Optional[float] = None      # how far ahead the start time was when it arrived

    def last_error(self) -> Optional[str]:
        """The process's last error line (``surge: ...``, ``...: message``), if it has a log."""
        if not self.log or not os.path.exists(self.log):
            return None
        with open(self.log, errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
        # surge's error line is FILE:LINE: message (a script's or a task's error),
        # or "surge: ..." naming what failed; the summary lines after it are not it
        for ln in lines:
            if re.match(r"^\S+:\d+: ", ln):
                return ln
        for ln in reversed(lines):
            if ln.startswith("surge:") and re.search(r"error|fail|cannot|refused|invalid|unknown", ln):
                return ln
        return lines[-1] if lines else None


def start_local(name: str, script: str, args: Sequence[str] = (), *, surge: str = "surge",
                workdir: str, options: Sequence[str] = ()) -> Instance:
    """Starts ``surge run --control WORKDIR/NAME.sock [options] SCRIPT [args]`` here,
    its output in WORKDIR/NAME.log."""
    sock = os.path.join(workdir, name + ".sock")
    log = os.path.join(workdir, name + ".log")
    out = open(log, "w")
    proc = subprocess.Popen([surge, "run", "--control", sock, *options, script, *args], stdout=out,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    out.close()
    return Instance(name, sock, proc, log)


class Fleet:
    """N instances as one run."""

    def __init__(self, instances: Sequence[Instance]) -> None:
        if not instances:
            raise ValueError("a fleet needs at least one instance")
        names = [i.name for i in instances]
        if len(set(names)) != len(names):
            raise ValueError(f"instance names must differ: {names}")
        self.instances = list(instances)
        self.start_time: Optional[float] = None
        self._pool = ThreadPoolExecutor(max_workers=len(self.instances))

    def _each(self, fn: Callable[[Instance], Any]) -> list[tuple[Instance, Any, Optional[BaseException]]]:
        futs = [(i, self._pool.submit(fn, i)) for i in self.instances]
        out: list[tuple[Instance, Any, Optional[BaseException]]] = []
        for i, f in futs:
            try:
                out.append((i, f.result(), None))
            except BaseException as e:  # noqa: BLE001 - reported per instance
                out.append((i, None, e))
        return out

    def _error_of(self, inst: Instance, e: BaseException) -> str:
        why = e.message if isinstance(e, SurgeError) else str(e)
        if isinstance(e, ConnectionClosed) and inst.process is not None:
            try:
                inst.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            last = inst.last_error()
            if last:
                why = f"{last} (exit status {inst.process.returncode})"
        return why

    def connect(self, wait: float = 30.0) -> None:
        """Connects to every instance (each may still be starting: up to ``wait`` s)."""
        def one(i: Instance) -> None:
            deadline = time.monotonic() + wait
            while True:
                if i.process is not None and i.process.poll() is not None:
                    raise ConnectionClosed(f"ended before its control socket answered (exit status "
                                           f"{i.process.returncode})", instance=i.name)
                try:
                    i.client = connect(i.socket, timeout=30.0, name=i.name)
                    i.client.remote("health")
                    return
                except ConnectionClosed:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
        self._check(self._each(one), "connect")

    def _check(self, res: list[tuple[Instance, Any, Optional[BaseException]]], what: str) -> None:
        failed = [(i, e) for i, _, e in res if e is not None]
        if failed:
            i, e = failed[0]
            msg = self._error_of(i, e)
            self.abort()
            raise FleetError(f"{what}: {msg}", instance=i.name)

    def start(self, margin_s: float = 0.5) -> float:
        """Arms one start time, ``margin_s`` from now, on every instance (in parallel);
        each instance's ``surge.fleet.wait_start()`` returns at that wall-clock time.
        Returns it (Unix seconds)."""
        t = time.time() + margin_s
        self.start_time = t

        def arm(i: Instance) -> None:
            assert i.client is not None
            i.armed_lead_s = float(i.client._remote_as("arm", lambda v: _want(v, (int, float)), {"t": t}))
            if i.armed_lead_s <= 0:
                raise SurgeError(f"the start time arrived {-i.armed_lead_s * 1e3:.1f} ms late (its clock is "
                                 "ahead, or the link is slow): give a larger margin_s", instance=i.name)
        self._check(self._each(arm), "start")
        return t

    def health(self) -> None:
        """Raises :class:`FleetError` (after stopping the others) when an instance has a
        failed task or has gone."""
        def one(i: Instance) -> None:
            assert i.client is not None
            err = i.client.remote("health")
            if err:
                raise SurgeError(err, instance=i.name)
        self._check(self._each(one), "run")

    def run_for(self, seconds: float, poll_s: float = 0.2) -> None:
        """Lets the instances run ``seconds`` after the start, checking each every ``poll_s``."""
        assert self.start_time is not None, "start() first"
        end = self.start_time + seconds
        while time.time() < end:
            self.health()
            time.sleep(max(0.0, min(poll_s, end - time.time())))
        self.health()

    def stop(self) -> list[dict[str, Any]]:
        """Stops every instance's tasks at once and collects each one's results (final
        counters); the instances then end as their scripts do. Returns the results in
        instance order; a failed instance raises :class:`FleetError` naming it."""
        def one(i: Instance) -> dict[str, Any]:
            assert i.client is not None
            i.results = dict(i.client._remote_as("stop_collect", _collected, timeout=60))
            return i.results
        res = self._each(one)
        self._check(res, "stop")
        for i, r, _ in res:
            if r["status"] == "failed":
                self.abort()
                raise FleetError(f"run: {r['error']}", instance=i.name)
        return [r for _, r, _ in res]

    def abort(self) -> None:
        """Stops every instance still there (its tasks and its run)."""
        def one(i: Instance) -> None:
            if i.client is not None and not i.client.closed:
                try:
                    i.client.remote("stop_run", timeout=10)
                except SurgeError:
                    pass
        self._each(one)

    def close(self, timeout: float = 30.0) -> None:
        """Detaches and waits for the processes the fleet started."""
        for i in self.instances:
            if i.client is not None:
                i.client.close()
            if i.process is not None:
                try:
                    i.process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    i.process.kill()
                    i.process.wait()
        self._pool.shutdown()

    def merged(self) -> dict[str, Any]:
        """The merged results file (after :meth:`stop`)."""
        missing = [i.name for i in self.instances if i.results is None]
        if missing:
            raise FleetError(f"no results yet from {', '.join(missing)}: stop() first")
        return merge({i.name: i.results for i in self.instances if i.results is not None},
                     start_time=self.start_time)

    def __enter__(self) -> "Fleet":
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:
            self.abort()
        self.close()


def write(path: str, data: dict[str, Any]) -> None:
    """Writes a results file as surge does: to a temporary name, then renamed."""
    tmp = f"{path}.tmp{os.getpid()}.{threading.get_ident()}"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
