"""The build backend of the surge package (PEP 517), standard library only.

`pip install ./python` needs nothing from PyPI, so it works offline as
written, with pip's build isolation: pyproject.toml requires nothing and names
this module (`backend-path`). The wheel is written straight into the folder pip
gives (a temporary one): nothing is written into the source tree (no build/,
no *.egg-info). What goes in: the package `surge` (its .py files and
py.typed) and its metadata, taken from pyproject.toml's [project] table.
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import zipfile
from typing import Any, Optional

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "surge"
TAG = "py3-none-any"


def _project() -> dict[str, str]:
    """The scalar fields of pyproject.toml's [project] table (name, version, ...)."""
    with open(os.path.join(SRC, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^\[project\]\n(.*?)(?=^\[)", text, re.S | re.M)
    if m is None:
        raise RuntimeError("python/pyproject.toml has no [project] table")
    return dict(re.findall(r'^([\w-]+) = "([^"]*)"$', m.group(1), re.M))


def _dist_info() -> str:
    p = _project()
    return f"{p['name']}-{p['version']}.dist-info"


def _metadata() -> str:
    p = _project()
    with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (f"Metadata-Version: 2.1\nName: {p['name']}\nVersion: {p['version']}\nSummary: {p['description']}\n"
            f"Requires-Python: {p['requires-python']}\nProvides-Extra: pandas\n"
            "Requires-Dist: pandas; extra == \"pandas\"\nDescription-Content-Type: text/markdown\n\n" + readme)


def _wheel_files() -> list[tuple[str, bytes]]:
    files = []
    pkg = os.path.join(SRC, PACKAGE)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") or name == "py.typed":
            with open(os.path.join(pkg, name), "rb") as f:
                files.append((f"{PACKAGE}/{name}", f.read()))
    info = _dist_info()
    files.append((f"{info}/METADATA", _metadata().encode()))
    files.append((f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: surge_build\nRoot-Is-Purelib: true\n"
                                   f"Tag: {TAG}\n".encode()))
    return files


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def _tidy() -> None:
    """Python wrote this module's bytecode next to it when pip imported it (before
    any line here ran): removed, so that the source tree is as it was."""
    shutil.rmtree(os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__"), ignore_errors=True)


def get_requires_for_build_wheel(config_settings: Optional[dict[str, Any]] = None) -> list[str]:
    _tidy()
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: Optional[dict[str, Any]] = None) -> str:
    _tidy()
    info = _dist_info()
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    for name, data in _wheel_files():
        if name.startswith(info + "/"):
            with open(os.path.join(metadata_directory, name), "wb") as f:
                f.write(data)
    return info


def build_wheel(wheel_directory: str, config_settings: Optional[dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    _tidy()
    p = _project()
    wheel = f"{p['name']}-{p['version']}-{TAG}.whl"
    files = _wheel_files()
    record = f"{_dist_info()}/RECORD"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
        z.writestr(zipfile.ZipInfo(record, (1980, 1, 1, 0, 0, 0)),
                   "".join(_record_line(n, d) for n, d in files) + f"{record},,\n", zipfile.ZIP_DEFLATED)
    return wheel
