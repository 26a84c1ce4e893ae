# lib.sh - shared helpers for the end-to-end tests (sourced, not run).
#
# Each test is a bash script run by ctest with SURGE (the binary) and
# SURGE_SRC (the source tree) set. It exits 0 on success, 1 on failure and
# 77 when something outside the project is missing (ctest shows "skipped").
set -u
# python3 is Debian's: scripts/setup installs what the tests import into it
# (python3-jsonschema); a python of the user's own earlier on PATH may lack it
export PATH=/usr/bin:$PATH
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

# ---------------------------------------------------------------------------
# Helpers added for the e2e suite.

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)   # this folder (scripts/ lives here)
EXAMPLES=$SURGE_SRC/examples

# Cleanups run in reverse order on exit, before $TMP goes: on_exit 'ip link del x'.
CLEANUPS=()
on_exit() { CLEANUPS+=("$*"); }
_e2e_cleanup() {
  local i
  for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[i]}" >/dev/null 2>&1 || true; done
  rm -rf "$TMP"
}
trap _e2e_cleanup EXIT
trap 'exit 130' INT TERM

# run_surge SECONDS ARGS...: runs "$SURGE ARGS..." under timeout and sets
# RC, OUT (stdout), ERR (stderr), SECS (wall time, seconds with decimals)
# and SURGE_PID.
run_surge() {
  local limit=$1 t0 t1
  shift
  t0=$(date +%s%N)
  rm -f "$TMP/surge.pid"
  # the shell records its pid and becomes surge (exec): SURGE_PID is surge's
  timeout -k 5 "$limit" bash -c 'echo $$ >"$0.pid"; exec "$@"' "$TMP/surge" "$SURGE" "$@" \
    >"$TMP/surge.out" 2>"$TMP/surge.err"
  RC=$?
  SURGE_PID=$(cat "$TMP/surge.pid" 2>/dev/null || echo unknown)
  t1=$(date +%s%N)
  OUT=$(cat "$TMP/surge.out")
  ERR=$(cat "$TMP/surge.err")
  SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
}
# Prints the last run's output, for a failed check's context.
show_run() { echo "--- stdout:"; printf '%s\n' "$OUT" | tail -${1:-15}; echo "--- stderr:"; printf '%s\n' "$ERR" | tail -${1:-15}; }

check_nomatch() {  # check_nomatch DESCRIPTION REGEX TEXT
  if printf '%s' "$3" | grep -Eq -- "$2"; then
    echo "FAIL $1: unexpected match for /$2/:"; printf '%s\n' "$3" | grep -E -- "$2" | head -5; FAILS=$((FAILS + 1))
  else echo "ok   $1"; fi
}
check_true() {  # check_true DESCRIPTION DETAIL COMMAND...: passes when COMMAND succeeds
  local d=$1 detail=$2
  shift 2
  if "$@"; then echo "ok   $d"; else echo "FAIL $d: $detail"; FAILS=$((FAILS + 1)); fi
}
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'; }   # lt A B: A < B (decimals)

# A run that failed the way a user error should: exit status 1..123 (not
# 124+ from `timeout`, not 128+N from a signal), no crash text, and its
# runtime folder gone.
CRASH_RE='Segmentation fault|core dumped|Aborted|PANIC|rte_dump_stack|not ready port|Illegal instruction|Bus error|double free|stack smashing|error in error handling'
check_user_error() {  # check_user_error DESCRIPTION (uses RC, OUT, ERR, SURGE_PID)
  if [ "$RC" -ge 1 ] && [ "$RC" -lt 124 ]; then echo "ok   $1: exit status $RC"; else
    echo "FAIL $1: expected an exit status 1..123, got $RC"; show_run; FAILS=$((FAILS + 1)); fi
  check_nomatch "$1: no crash" "$CRASH_RE" "$OUT
$ERR"
  check_no_runtime_dir "$1" "$SURGE_PID"
}
check_no_crash() { check_nomatch "$1: no crash" "$CRASH_RE" "$OUT
$ERR"; }

# Every pool line says "pool N: X of X mbufs back, no leak" (needs a run
# without -q), there is at least one, nothing reports a leak, and the last
# run_surge left no runtime folder.
check_pools() {  # check_pools DESCRIPTION (uses OUT, ERR)
  local lines bad
  lines=$(printf '%s\n' "$OUT" | grep -E '^surge: pool [0-9]+:' || true)
  bad=$(printf '%s\n' "$lines" | grep -Ev '^surge: pool [0-9]+: ([0-9]+) of \1 mbufs back, no leak$' || true)
  if [ -n "$lines" ] && [ -z "$bad" ]; then echo "ok   $1: $(printf '%s\n' "$lines" | wc -l) pool(s) full again"; else
    echo "FAIL $1: pool lines:"; printf '%s\n' "${lines:-<none>}"; FAILS=$((FAILS + 1)); fi
  check_no_leak "$1"
  if [ -n "${SURGE_PID:-}" ]; then check_no_runtime_dir "$1" "$SURGE_PID"; fi
}
check_no_leak() { check_nomatch "$1: no leak reported" 'leak(ed)? [0-9]|leaked|not returned' "$OUT
$ERR"; }

# EAL runtime folder of a --no-huge surge (per process) must be gone after
# it exits; when surge left it, the test removes it after failing the check.
check_no_runtime_dir() {  # check_no_runtime_dir DESCRIPTION PID
  check "$1: /var/run/dpdk/surge-$2 removed" "absent" "$([ -e "/var/run/dpdk/surge-$2" ] && echo present || echo absent)"
  case $2 in *[!0-9]* | "") ;; *) kill -0 "$2" 2>/dev/null || rm -rf "/var/run/dpdk/surge-$2" ;; esac
}

# pcap_hex FILE: one line per frame, the frame's bytes in hex.
pcap_hex() {
  tshark_q -r "$1" -x | awk '
    /^[0-9a-f][0-9a-f][0-9a-f][0-9a-f]  / { line = line substr($0, 7, 48); next }
    NF == 0 && line != "" { gsub(/ +/, "", line); print line; line = "" }
    END { if (line != "") { gsub(/ +/, "", line); print line } }'
}

# Waits until FILE contains REGEX or SECONDS pass; fails (1) on timeout.
wait_for_text() {  # wait_for_text FILE REGEX SECONDS [PID: give up when it exits]
  local end=$(($(date +%s) + $3))
  while [ "$(date +%s)" -le "$end" ]; do
    grep -Eq -- "$2" "$1" 2>/dev/null && return 0
    [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null && return 1
    sleep 0.1
  done
  return 1
}

# True when some PCI device is bound to a driver DPDK can use (eal.c's rule
# for picking the default device). Without one, surge's default device is
# the virtual sink net_null0, so a test may rely on the default.
nic_bound() {
  local d
  for d in vfio-pci uio_pci_generic igb_uio mlx5_core mlx4_core; do
    ls "/sys/bus/pci/drivers/$d" 2>/dev/null | grep -q : && return 0
  done
  return 1
}
# Device options for "the default device", but never a real NIC.
default_dev() { nic_bound && echo "--vdev net_null0,no-rx=1" || true; }
