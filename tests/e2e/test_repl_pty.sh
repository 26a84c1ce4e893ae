#!/usr/bin/env bash
# The prompt at a real terminal (python3's pty module types the keys).
. "$(dirname "$0")/lib.sh"
need_cmd python3
timeout -k 5 280 python3 "$E2E_DIR/repl/test_pty.py"
