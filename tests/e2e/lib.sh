# lib.sh - shared helpers for the end-to-end tests (sourced, not run).
#
# Each test is a bash script run by ctest with SURGE (the binary) and
# SURGE_SRC (the source tree) set. It exits 0 on success, 1 on failure and
# 77 when something outside the project is missing (ctest shows "skipped").
set -u
SURGE=${SURGE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/surge}
SURGE_SRC=${SURGE_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TMP=$(mktemp -d /tmp/surge-e2e.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
FAILS=0

skip() { echo "SKIP: $*"; exit 77; }
need_cmd() { command -v "$1" >/dev/null 2>&1 || skip "$1 not installed"; }
need_root() { [ "$(id -u)" = 0 ] || skip "needs root"; }

# A failed check prints what was expected and what came, and fails the test.
check() {  # check DESCRIPTION EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected '$2', got '$3'"; FAILS=$((FAILS + 1)); fi
}
check_match() {  # check_match DESCRIPTION REGEX TEXT
  if printf '%s' "$3" | grep -Eq -- "$2"; then echo "ok   $1"; else
    echo "FAIL $1: no match for /$2/ in:"; printf '%s\n' "$3" | head -20; FAILS=$((FAILS + 1)); fi
}
finish() { [ "$FAILS" = 0 ] && { echo "all checks passed"; exit 0; }; echo "$FAILS check(s) failed"; exit 1; }

# tshark prints a warning when run as root; keep its stdout clean.
tshark_q() { tshark "$@" 2>/dev/null; }

# surge's summary: "  port P  TX N packets ..." -> N
summary_count() {  # summary_count OUTPUT PORT TX|RX
  printf '%s\n' "$1" | awk -v p="$2" -v d="$3" '$1=="port" && $2==p && $3==d {print $4; exit}'
}
