#!/bin/bash
# test_rate_counters.sh - each counter and rate report means one thing
# (issue 8). On net_null, with tests/e2e/rate/counters.lua:
#   - a paced burst of 32 at 10 pps cut by the stop (--duration 1): the
#     packets not yet due are "unsent at stop" (summary, port:stats(),
#     rate_stats), never tx-drops (which means the driver refused); sent +
#     unsent = 32
#   - rate_stats().target_pps is the schedule's rate for on/off, ramp and
#     custom gaps (was 0 for every pattern but constant and Poisson); the
#     catch-up mode and the late packets are reported per queue (rate_stats
#     and a summary line per paced queue)
#   - an L2 rate is checked at L1: 10gbit-l2 needs 10.13 Gbit/s on a 10 Gbit/s
#     link even with the longest frames, and is refused; 9.8gbit-l2 is not
#   - a pcap reader with timing = "original" paces the queue that sends its
#     packets without r:pace(q) (20 records 10 ms apart take >= 180 ms), and a
#     queue with its own rate refuses its bursts with a clear error
. "$(dirname "$0")/lib.sh"
CNT=$E2E_DIR/rate/counters.lua
NULL=(--vdev "net_null0,no-rx=1")
field() { printf '%s\n' "$OUT" | sed -nE "s/$1/\\1/p" | head -1; }
near() { awk -v x="$1" -v w="$2" -v t="$3" 'BEGIN { if (x == "") exit 1; d = x / w - 1; if (d < 0) d = -d; exit !(d <= t / 100) }'; }

echo "# stop mid-paced-burst: unsent, not drops"
run_surge 30 run --no-huge --stats-interval 0 --duration 1 "${NULL[@]}" "$CNT" --case stop
check "stop: exit 0" 0 "$RC"
SENT=$(field '^counters: sent ([0-9]+) .*')
UNSENT=$(field '^counters: sent [0-9]+ rate_stats unsent ([0-9]+)$')
check_true "stop: some packets left before the stop (${SENT:-?})" "$OUT" [ "${SENT:-0}" -ge 5 ]
check_true "stop: most of the burst was not due (${UNSENT:-?} unsent)" "$OUT" [ "${UNSENT:-0}" -ge 10 ]
check "stop: sent + unsent = 32" 32 "$((${SENT:-0} + ${UNSENT:-0}))"
check_match "stop: port:stats() tx_drops 0, tx_unsent as rate_stats" \
  "^counters: tx_packets ${SENT:-x} tx_drops 0 tx_unsent ${UNSENT:-x}\$" "$OUT"
check_match "stop: summary tx-drops 0, unsent-at-stop ${UNSENT:-?}" "port 0  tx-drops 0  unsent-at-stop ${UNSENT:-x} " "$OUT"
check_pools "stop"

echo "# target_pps for every pattern (1 s each)"
for case in "onoff 90909 3 burst 10000" "ramp 32500 5 burst 10000" "gaps 50000 0.01 skip 20"; do
  set -- $case
  run_surge 30 run --no-huge --stats-interval 0 "${NULL[@]}" "$CNT" --case target --pattern "$1" --catchup "$4"
  check "target $1: exit 0" 0 "$RC"
  check_match "target $1: rate_stats says catchup $4" "^counters: $1 target_pps .* late [0-9]+ skipped_s [0-9.]+ catchup $4\$" "$OUT"
  check_match "target $1: the summary reports the queue's catch-up and late packets" \
    "^  port 0  txq 0 paced: [0-9.]+ pps \(target [0-9.]+\)  late [0-9]+  catch-up $4 \(max $5 us\)  skipped [0-9.]+ s\$" "$OUT"
  T=$(field "^counters: $1 target_pps ([0-9.]+) .*")
  check_true "target $1: target_pps ${T:-none} within $3% of $2" "$(printf '%s\n' "$OUT" | grep '^counters')" near "${T:-}" "$2" "$3"
done

echo "# L2 rates are checked at L1"
printf 'local surge = require "surge"\nfunction configure(p) p:option("--rate", "rate", "") end\nfunction master(a) surge.port(0, { txq = 1 }):txq(0):set_rate(a.rate) print("accepted " .. a.rate) end\n' >"$TMP/l2.lua"
run_surge 30 run --no-huge --stats-interval 0 "${NULL[@]}" "$TMP/l2.lua" --rate 10gbit-l2
check_user_error "10gbit-l2 on 10 Gbit/s"
check_match "10gbit-l2: stderr names the L1 figure" \
  "l2\\.lua:3: rate 10 Gbit/s at L2 is 10\\.13[0-9]* Gbit/s on the wire even with [0-9]+-byte frames: above port 0's link speed of 10 Gbit/s" \
  "$(printf '%s\n' "$ERR" | grep . | head -1)"
run_surge 30 run --no-huge --stats-interval 0 "${NULL[@]}" "$TMP/l2.lua" --rate 9.8gbit-l2
check "9.8gbit-l2: accepted" "0 accepted 9.8gbit-l2" "$RC $(printf '%s\n' "$OUT" | grep '^accepted')"

echo "# a reader's timing paces whatever sends its packets"
run_surge 30 run --no-huge --stats-interval 0 "${NULL[@]}" "$CNT" --case reader --file "$TMP/r.pcap"
check "reader: exit 0" 0 "$RC"
MS=$(field '^counters: reader sent 20 in ([0-9.]+) ms.*')
check_true "reader: 20 records 10 ms apart took ${MS:-?} ms (>= 180) without r:pace(q)" "$OUT" \
  awk -v m="${MS:-0}" 'BEGIN { exit !(m >= 180) }'
check_match "reader: a queue with its own rate refuses the timed burst" \
  'with a rate: .*port 0 tx queue 0 has a rate of its own, but the burst carries a pcap reader.s timing: open the reader with timing = "fast"' "$OUT"
check_pools "reader"
finish
