"""`pip install ./python` works offline with the standard library alone and
installs an importable, typed package."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import SRC


def test_pip_install(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    if r.returncode != 0:
        pytest.skip("pip is not installed (Debian: python3-pip)")
    try:
        import setuptools  # noqa: F401
    except ImportError:
        pytest.skip("setuptools is not installed (Debian: python3-setuptools)")
    src = tmp_path / "src"
    shutil.copytree(os.path.join(SRC, "python"), src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                        "--target", str(target), str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (target / "surge" / "py.typed").exists()
    r = subprocess.run([sys.executable, "-c", "import surge, sys; print(surge.__file__, surge.__version__)"],
                       capture_output=True, text=True, cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=str(target)))
    assert r.returncode == 0 and r.stdout.startswith(str(target / "surge" / "__init__.py")), r.stdout + r.stderr
