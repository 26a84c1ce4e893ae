"""surgebench.common - what every bench shares: its work folder and the
clean-up on every exit (the end, a failure, Ctrl-C or SIGTERM: exit 130),
the one-line errors, the tables (aligned text or Markdown), the logs."""
from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from types import FrameType
from typing import Callable, List, Optional, Sequence

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class Fail(Exception):
    """Ends the bench with exit 1 (its message, if any, already printed)."""


def on_signals() -> None:
    """SIGINT and SIGTERM end the bench with exit 130, its clean-up run."""
    def stop(_sig: int, _frame: Optional[FrameType]) -> None:
        raise SystemExit(130)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)


def status(rc: int) -> int:
    """A child's exit status as the shell gives it (128 + N for signal N)."""
    return 128 - rc if rc < 0 else rc


def utc_now() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.rstrip("\n").split(": ")[1]
    except (OSError, IndexError):
        pass
    return ""


def stop_proc(p: "subprocess.Popen[bytes]", sig: int = signal.SIGTERM, grace: float = 10.0) -> int:
    """Sends sig, then SIGKILL after grace seconds; reaped. Its status."""
    if p.poll() is None:
        try:
            p.send_signal(sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return status(p.returncode)


def rm_runtime(pattern: str) -> None:
    """DPDK runtime folders (/var/run/dpdk/PATTERN) the bench's runs left."""
    for d in glob.glob("/var/run/dpdk/" + pattern):
        shutil.rmtree(d, ignore_errors=True)


class Work:
    """The bench's temporary folder, with the logs copied out on exit."""

    def __init__(self, template: str, logdir: str, keep: Sequence[str]) -> None:
        self.path = tempfile.mkdtemp(prefix=template)
        self.logdir, self.keep = logdir, keep

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def close(self) -> None:
        if self.logdir:
            try:
                os.makedirs(self.logdir, exist_ok=True)
                for k in self.keep:
                    for f in glob.glob(os.path.join(self.path, k)):
                        shutil.copy(f, self.logdir)
            except OSError:
                pass
        shutil.rmtree(self.path, ignore_errors=True)


def tail(path: str, n: int) -> List[str]:
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()[-n:]
    except OSError:
        return []


def table(rows: Sequence[Sequence[str]], markdown: bool, flag: str = "",
          out: Callable[[str], None] = print) -> None:
    """A blank line, the flag line if any, then the table: the first row is
    the head; Markdown, or columns aligned (the first to the left, the
    others to the right, two spaces apart)."""
    out("")
    if flag:
        out(flag)
    if markdown:
        for i, r in enumerate(rows):
            out("|" + "".join(" %s |" % c for c in r))
            if i == 0:
                out("|---" + "|---:" * (len(r) - 1) + "|")
        return
    n = max(len(r) for r in rows)
    w = [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(n)]
    for r in rows:
        c = list(r) + [""] * (n - len(r))
        out(c[0].ljust(w[0]) + "".join("  " + c[i].rjust(w[i]) for i in range(1, n)))


def err(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
