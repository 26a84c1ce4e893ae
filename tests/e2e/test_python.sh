#!/usr/bin/env bash
# The Python package (python/surge, docs/python.md) against real surge
# instances: every client call, bad inputs, the results loaders, several
# instances as one (a common start, one stop, merged results, a failing
# instance), locally and through OpenSSH-forwarded sockets, a fake server that
# is not surge, the offline install, mypy --strict and pyflakes (tests/python/).
. "$(dirname "$0")/lib.sh"
need_cmd python3
python3 -c 'import pytest' 2>/dev/null || skip "python3-pytest not installed"
cd "$SURGE_SRC" || exit 1
# -p no:cacheprovider and no bytecode: nothing written into the source tree
# (test_package checks that pip install ./python writes nothing there either)
export PYTHONDONTWRITEBYTECODE=1
timeout -k 5 280 python3 -m pytest -p no:cacheprovider -q -rs tests/python
