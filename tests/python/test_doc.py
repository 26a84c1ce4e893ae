"""docs/python.md's walk-through: its ```python blocks, extracted and run in
order in one namespace against a real surge (the built binary first on PATH,
the source tree as the current folder)."""
import os
import pathlib
import re
from typing import Any

import pytest

from conftest import SRC, SURGE


def test_walkthrough(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = open(os.path.join(SRC, "docs/python.md")).read()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    assert len(blocks) >= 8, "the walk-through lost its blocks"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "surge").symlink_to(SURGE)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.chdir(SRC)
    ns: dict[str, Any] = {"__name__": "walkthrough"}
    try:
        for i, code in enumerate(blocks, 1):
            exec(compile(code, f"docs/python.md block {i}", "exec"), ns)
    finally:
        proc = ns.get("proc")
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
