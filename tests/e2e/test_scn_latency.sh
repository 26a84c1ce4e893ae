#!/bin/bash
# test_scn_latency.sh - scenario latency on a net_ring loopback is the
# loopback's (issue 22 item 1): p50 under 1 us at every load from 10 kpps to
# 1 Mpps for load-latency, for every qos class and every rfc2544 size, no
# probe at 0 ns, and the receive-poll delay stated under the tables. Before
# the fix the trial polled RX only between paced bursts (10-15 us at
# 100-200 kpps, 10.11 us for every qos class, 6.2 us at every rfc2544 size).
# Also: a trial of D s at R pps sends round(R * D) frames (item 3: it sent
# one more); scenarios print no stats lines unless --stats-interval is given,
# no per-trial probe notice, and say where the frames go (item 9).
. "$(dirname "$0")/lib.sh"

RING=(--no-huge --vdev net_ring0)
# scenario JSON: a field of each row of a list, one per line
rows() {  # rows FILE SCENARIO LIST EXPR (python, r = the row)
  python3 -c "import json, sys
d = json.load(open(sys.argv[1]))['scenarios'][sys.argv[2]]
for r in d[sys.argv[3]]: print(eval(sys.argv[4]))" "$@"
}
# A probe that waited in the ring for the rest of a paced burst read 10-16 us
# (the old p90 at 100-300 kpps, p50 where the probes sat first in a burst);
# p90 stays under 5 us unless the trial's core was taken away for a tenth
# of the trial (a shared 2-CPU VM): then the run is tried once more.
bounds_ok() {  # bounds_ok FILE SCENARIO LIST: every p50 < 1 us, p90 < 5 us, min > 0
  rows "$@" 'r["latency"]["p50_ns"] < 1000 and r["latency"]["p90_ns"] < 5000 and r["latency"]["min_ns"] > 0' |
    grep -qv True && return 1
  return 0
}
run_latency() {  # run_latency FILE SCENARIO LIST ARGS...: runs (twice at most), sets RC, OUT, ERR
  local f=$1 sc=$2 list=$3 try
  shift 3
  for try in 1 2; do
    run_surge 120 run "${RING[@]}" --output "$f" "$@"
    [ "$RC" = 0 ] && bounds_ok "$f" "$sc" "$list" && return
    [ "$try" = 1 ] && { echo "note: $sc: out of bounds or failed (rc $RC), once more:"; show_run 8; }
  done
}
under_1us() {  # under_1us WHAT P50/P90/MIN...: each p50 below 1 us, p90 below 5 us, min above 0
  local what=$1
  shift
  for v in "$@"; do
    local p50 p90 min
    IFS=/ read -r p50 p90 min <<<"$v"
    check_true "$what: p50 $p50 ns < 1 us" "p50 $p50 ns" lt "$p50" 1000
    check_true "$what: p90 $p90 ns < 5 us" "p90 $p90 ns" lt "$p90" 5000
    check_true "$what: min $min ns > 0 (no probe read at or before its stamp)" "min $min ns" lt 0 "$min"
  done
}

echo "# load-latency 10 kpps .. 1 Mpps: p50 under 1 us at every load"
run_latency "$TMP/ll.json" load-latency points load-latency --rates 10kpps,100kpps,200kpps,1mpps \
  --trial 0.5 --settle 0.05
check "load-latency exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
mapfile -t lat < <(rows "$TMP/ll.json" load-latency points '"%d/%d/%d" % (r["latency"]["p50_ns"], r["latency"]["p90_ns"], r["latency"]["min_ns"])')
under_1us "load-latency" "${lat[@]}"
check "load-latency: four points" 4 "$(rows "$TMP/ll.json" load-latency points 1 | wc -l)"
# round(R * D) frames, never one more (the old loop sent 5001); fewer only
# when the trial's core was taken away at its end, and then it is flagged
check "10 kpps for 0.5 s: 5000 frames sent, or fewer and flagged surge-limited" 5000 \
  "$(rows "$TMP/ll.json" load-latency points '5000 if r["sender_limited"] and r["sent"] < 5000 else r["sent"]' | head -1)"
check_match "the poll delay is stated under the table" \
  "^latency includes up to one RX poll interval of surge's own delay: polls [0-9.]+ us apart" "$OUT"
check_match "the first line says where the frames go" \
  "^load-latency: tx port 0 -> rx port 0 to the rx port's own MAC 00:00:00:00:00:00 \(no gateway\)" "$OUT"
check_nomatch "no stats lines between the progress lines" '^\[ *[0-9.]+s\] port' "$OUT$ERR"
check_nomatch "no probe notice (the trial chose its idle policy)" "receives latency probes" "$OUT$ERR"
check_nomatch "no rate in scientific notation" '[0-9]e[+-][0-9]' "$OUT$ERR"

echo "# qos: two classes of very different rates, p50 under 1 us each"
run_latency "$TMP/qos.json" qos classes qos --classes ef:46:10kpps,be:0:300kpps --trial 0.5 \
  --settle 0.05
check "qos exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
mapfile -t lat < <(rows "$TMP/qos.json" qos classes '"%d/%d/%d" % (r["latency"]["p50_ns"], r["latency"]["p90_ns"], r["latency"]["min_ns"])')
under_1us "qos" "${lat[@]}"
check "qos: two classes with probes" 2 "$(rows "$TMP/qos.json" qos classes 'r["latency"]["probes"] > 0' | grep -c True)"

echo "# rfc2544 latency at three sizes: p50 under 1 us each"
run_latency "$TMP/rfc.json" rfc2544 sizes rfc2544 --tests latency --sizes 64,512,1518 \
  --max-rate 300kpps --latency-trial 0.5 --settle 0.05
check "rfc2544 exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
mapfile -t lat < <(rows "$TMP/rfc.json" rfc2544 sizes '"%d/%d/%d" % (r["latency"]["p50_ns"], r["latency"]["p90_ns"], r["latency"]["min_ns"])')
under_1us "rfc2544" "${lat[@]}"
check_nomatch "rfc2544: the probe notice not once per size" "receives latency probes" "$OUT$ERR"

echo "# --stats-interval given: a scenario prints its stats lines"
run_surge 60 run "${RING[@]}" --stats-interval 0.2 load-latency --rates 10kpps --trial 0.6 --settle 0.05
check "load-latency --stats-interval 0.2 exits 0" 0 "$RC"
check_match "stats lines printed" '^\[ *[0-9.]+s\] port 0' "$OUT$ERR"
finish
