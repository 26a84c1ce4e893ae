#!/bin/bash
# test_idle_tap_intr.sh - an idle RX task on a port with RX interrupts
# (net_tap) blocks in epoll instead of waking every max_sleep_us (issue 8):
#   - over 6 s with no traffic, the task polls about 100 times a second (one
#     10 ms epoll slice per poll; plain 500 us sleeps would be >= 1000 a
#     second) and its thread uses < 1.5 % of a core (/proc/PID/task/TID/stat,
#     5 s at 100 ticks a second: one tick is 0.2 %, so this catches the
#     adaptive sleep's ~2 % and busy polling, not the last tenths; the 0.5 %
#     target is measured by scripts/bench-idle --cpu over 10 s); master,
#     waiting for the task, uses < 1.5 % (it sleeps until the next thing is
#     due, at most 10 ms, instead of polling every millisecond);
#   - frames written into the tap's kernel side every 300 ms still arrive:
#     20 of 20, each reaching Lua (bench/wake.lua: kernel send time
#     to burst.tsc on CLOCK_MONOTONIC_RAW) well before a second.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd pgrep
IFC=stintr$$
HZ=$(getconf CLK_TCK)

timeout -k 5 40 "$SURGE" run --stats-interval 0 --vdev "net_tap0,iface=$IFC" "$E2E_DIR/rate/idle_rx.lua" \
  --seconds 8 >"$TMP/idle.out" 2>&1 &
BG=$!
on_exit "kill $BG"
sleep 2
SPID=$(pgrep -P "$BG" -x surge | head -1)
W=$(grep -l '^rte-worker' /proc/"${SPID:-0}"/task/*/comm 2>/dev/null | head -1 | xargs -r dirname)
[ -n "$W" ] || { wait "$BG"; cat "$TMP/idle.out"; skip "surge did not start on net_tap (no tun device?)"; }
M=/proc/$SPID/task/$SPID
C0=$(awk '{ print $14 + $15 }' "$W/stat"); M0=$(awk '{ print $14 + $15 }' "$M/stat")
sleep 5
C1=$(awk '{ print $14 + $15 }' "$W/stat"); M1=$(awk '{ print $14 + $15 }' "$M/stat")
wait "$BG"
RC=$?
OUT=$(cat "$TMP/idle.out")
CPU=$(awk -v a="$C0" -v b="$C1" -v hz="$HZ" 'BEGIN { printf "%.2f", (b - a) * 100 / hz / 5 }')
MCPU=$(awk -v a="$M0" -v b="$M1" -v hz="$HZ" 'BEGIN { printf "%.2f", (b - a) * 100 / hz / 5 }')
check "idle: exit 0" 0 "$RC"
read -r POLLS _ <<<"$(printf '%s\n' "$OUT" | sed -nE 's/^idle_rx: polls ([0-9]+) packets [0-9]+ sleeps ([0-9]+) .*/\1 \2/p')"
echo "     idle RX task on net_tap: ${POLLS:-?} polls in 8 s, thread CPU ${CPU}% over 5 s"
check_true "idle: ${POLLS:-?} polls in 8 s (<= 250 a second: blocked on the interrupt)" "$OUT" \
  [ "${POLLS:-999999}" -le 2000 ]
check_true "idle: thread CPU ${CPU}% < 1.5% (${POLLS} polls)" "machine busy?" lt "$CPU" 1.5
check_true "idle: master CPU ${MCPU}% < 1.5%" "master polls too often" lt "$MCPU" 1.5

echo "# frames written into the tap after idle spells reach Lua"
timeout -k 5 60 "$SURGE" run -q --stats-interval 0 --vdev "net_tap0,iface=$IFC" "$SURGE_SRC/bench/wake.lua" \
  --mode sleep --frames 20 >"$TMP/wake.out" 2>&1 &
BG=$!
wait_for_text "$TMP/wake.out" 'WAKE ready' 20 "$BG" || true
ip link set "$IFC" up
python3 "$SURGE_SRC/bench/wake.py" "$IFC" 20 300
wait "$BG"
RC=$?
LINE=$(grep '^WAKE frames' "$TMP/wake.out" || true)
echo "     $LINE"
check "wake: exit 0" 0 "$RC"
check_match "wake: 20 frames received" '^WAKE frames=20 ' "$LINE"
P50=$(printf '%s\n' "$LINE" | sed -nE 's/.* p50=([0-9.]+) .*/\1/p')
check_true "wake: median first-packet latency ${P50:-?} us < 100000 us" "$LINE" lt "${P50:-1e9}" 100000
finish
