#!/bin/bash
# test_memif_testpmd.sh - dpdk-testpmd (a program nobody here wrote) is the
# memif server and counts what surge sends as the memif client.
#
# memif resets a port's counters when its peer disconnects, and surge closes
# its port as it exits, so testpmd's own RX counter of the memif port reads 0
# by the time testpmd is asked. testpmd therefore forwards (io mode) from the
# memif port to a net_null port, whose TX counter survives: on "stop",
# testpmd's "Forward statistics for port 1" TX-packets + TX-dropped is what
# it received. testpmd runs interactive, driven through a fifo.
# A second run has testpmd reflect (macswap on its one port) and surge's
# loopback.lua must get back every packet it sent.
. "$(dirname "$0")/lib.sh"
need_cmd dpdk-testpmd
need_cmd pgrep
need_cmd stdbuf
need_root

PREFIX=surge-e2e-tp$$
SOCK=$TMP/memif.sock
TP_PID=
trap '' PIPE          # a dead testpmd must not kill the test through its stdin

# start_testpmd "VDEV..." COMMAND...: interactive testpmd in the background
# with the memif server as port 0 (and the VDEVs after it), driven through a
# fifo on fd 7; sends the COMMANDs then "start" and returns once it forwards
start_testpmd() {
  local extra=() v c
  for v in $1; do extra+=(--vdev "$v"); done
  shift
  rm -f "$SOCK" "$TMP/testpmd.in"
  mkfifo "$TMP/testpmd.in"
  : >"$TMP/testpmd.out"
  # stdbuf: testpmd's answers reach the file as they come, not at exit
  timeout -k 5 120 stdbuf -oL -eL dpdk-testpmd -l 0-1 --no-pci --no-huge -m 512 --file-prefix "$PREFIX" \
    --vdev "net_memif0,role=server,socket=$SOCK,socket-abstract=no" "${extra[@]}" \
    -- -i --total-num-mbufs=8192 <"$TMP/testpmd.in" >"$TMP/testpmd.out" 2>&1 &
  TP_PID=$!
  exec 7>"$TMP/testpmd.in"
  for c in "$@" start; do echo "$c" >&7; done
  if ! wait_for_text "$TMP/testpmd.out" 'packet forwarding.* - ports=' 30 "$TP_PID"; then
    echo "testpmd did not start:"; tail -20 "$TMP/testpmd.out"
    stop_testpmd
    return 1
  fi
  return 0
}
# stop_testpmd: stop (prints the forward statistics) and quit; 0 when
# testpmd ended on its own terms
stop_testpmd() {
  local rc
  [ -n "$TP_PID" ] || return 1
  { echo stop; echo quit; } >&7 2>/dev/null
  exec 7>&-
  wait "$TP_PID"
  rc=$?
  TP_PID=
  rm -rf "/var/run/dpdk/$PREFIX"
  [ "$rc" = 0 ] && grep -q 'Bye' "$TMP/testpmd.out"
}
on_exit '[ -n "$TP_PID" ] && kill -KILL $(pgrep -P $TP_PID) $TP_PID; rm -rf /var/run/dpdk/$PREFIX'

# fwd_stat PORT FIELD: a number from testpmd's final "Forward statistics for port PORT"
fwd_stat() {
  awk -v p="$1" -v f="$2:" '
    /Forward statistics for port/ { inblk = ($(NF - 1) == p) ; next }
    inblk && /^ *-+ *$/ { inblk = 0 }
    inblk { for (i = 1; i < NF; i++) if ($i == f) { print $(i + 1); exit } }' "$TMP/testpmd.out"
}

# run_memif_flood: one attempt; sets TP_RX ("" when testpmd died on its own)
run_memif_flood() {
  TP_RX=
  start_testpmd net_null0,no-rx=1 "set fwd io" || return 1
  run_surge 60 run --no-huge -q --vdev "net_memif0,role=client,socket=$SOCK,socket-abstract=no" \
    "$EXAMPLES/udp-flood.lua" --count 100000 --flows 16
  stop_testpmd || { echo "note: testpmd ended abnormally:"; tail -5 "$TMP/testpmd.out"; return 0; }
  local tx drop
  tx=$(fwd_stat 1 TX-packets)
  drop=$(fwd_stat 1 TX-dropped)
  [ -n "$tx" ] && [ -n "$drop" ] && TP_RX=$((tx + drop)) && TP_DROP=$drop
  return 0
}

echo "# udp-flood.lua --count 100000 --flows 16 -> testpmd io -> net_null"
run_memif_flood || skip "dpdk-testpmd cannot start here"
if [ -z "$TP_RX" ]; then
  # DPDK 22.11's memif server sometimes crashes (segfault in
  # librte_net_memif on its forwarding lcore) when its client disconnects:
  # the peer's bug, not surge's, so one more try before counting it
  echo "note: no final statistics from testpmd, trying once more"
  run_memif_flood || skip "dpdk-testpmd cannot start here"
fi
check "surge exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check "surge summary: TX 100000" 100000 "$(summary_count "$OUT" 0 TX)"
check_match "surge summary: tx-drops 0" 'port 0  tx-drops 0 ' "$OUT"
check "testpmd received exactly what surge sent" "$(summary_count "$OUT" 0 TX)" "${TP_RX:-none}"
check "testpmd forwarded all of it (TX-dropped 0)" 0 "${TP_DROP:-none}"

echo "# loopback.lua --count 1000 over memif, testpmd macswap reflects"
# memif's client supplies its receive buffers when it first polls, and
# loopback.lua's sender may start before its receiver polls: testpmd waits
# (up to 5 s per burst) instead of dropping what it cannot send back yet
if start_testpmd "" "set fwd macswap retry" "set burst tx delay 1000 retry 5000"; then
  run_surge 60 run --no-huge --stats-interval 0 --lcores '(0-2)@(0-1)' \
    --vdev "net_memif0,role=client,socket=$SOCK,socket-abstract=no" "$EXAMPLES/loopback.lua" --count 1000
  if stop_testpmd; then
    check "testpmd dropped nothing (TX-dropped 0)" 0 "$(fwd_stat 0 TX-dropped)"
  else
    echo "note: testpmd crashed after surge left (its memif bug, see above); surge's side still counts"
  fi
  check "surge exits 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run
  check_match "loopback: sent 1000 received 1000" '^loopback: sent 1000 received 1000$' "$OUT"
  check "summary: RX 1000" 1000 "$(summary_count "$OUT" 0 RX)"
  check_pools "round trip"
else
  check "testpmd starts a second time" started failed
fi
finish
