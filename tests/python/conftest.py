"""Fixtures of the Python client's tests: real surge instances on virtual devices."""
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Iterator, Sequence

import pytest

SRC = os.environ.get("SURGE_SRC") or os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
SURGE = os.environ.get("SURGE") or os.path.join(SRC, "build/surge")
SCRIPT = os.path.join(SRC, "tests/python/scripts/fleet_tx.lua")
IDLE = os.path.join(SRC, "tests/python/scripts/idle.lua")
sys.path.insert(0, os.path.join(SRC, "python"))

import surge  # noqa: E402


class Instance:
    """`surge run --control SOCK ...` in the background; stopped at the end."""

    def __init__(self, tmp: str, name: str, args: Sequence[str], lcores: str = "(0-2)@(0-1)") -> None:
        self.sock = os.path.join(tmp, name + ".sock")
        self.log = os.path.join(tmp, name + ".log")
        self.output = os.path.join(tmp, name + ".json")
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                ["timeout", "-k", "5", "200", SURGE, "run", "--no-huge", "--lcores", lcores, "--stats-interval", "0",
                 "--file-prefix", f"py-{name}-{os.getpid()}", "--control", self.sock, "--output", self.output, *args],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        for _ in range(600):
            if self.proc.poll() is not None:
                raise AssertionError(f"surge ended before its socket answered:\n{self.text()}")
            try:
                self.client = surge.connect(self.sock)
                break
            except surge.ConnectionClosed:
                time.sleep(0.05)
        else:
            raise AssertionError(f"no control socket after 30 s:\n{self.text()}")

    def text(self) -> str:
        with open(self.log, errors="replace") as f:
            return f.read()

    def end(self) -> int:
        self.client.close()
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(timeout=30)


MakeInstance = Callable[..., Instance]      # the `instance` fixture: instance(name, args, lcores=...)


@pytest.fixture
def tmp() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="surge-py-") as d:
        yield d


@pytest.fixture
def instance(tmp: str) -> Iterator[MakeInstance]:
    made: list[Instance] = []

    def make(name: str = "a", args: Sequence[str] = (SCRIPT,), **kw: Any) -> Instance:
        i = Instance(tmp, name, list(args), **kw)
        made.append(i)
        return i
    yield make
    for i in made:
        i.end()
