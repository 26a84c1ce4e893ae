#!/bin/bash
# test_scn_memif_dut.sh - dpdk-testpmd (nobody here wrote it) as a
# forwarding DUT over two memif links: surge sends on memif 0, testpmd
# forwards (io, then mac mode) to memif 1, surge receives there. rfc2544 and
# load-latency complete, and every trial below testpmd's capacity gets back
# exactly what it sent (surge counts the flow-tagged frames it receives).
# On this 2-core machine testpmd, surge and everyone else share the CPUs,
# so the rates stay low.
. "$(dirname "$0")/lib.sh"
need_cmd dpdk-testpmd
need_cmd stdbuf
need_root

PREFIX=surge-e2e-scnm$$
S0=$TMP/scn0.sock S1=$TMP/scn1.sock
TP_PID=
trap '' PIPE
on_exit '[ -n "$TP_PID" ] && kill -KILL $(pgrep -P $TP_PID) $TP_PID; rm -rf /var/run/dpdk/$PREFIX'

start_testpmd() {  # start_testpmd FWD_MODE
  rm -f "$S0" "$S1" "$TMP/tp.in"
  mkfifo "$TMP/tp.in"
  : >"$TMP/tp.out"
  timeout -k 5 120 stdbuf -oL -eL dpdk-testpmd -l 0-1 --no-pci --no-huge -m 512 --file-prefix "$PREFIX" \
    --vdev "net_memif0,role=server,socket=$S0,socket-abstract=no" \
    --vdev "net_memif1,role=server,socket=$S1,socket-abstract=no" \
    -- -i --total-num-mbufs=8192 <"$TMP/tp.in" >"$TMP/tp.out" 2>&1 &
  TP_PID=$!
  exec 7>"$TMP/tp.in"
  { echo "set fwd $1"; echo start; } >&7
  wait_for_text "$TMP/tp.out" 'packet forwarding.* - ports=' 30 "$TP_PID" || {
    echo "testpmd did not start:"; tail -20 "$TMP/tp.out"; return 1; }
}
stop_testpmd() {
  [ -n "$TP_PID" ] || return 0
  { echo stop; echo quit; } >&7 2>/dev/null
  exec 7>&-
  wait "$TP_PID"
  TP_PID=
  rm -rf "/var/run/dpdk/$PREFIX"
}
DEVS=(--vdev "net_memif0,role=client,socket=$S0,socket-abstract=no"
      --vdev "net_memif1,role=client,socket=$S1,socket-abstract=no")

# every "sent N  received M" progress line of the run has N = M
all_back() {  # all_back LABEL
  local lines bad
  lines=$(printf '%s\n' "$OUT" | grep -E 'sent [0-9]+  received [0-9]+' || true)
  bad=$(printf '%s\n' "$lines" | awk '{ s = ""; r = ""; for (i = 1; i < NF; i++) { if ($i == "sent" && s == "") s = $(i + 1); if ($i == "received" && r == "") r = $(i + 1) } if (s != r) print }')
  if [ -n "$lines" ] && [ -z "$bad" ]; then echo "ok   $1: $(printf '%s\n' "$lines" | wc -l) trial(s), RX = TX in each"
  else echo "FAIL $1: trials that lost frames:"; printf '%s\n' "${bad:-<no trial lines>}"; FAILS=$((FAILS + 1)); fi
}

for mode in io mac; do
  echo "# testpmd --forward-mode=$mode between two memif links"
  start_testpmd "$mode" || skip "testpmd with two memif servers did not start"
  run_surge 120 run --no-huge --stats-interval 0 "${DEVS[@]}" rfc2544 --tx 0 --rx 1 --sizes 64,1024 \
    --tests throughput,latency --max-rate 5kpps --trial 0.3 --settle 0.1 --latency-trial 0.3 --link-timeout 5
  check "$mode: rfc2544 exits 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run 30
  all_back "$mode: rfc2544"
  check_match "$mode: 64 B passes at 5 kpps at once" "^ +64 B  throughput trial  1  offered 5 kpps .* loss 0.000 %" "$OUT"
  check_match "$mode: latency through testpmd" "^ +1024 B  latency at .* probes [1-9][0-9]* lost 0" "$OUT"
  check "$mode: port 1 RX = port 0 TX (surge's summary)" "$(summary_count "$OUT" 0 TX)" "$(summary_count "$OUT" 1 RX)"
  check_pools "$mode rfc2544"
  run_surge 120 run --no-huge --stats-interval 0 "${DEVS[@]}" load-latency --tx 0 --rx 1 --rates 1kpps,4kpps \
    --trial 0.3 --settle 0.1 --link-timeout 5
  check "$mode: load-latency exits 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run 30
  all_back "$mode: load-latency"
  check_pools "$mode load-latency"
  stop_testpmd
  check_match "$mode: testpmd forwarded and ended cleanly" "Bye" "$(cat "$TMP/tp.out")"
done

echo "# testpmd quits in the middle of a trial: the link goes down, the trial fails in one line"
start_testpmd io || skip "testpmd did not start"
( sleep 2; { echo stop; echo quit; } >&7 ) 2>/dev/null &
run_surge 60 run --no-huge --stats-interval 0 "${DEVS[@]}" rfc2544 --tx 0 --rx 1 --sizes 64 --tests throughput \
  --max-rate 2kpps --trial 5 --link-timeout 5
check_user_error "link down mid-trial"
check_match "link down: says which port and which trial" \
  "^port [01]: link went down during throughput trial 1 at 64 bytes$" "$ERR"
check_true "link down: noticed at once (${SECS} s)" "took $SECS s" lt "$SECS" 8
check_pools "link down"
stop_testpmd
finish
