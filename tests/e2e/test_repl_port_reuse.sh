#!/usr/bin/env bash
# surge.port(N) on the script's open port from the prompt (a real pty) and
# from an attached client (issue 23 item 6): tests/e2e/repl/test_port_reuse.py.
. "$(dirname "$0")/lib.sh"
need_cmd python3
timeout -k 5 120 python3 "$E2E_DIR/repl/test_port_reuse.py"
