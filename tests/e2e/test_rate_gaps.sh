#!/bin/bash
# test_rate_gaps.sh - the default pacer keeps the shape of the schedule
# (issue 8), measured outside surge: a paced task (bench/gaps.lua)
# sends into net_pcap, tshark reads the capture's gaps (frame.time_delta),
# bench/gapstats.py compares them with the schedule.
#   - Poisson 50 kpps, default policy: under 25 % of gaps below 0.5 us
#     (before: ~71 %, as gaps >= 50 us were batched into >= 500 us sleeps)
#     and a Kolmogorov-Smirnov distance to the exponential under 0.15
#     (bench-gaps reports ~0.02 on a quiet machine; this is lenient because
#     the machine is shared)
#   - constant 10 kpps, default policy: median gap error under 5 us
#   - batch = true (the explicit low-CPU option) still keeps the average
# One retry per case: a busy machine wakes sleepers late. A shape check
# that still fails while the TX thread waited for a CPU for more than 2 % of
# the run (schedstat run_delay, cpu_wait_s) is let pass and said so: no
# pacer keeps gaps on a core it does not have.
. "$(dirname "$0")/lib.sh"
need_cmd tshark
GAPS=$SURGE_SRC/bench/gaps.lua
STATS=$SURGE_SRC/bench/gapstats.py
val() { printf '%s\n' "$1" | sed -nE "s/.* $2=([0-9.]+).*/\\1/p"; }

# shape NAME RATE PPS PATTERN ARGS...: sets S (gapstats line) and P (pacer line)
shape() {
  local name=$1 rate=$2 pps=$3 pattern=$4
  shift 4
  run_surge 60 run --no-huge --stats-interval 0 --vdev "net_pcap0,tx_pcap=$TMP/$name.pcap" "$GAPS" \
    --rate "$rate" --pattern "$pattern" --seconds 2 "$@"
  tshark_q -r "$TMP/$name.pcap" -T fields -e frame.time_delta | tail -n +2 >"$TMP/$name.gaps"
  S=" $(python3 "$STATS" "$TMP/$name.gaps" "$pps")"
  P=$(printf '%s\n' "$OUT" | grep '^GAPS' || true)
}

# shape_check DESCRIPTION COMMAND...: check_true, excused when starved
shape_check() {
  local d=$1 wait
  shift
  wait=$(val "$P" cpu_wait_s)
  if ! "$@" && lt 0.04 "${wait:-0}"; then
    echo "ok   $d NOT met, let pass: the TX thread waited ${wait} s of 2 s for a CPU (machine busy)"
    return
  fi
  check_true "$d" "$S / $P" "$@"
}

for attempt in 1 2; do
  shape poisson 50kpps 50000 poisson
  lt "$(val "$S" under_0.5us)" 25 && lt "$(val "$S" ks)" 0.15 && break
  [ "$attempt" = 1 ] && echo "note poisson: attempt 1 was off, once more:$S"
done
check "poisson: exit 0" 0 "$RC"
echo "    $S"
echo "    $P"
check_true "poisson: ~100000 gaps captured ($(val "$S" gaps))" "$S" lt 95000 "$(val "$S" gaps)"
shape_check "poisson: gaps under 0.5 us $(val "$S" under_0.5us)% < 25%" lt "$(val "$S" under_0.5us)" 25
shape_check "poisson: KS distance $(val "$S" ks) < 0.15" lt "$(val "$S" ks)" 0.15
check_pools "poisson"

for attempt in 1 2; do
  shape const 10kpps 10000 constant
  lt "$(val "$S" p50_err_us)" 5 && break
  [ "$attempt" = 1 ] && echo "note const: attempt 1 was off, once more:$S"
done
check "const 10kpps: exit 0" 0 "$RC"
echo "    $S"
shape_check "const 10kpps: median gap error $(val "$S" p50_err_us) us < 5 us" lt "$(val "$S" p50_err_us)" 5

shape batch 10kpps 10000 constant --batch
check "batch: exit 0" 0 "$RC"
echo "    $S"
shape_check "batch: the average holds ($(val "$S" rate) pps within 1% of 10000)" \
  awk -v r="$(val "$S" rate)" 'BEGIN { exit !(r > 9900 && r < 10100) }'
check_match "batch: late packets are counted" 'late=[1-9][0-9]* ' "$P"
finish
