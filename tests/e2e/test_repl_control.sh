#!/usr/bin/env bash
# `surge run --control PATH` and `surge attach`: the socket, several clients,
# garbage and clients that die mid-command (tests/e2e/repl/test_control.py).
. "$(dirname "$0")/lib.sh"
need_cmd python3
timeout -k 5 200 python3 "$E2E_DIR/repl/test_control.py"
