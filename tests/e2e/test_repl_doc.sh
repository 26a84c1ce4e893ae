#!/usr/bin/env bash
# The session recorded in docs/repl.md, typed into a real terminal.
. "$(dirname "$0")/lib.sh"
need_cmd python3
TMPDIR=$TMP timeout -k 5 240 python3 "$E2E_DIR/repl/test_doc.py"
