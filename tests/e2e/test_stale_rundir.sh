#!/bin/bash
# test_stale_rundir.sh - issue 23, item 3: a surge run killed with SIGKILL
# leaves its EAL runtime folder /var/run/dpdk/surge-PID behind; the next
# surge removes it at start, and only such folders: a live pid's folder, a
# folder holding a file EAL does not make, a symlink, and other names
# (notsurge-N, surge-Nx, rte) all stay.
. "$(dirname "$0")/lib.sh"
need_root
RD=/var/run/dpdk
BG_PID=
DECOYS=()
on_exit '[ -n "$BG_PID" ] && kill -KILL $BG_PID'
on_exit 'for d in "${DECOYS[@]}"; do rm -rf "$d"; done'
mkdir -p "$RD"

# a pid no process has now: a short-lived child's, gone once waited for
dead_pid() { local p; sleep 0 & p=$!; wait "$p"; while kill -0 "$p" 2>/dev/null; do p=$((p + 1)); done; echo "$p"; }

echo "# a run killed with SIGKILL leaves its runtime folder"
"$SURGE" run --no-huge --stats-interval 0 --duration 30 "$EXAMPLES/udp-flood.lua" >"$TMP/bg.out" 2>"$TMP/bg.err" &
BG_PID=$!
KILLED=$BG_PID
for _ in $(seq 100); do [ -S "$RD/surge-$KILLED/dpdk_telemetry.v2" ] && break; sleep 0.1; done
kill -KILL "$BG_PID"
wait "$BG_PID" 2>/dev/null
BG_PID=
DECOYS+=("$RD/surge-$KILLED")
check "killed run: $RD/surge-$KILLED left behind" "present" "$([ -d "$RD/surge-$KILLED" ] && echo present || echo absent)"
check "killed run: the process is gone" "gone" "$(kill -0 "$KILLED" 2>/dev/null && echo alive || echo gone)"

# decoys: each holds what EAL puts in a runtime folder (a dpdk_telemetry.v2)
sleep 300 &
LIVE=$!
on_exit "kill $LIVE"
D1=$(dead_pid); D2=$((D1 + 1)); while kill -0 "$D2" 2>/dev/null; do D2=$((D2 + 1)); done
for d in "surge-$$" "surge-$LIVE" notsurge-999999 surge-999999x surge-0999999 "surge-$D1"; do
  mkdir -p "$RD/$d"
  : >"$RD/$d/dpdk_telemetry.v2"
  DECOYS+=("$RD/$d")
done
: >"$RD/surge-$D1/my-notes.txt"           # a dead pid's, but with a file EAL does not make
mkdir -p "$TMP/target"
: >"$TMP/target/dpdk_telemetry.v2"
ln -s "$TMP/target" "$RD/surge-$D2"        # a dead pid's name, but a symlink
DECOYS+=("$RD/surge-$D2")

echo "# the next run removes the killed run's folder, and nothing else"
run_surge 60 run --no-huge --stats-interval 0 --duration 0.3 "$EXAMPLES/udp-flood.lua"
check "next run: exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check "next run: $RD/surge-$KILLED (killed run) removed" "absent" \
  "$([ -e "$RD/surge-$KILLED" ] && echo present || echo absent)"
check_nomatch "next run: says nothing about it" "runtime folder|surge-$KILLED" "$OUT
$ERR"
for d in "surge-$$" "surge-$LIVE" notsurge-999999 surge-999999x surge-0999999; do
  check "next run: $RD/$d kept" "present" "$([ -f "$RD/$d/dpdk_telemetry.v2" ] && echo present || echo absent)"
done
check "next run: $RD/surge-$D1 (a file EAL does not make) kept" "present" \
  "$([ -f "$RD/surge-$D1/my-notes.txt" ] && [ -f "$RD/surge-$D1/dpdk_telemetry.v2" ] && echo present || echo absent)"
check "next run: the symlink $RD/surge-$D2 kept" "present" "$([ -L "$RD/surge-$D2" ] && echo present || echo absent)"
check "next run: the symlink's target untouched" "present" \
  "$([ -f "$TMP/target/dpdk_telemetry.v2" ] && echo present || echo absent)"
check_no_runtime_dir "next run" "$SURGE_PID"
finish
