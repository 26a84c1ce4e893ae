"""How long the Python client's calls take (docs/performance.md, "The Python
client's calls"): an idle instance, then the mean time of a few calls of each
kind. Run from the source tree after a build:

    python3 tests/python/bench_calls.py [path/to/surge]
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
sys.path.insert(0, os.path.join(SRC, "python"))

import surge  # noqa: E402


def main() -> None:
    exe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build/surge")
    with tempfile.TemporaryDirectory(prefix="surge-bench-") as d:
        sock = os.path.join(d, "s.sock")
        proc = subprocess.Popen([exe, "run", "--no-huge", "--quiet", "--lcores", "(0-1)@(0-1)", "--file-prefix",
                                 f"bench-py-{os.getpid()}", "--control", sock,
                                 os.path.join(SRC, "tests/python/scripts/idle.lua")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            c = surge.connect(sock, wait=30)
            calls: list[tuple[str, int, Callable[[], Any]]] = [
                ('c.eval("1")', 200, lambda: c.eval("1")),
                ("c.tasks()", 200, c.tasks),
                ("c.eval of a 400 kB string literal (ASCII)", 6, lambda: c.eval("#'" + "x" * 400000 + "'")),
                ("the same, 100 000 é (200 kB of UTF-8)", 6, lambda: c.eval("#'" + "é" * 100000 + "'")),
            ]
            for label, n, fn in calls:
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                print(f"{label}: {(time.perf_counter() - t0) / n * 1e3:.2f} ms")
            c.stop_run()
        finally:
            if proc.wait(30) is None:
                proc.kill()


if __name__ == "__main__":
    main()
