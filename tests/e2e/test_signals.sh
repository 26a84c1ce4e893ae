#!/bin/bash
# test_signals.sh - an endless udp-flood stops cleanly on SIGINT and SIGTERM
# (exit 0, summary, every pool full, runtime folder gone), and --duration 1
# ends a run by itself after about a second.
. "$(dirname "$0")/lib.sh"
need_cmd pgrep
FLOOD=$EXAMPLES/udp-flood.lua
BG_PID=
on_exit '[ -n "$BG_PID" ] && kill -KILL $(pgrep -P $BG_PID) $BG_PID'

# interrupt SIGNAL DEV_ARGS...: flood in the background, SIGNAL once stats
# lines show it sends; sets RC OUT ERR, STOP_SECS (signal to exit) and SPID
interrupt() {
  local sig=$1 tpid t0 t1
  shift
  timeout -k 5 60 "$SURGE" run --no-huge --stats-interval 0.2 "$@" "$FLOOD" >"$TMP/bg.out" 2>"$TMP/bg.err" &
  tpid=$!
  BG_PID=$tpid
  SPID='' RUNDIR_SEEN='' SURGE_PID=''
  for _ in $(seq 50); do SPID=$(pgrep -P "$tpid" | head -1); [ -n "$SPID" ] && break; sleep 0.1; done
  if wait_for_text "$TMP/bg.out" 'TX +[0-9.]+ Mpps' 20 "$tpid"; then
    sleep 0.5
    RUNDIR_SEEN=$([ -d "/var/run/dpdk/surge-$SPID" ] && echo yes || echo no)
    t0=$(date +%s%N)
    # to surge itself: timeout would pass it on to surge and to its whole
    # process group, i.e. twice
    kill "-$sig" "$SPID"
  else
    echo "no stats line from surge within 20 s"
    t0=$(date +%s%N)
  fi
  wait "$tpid"
  RC=$?
  BG_PID=
  t1=$(date +%s%N)
  STOP_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
  OUT=$(cat "$TMP/bg.out")
  ERR=$(cat "$TMP/bg.err")
  SURGE_PID=$SPID
}

for sig in INT TERM; do
  if [ "$sig" = INT ] && ! nic_bound; then
    echo "# SIGINT, default device"
    interrupt INT
    check_match "SIGINT: the default device is the virtual sink" 'virtual sink net_null0' "$OUT"
  else
    echo "# SIG$sig, net_null0"
    interrupt "$sig" --vdev net_null0,no-rx=1
  fi
  check "SIG$sig: exit 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run
  check_true "SIG$sig: exits within 5 s of the signal" "took $STOP_SECS s" lt "$STOP_SECS" 5
  TX=$(summary_count "$OUT" 0 TX)
  check_true "SIG$sig: summary shows TX > 0" "TX '$TX'" [ "${TX:-0}" -gt 0 ]
  check_match "SIG$sig: summary has tx-drops" 'port 0  tx-drops [0-9]+' "$OUT"
  check_pools "SIG$sig"
  check_no_crash "SIG$sig"
  check "SIG$sig: its runtime folder existed while it ran" yes "$RUNDIR_SEEN"
done

echo "# --duration 1 ends the run by itself"
run_surge 30 run --no-huge --stats-interval 0 --duration 1 --vdev net_null0,no-rx=1 "$FLOOD"
check "--duration 1: exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
SUMSECS=$(printf '%s\n' "$OUT" | sed -n 's/^surge: summary over \([0-9.]*\) s$/\1/p')
check_true "--duration 1: summary over 1.0..3 s (loaded machines are slow)" "summary over '$SUMSECS' s" \
  awk -v s="${SUMSECS:-0}" 'BEGIN { exit !(s >= 0.99 && s < 3) }'
check_true "--duration 1: whole run under 6 s" "took $SECS s" lt "$SECS" 6
TX=$(summary_count "$OUT" 0 TX)
check_true "--duration 1: TX > 0" "TX '$TX'" [ "${TX:-0}" -gt 0 ]
check_pools "--duration 1"

echo "# --duration 500ms with --count: whichever comes first (the duration)"
run_surge 30 run --no-huge -q --duration 500ms --vdev net_null0,no-rx=1 "$FLOOD" --count 4000000000
check "--duration 500ms: exit 0" 0 "$RC"
SUMSECS=$(printf '%s\n' "$OUT" | sed -n 's/^surge: summary over \([0-9.]*\) s$/\1/p')
check_true "--duration 500ms: summary over 0.5..2.5 s" "summary over '$SUMSECS' s" \
  awk -v s="${SUMSECS:-0}" 'BEGIN { exit !(s >= 0.49 && s < 2.5) }'

echo "# a loop in the script's top level (run before EAL starts) ends on SIGINT"
printf 'local surge = require "surge"\nlocal x = 0\nwhile true do x = x + 1 end\nfunction master() end\n' >"$TMP/toploop.lua"
# and in configure(), with the error caught by pcall: one line, at the loop
printf 'local surge = require "surge"\nfunction configure(p)\n  while true do pcall(error, "x") end\nend\nfunction master() end\n' >"$TMP/cfgloop.lua"
for s in toploop cfgloop; do
  timeout -k 5 30 "$SURGE" run --no-huge "$TMP/$s.lua" >"$TMP/top.out" 2>"$TMP/top.err" &
  TPID=$!
  BG_PID=$TPID
  sleep 1.5
  kill -INT "$(pgrep -P "$TPID" | head -1)"
  wait "$TPID"
  RC=$?
  # shellcheck disable=SC2034 # read by the on_exit trap above
  BG_PID=
  ERR=$(cat "$TMP/top.err")
  check "$s: loop before EAL, SIGINT: exit 0 (a stop, not a kill)" 0 "$RC"
  check "$s: loop before EAL, SIGINT: one line at the loop's line" \
    "$TMP/$s.lua:3: stopped while the script's top level or configure() ran" "$ERR"
done
finish
