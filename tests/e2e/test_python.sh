#!/usr/bin/env bash
# The Python package (python/surge, docs/python.md) against real surge
# instances: every client call, bad inputs, the results loaders, several
# instances as one (a common start, one stop, merged results, a failing
# instance), locally and through OpenSSH-forwarded sockets (tests/python/).
. "$(dirname "$0")/lib.sh"
need_cmd python3
python3 -c 'import pytest' 2>/dev/null || skip "python3-pytest not installed"
cd "$SURGE_SRC" || exit 1
# -p no:cacheprovider: nothing written into the source tree
timeout -k 5 280 python3 -m pytest -p no:cacheprovider -q -rs tests/python
