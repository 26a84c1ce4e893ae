"""python3 bench/surgebench PROGRAM ARGS...: the benches' harness, run by
scripts/bench (PROGRAM bench), scripts/bench-conn (conn) and
scripts/bench-rx-ab (rx-ab)."""
from __future__ import annotations

import os
import sys

if not __package__:
    # run as a folder: the package is the folder's parent's
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    import importlib
    import io
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)   # the tables and the progress lines in order
    progs = {"bench": "bench", "conn": "conn", "rx-ab": "rxab"}
    if len(sys.argv) < 2 or sys.argv[1] not in progs:
        sys.stderr.write("surgebench: want one of %s, then its options\n" % ", ".join(sorted(progs)))
        return 2
    prog = importlib.import_module("surgebench." + progs[sys.argv[1]])
    rc: int = prog.entry(sys.argv[2:])
    return rc


if __name__ == "__main__":
    sys.exit(main())
