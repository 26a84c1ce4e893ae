#!/usr/bin/env bash
# hosts() at the prompt (issue 33): surge repl through a real pty
# (repl/test_hosts.py): the run's host tables by state, a host's detail.
. "$(dirname "$0")/lib.sh"
need_cmd python3
TMPDIR=$TMP timeout -k 5 120 python3 "$E2E_DIR/repl/test_hosts.py"
check "through a pty: every check passed" 0 $?
finish
