"""The Python package, the bench harness (bench/surgebench and its Python
drivers in bench/) and the tests are clean under `mypy --strict` (its
configuration in python/pyproject.toml) and pyflakes (Debian: mypy,
python3-pyflakes; scripts/setup installs both)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import SRC

PATHS = [os.path.join(SRC, "python"), os.path.join(SRC, "tests/python"), os.path.join(SRC, "bench")]
# the harness and its drivers (their names have dashes: given as files)
BENCH = [os.path.join(SRC, "bench", f) for f in
         ("surgebench", "telemetry-rate.py", "conn-telemetry.py", "gapstats.py", "wake.py")]


def test_mypy_strict() -> None:
    mypy = shutil.which("mypy")
    if mypy is None:
        pytest.skip("mypy is not installed (Debian: mypy)")
    r = subprocess.run([mypy, "--config-file", os.path.join(SRC, "python/pyproject.toml"),
                        os.path.join(SRC, "python/surge"), os.path.join(SRC, "python/build_backend"),
                        os.path.join(SRC, "tests/python"), *BENCH],
                       capture_output=True, text=True, cwd=SRC,
                       env=dict(os.environ, MYPYPATH=os.pathsep.join([os.path.join(SRC, "python"), os.path.join(SRC, "bench")])))
    assert r.returncode == 0, r.stdout + r.stderr


def test_pyflakes() -> None:
    if subprocess.run([sys.executable, "-m", "pyflakes", "--version"], capture_output=True).returncode != 0:
        pytest.skip("pyflakes is not installed (Debian: python3-pyflakes)")
    r = subprocess.run([sys.executable, "-m", "pyflakes", *PATHS], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "", r.stdout + r.stderr
