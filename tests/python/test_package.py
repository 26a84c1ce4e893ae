"""`pip install ./python`, as docs/python.md writes it, works offline (no index:
the build backend is the package's own, standard library only, so pip's build
isolation fetches nothing) and writes nothing into the source tree (no build/,
no *.egg-info, no bytecode); it installs an importable, typed package."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from conftest import SRC


def tree(root: str) -> set[str]:
    out: set[str] = set()
    for d, dirs, files in os.walk(root):
        out.update(os.path.relpath(os.path.join(d, n), root) for n in dirs + files)
    return out


def test_pip_install_offline_in_place(tmp_path: pathlib.Path) -> None:
    r = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    if r.returncode != 0:
        pytest.skip("pip is not installed (Debian: python3-pip)")
    target = tmp_path / "site"
    before = tree(os.path.join(SRC, "python"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # the documented command from the source tree; --no-index: nothing can come
    # from PyPI; --target: somewhere of the test's own
    r2 = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--target", str(target),
                         "./python"], capture_output=True, text=True, cwd=SRC, env=env)
    assert r2.returncode == 0, r2.stdout + r2.stderr
    after = tree(os.path.join(SRC, "python"))
    assert after - before == set(), f"pip install wrote into the source tree: {sorted(after - before)}"
    assert (target / "surge" / "py.typed").exists()
    meta = (target / "surge-0.1.0.dist-info" / "METADATA").read_text()
    assert "Name: surge\n" in meta and 'Requires-Dist: pandas; extra == "pandas"' in meta
    r3 = subprocess.run([sys.executable, "-c", "import surge, sys; print(surge.__file__, surge.__version__)"],
                        capture_output=True, text=True, cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=str(target)))
    assert r3.returncode == 0 and r3.stdout.startswith(str(target / "surge" / "__init__.py")), r3.stdout + r3.stderr
    assert r3.stdout.split()[1] == "0.1.0"
