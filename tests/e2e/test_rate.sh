#!/bin/bash
# test_rate.sh - paced TX (q:set_rate) achieves what was asked, measured two
# ways by rate/pace.lua: the pacer's own q:rate_stats() and the driver's
# packet counter over the task's clock. Each figure must be within 2 % of the
# request (the exact error is printed):
#   net_null: 10 kpps, 100 kpps, 1 Mpps, 10 Mpps, 1 Gbit/s at L1 with 60-byte
#   frames (1e9 / (84 * 8) pps, and rate_stats' l1_bps), 10 pps (rate_stats
#   over few packets), Poisson 50 kpps, on/off and ramp against their
#   analytic averages, master re-rating the running task (2 Mpps -> 300 kpps);
#   net_ring: 1 Mpps with an RX task draining the ring, RX == TX.
# Bad rates and idle policies end the run with status 1 and a first stderr
# line naming the problem. examples/rate.lua: every phase within 2 %.
#
# The machine is shared and its 2 CPUs are noisy: a run whose figures are
# off is run once more (both attempts are printed); a steady fault fails both.
# A shortfall no larger than the time the sending threads spent waiting for a
# CPU (schedstat, printed) is let pass and said so: the pacer forgives
# schedule it could not catch up, so another program's load shows as that.
. "$(dirname "$0")/lib.sh"
PACE=$E2E_DIR/rate/pace.lua
NULL=(--vdev "net_null0,no-rx=1")
RING=(--vdev net_ring0 --lcores '(0-2)@(0-1)')
TOL=2

# rate_err LABEL: the error (percent, signed) of the "pace: LABEL" line in OUT
rate_err() {
  printf '%s\n' "$OUT" | awk -v l="$1" '$1 == "pace:" && $2 == l {
    for (i = 3; i < NF; i++) if ($i == "error") { v = $(i + 1); sub(/%$/, "", v); print v; exit } }'
}
# within ERR TOL: |ERR| < TOL (fails on an empty ERR)
within() { awk -v e="$1" -v t="$2" 'BEGIN { if (e == "") exit 1; e += 0; if (e < 0) e = -e; exit !(e < t) }'; }
pace_field() {  # pace_field REGEX: capture groups 1-3 of the first line matching REGEX
  printf '%s\n' "$OUT" | sed -nE "s/$1/\\1 \\2 \\3/p" | head -1
}

# starved LABEL: true when the figure's shortfall, in seconds of schedule
# (-error x the line's window), is no more than the time the TX and RX threads
# spent runnable but waiting for a CPU ("pace: cpu-wait" line, schedstat):
# the pacer forgives schedule it could not catch up within 10 ms, so a
# machine busy with other work shows as a shortfall of about that much.
# Sets WHY. A surplus is never excused.
starved() {
  local line e win wait
  line=$(printf '%s\n' "$OUT" | grep -m1 "^pace: $1 ")
  e=$(rate_err "$1")
  win=$(printf '%s\n' "$line" | sed -nE 's/.* in ([0-9.]+) s[,)].*/\1/p')
  wait=$(printf '%s\n' "$OUT" | sed -nE 's/^pace: cpu-wait tx ([0-9.]+) s rx ([0-9.]+) s$/\1 \2/p' | awk '{ print $1 + $2 }')
  if awk -v e="${e:-0}" 'BEGIN { exit !(e + 0 > 0) }'; then
    WHY="a surplus: never excused"
  else
    WHY="shortfall $(awk -v e="$e" -v w="$win" 'BEGIN { printf "%.3f", -e / 100 * w }') s of schedule, threads waited ${wait:-?} s for a CPU"
  fi
  [ -n "$e" ] && [ -n "$win" ] && [ -n "$wait" ] &&
    awk -v e="$e" -v w="$win" -v c="$wait" 'BEGIN { exit !(e < 0 && -e / 100 * w <= c) }'
}

# measure NAME "LABELS" SURGE-ARGS...: runs surge (script and its options
# included in the args), retries once when it fails or a figure is off, then
# checks exit 0, each label's error within TOL (a shortfall the machine's
# other load explains is let pass, said as such), counters and pools.
measure() {
  local name=$1 labels=$2 attempt bad l e
  shift 2
  for attempt in 1 2; do
    run_surge 60 run --no-huge --stats-interval 0 "$@"
    bad=
    [ "$RC" = 0 ] || bad=1
    for l in $labels; do within "$(rate_err "$l")" "$TOL" || bad=1; done
    [ -z "$bad" ] && break
    if [ "$attempt" = 1 ]; then
      echo "note $name: attempt 1 (exit $RC) was off, running it once more; attempt 1 said:"
      printf '%s\n' "$OUT" | grep '^pace:' | sed 's/^/       /'
    fi
  done
  check "$name: exit 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run
  for l in $labels; do
    e=$(rate_err "$l")
    if ! within "$e" "$TOL" && starved "$l"; then
      echo "ok   $name: $l error ${e}% NOT within ${TOL}%, let pass: the machine was busy ($WHY)"
      continue
    fi
    starved "$l" || true
    check_true "$name: $l error ${e:-?}% within ${TOL}%" "$(printf '%s\n' "$OUT" | grep -m1 "^pace: $l ") ($WHY)" \
      within "$e" "$TOL"
  done
  printf '%s\n' "$OUT" | grep '^pace: cpu-wait' | sed 's/^/     /'
  check_pools "$name"
  check_no_crash "$name"
}

# checks after a task-timed pace.lua run: what the task sent is what the
# driver and the summary counted
counts_agree() {  # counts_agree NAME
  local sent opk txp
  read -r sent opk txp <<<"$(pace_field '^pace: task sent ([0-9]+), driver opackets ([0-9]+), tx_packets ([0-9]+)$')"
  check_true "$1: task sent $sent > 0" "nothing sent" [ "${sent:-0}" -gt 0 ]
  check "$1: driver opackets == task sent" "$sent" "$opk"
  check "$1: surge tx_packets == task sent" "$sent" "$txp"
  check "$1: summary TX == task sent" "$sent" "$(summary_count "$OUT" 0 TX)"
}

echo "# constant packet rates on net_null (3 s each)"
for r in 10kpps 100kpps 1mpps 10mpps; do
  measure "$r" "rate_stats counters" "${NULL[@]}" "$PACE" --rate "$r" --seconds 3
  counts_agree "$r"
  check_match "$r: rate_stats target_pps is the request" "target_pps $(awk -v r="$r" 'BEGIN {
    v = r + 0; if (r ~ /mpps/) v *= 1e6; else if (r ~ /kpps/) v *= 1e3; printf "%.1f", v }')\\)" "$OUT"
done

echo "# L1 bit rate: 1gbit with 60-byte frames = 1e9 / ((60 + 24) * 8) pps"
EXPECT_1G=$(awk 'BEGIN { printf "%.3f", 1e9 / ((60 + 24) * 8) }')
measure "1gbit" "rate_stats l1_bps counters" "${NULL[@]}" "$PACE" --rate 1gbit --size 60 \
  --expect "$EXPECT_1G" --expect-l1 1e9 --seconds 3
counts_agree "1gbit"
check_match "1gbit: summary bytes are 60 per packet" \
  "port 0  TX $(summary_count "$OUT" 0 TX) packets $(($(summary_count "$OUT" 0 TX) * 60)) bytes" "$OUT"

echo "# a low rate: 10 pps, one packet per send, for 2 s (~21 packets)"
# "counters" counts the packets that left after the first send over the
# time from then to the last send. rate_stats must be as right: at 10 pps
# over 2 s, counting the N packets over the N - 1 gaps between the first and
# the last departure (a fencepost error) would read +5 %.
measure "10pps" "counters rate_stats" "${NULL[@]}" "$PACE" --rate 10pps --burst 1 --seconds 2

echo "# Poisson 50 kpps: the mean rate"
measure "poisson 50kpps" "rate_stats counters" "${NULL[@]}" "$PACE" --rate 50kpps --pattern poisson \
  --seed 7 --seconds 3
counts_agree "poisson 50kpps"

echo "# on/off: 1000 packets at 1 Mpps, 10 ms off = 1000 / (1 ms + 10 ms) = 90909 pps"
measure "onoff" "rate_stats counters" "${NULL[@]}" "$PACE" --rate 1mpps --pattern onoff --on 1000 \
  --off 0.01 --seconds 3
check_match "onoff: expectation is 1000 / 0.011" "pace: rate_stats .* expected +90909\\.1 " "$OUT"
counts_agree "onoff"

echo "# ramp 10 -> 100 kpps over 2 s, then 100 kpps: average over 3 s = (2 * 55k + 100k) / 3 = 70 kpps"
measure "ramp" "rate_stats counters" "${NULL[@]}" "$PACE" --rate 10kpps --pattern ramp --to 100kpps \
  --over 2 --seconds 3
RAMP_EXP=$(printf '%s\n' "$OUT" | sed -nE 's/^pace: rate_stats .* expected +([0-9.]+) .*/\1/p')
check_true "ramp: expectation ${RAMP_EXP:-?} ~ 70 kpps (the task ran ~3 s)" "${RAMP_EXP:-none}" \
  awk -v x="${RAMP_EXP:-0}" 'BEGIN { exit !(x > 69000 && x < 71000) }'
counts_agree "ramp"

echo "# master re-rates the running task: 2 Mpps for 2 s, then 300 kpps for 2 s"
measure "rerate" "before-rerate rerate-stats rerate-counter" "${NULL[@]}" "$PACE" --rate 2mpps \
  --rerate 300kpps --seconds 2
check_match "rerate: rate_stats reports the new target" '^pace: rerate target_pps 300000\.0$' "$OUT"

echo "# net_ring at 1 Mpps, an RX task draining the ring: every packet arrives"
measure "ring 1mpps" "rate_stats counters" "${RING[@]}" "$PACE" --rate 1mpps --rx --seconds 3
counts_agree "ring 1mpps"
read -r RTX RRX RTASK <<<"$(pace_field '^pace: ring tx ([0-9]+) rx ([0-9]+) \(rx task counted ([0-9]+)\)$')"
check "ring 1mpps: RX == TX" "${RTX:-none}" "${RRX:-missing}"
check "ring 1mpps: the RX task counted them all" "${RTX:-none}" "${RTASK:-missing}"
check "ring 1mpps: summary RX == summary TX" "$(summary_count "$OUT" 0 TX)" "$(summary_count "$OUT" 0 RX)"
check_nomatch "ring 1mpps: nothing left in the ring at close" 'still queued' "$OUT
$ERR"

echo "# bad rates and idle policies"
# bad NAME REGEX PACE-OPTS...: exit 1..123, stderr line 1 matches REGEX
bad() {
  local name=$1 re=$2
  shift 2
  run_surge 30 run --no-huge --stats-interval 0 "${NULL[@]}" "$PACE" --seconds 1 "$@"
  check_user_error "$name"
  check_match "$name: stderr line 1 names the problem" "$re" "$(printf '%s\n' "$ERR" | grep . | head -1)"
  check_nomatch "$name: nothing was sent" '^pace: (rate_stats|counters)' "$OUT"
}
bad "negative rate" "pace\\.lua:[0-9]+: rate '-1mpps' must be above zero" --rate -1mpps
bad "zero rate" "pace\\.lua:[0-9]+: rate '0pps' must be above zero" --rate 0pps
bad "unknown unit" "pace\\.lua:[0-9]+: rate '5furlongs': unknown unit 'furlongs'" --rate 5furlongs
bad "above link speed" "pace\\.lua:[0-9]+: rate 20 Gbit/s is above port 0's link speed of 10 Gbit/s" --rate 20gbit
bad "150%" "pace\\.lua:[0-9]+: rate '150%' is above 100% of the link" --rate 150%
bad "idle max_sleep_us out of range (master)" "pace\\.lua:[0-9]+: surge\\.idle: max_sleep_us: expected an integer in 0\\.\\.1000000, got 2000000" \
  --rate 10kpps --master-max-sleep-us 2000000
bad "idle max_sleep_us out of range (task)" "pace\\.lua:[0-9]+: surge\\.idle: max_sleep_us: expected an integer in 0\\.\\.1000000, got 2000000 \\(task 'tx'" \
  --rate 10kpps --max-sleep-us 2000000
bad "idle mode nap (master)" "pace\\.lua:[0-9]+: surge\\.idle: mode: expected busy, pause or sleep, got \"nap\"" \
  --rate 10kpps --master-idle-mode nap
bad "idle mode nap (task)" "pace\\.lua:[0-9]+: surge\\.idle: mode: expected busy, pause or sleep, got \"nap\" \\(task 'tx'" \
  --rate 10kpps --idle-mode nap

echo "# examples/rate.lua: every phase within ${TOL}%"
for attempt in 1 2; do
  run_surge 90 run --no-huge --stats-interval 0 "${NULL[@]}" "$EXAMPLES/rate.lua"
  PHASES=$(printf '%s\n' "$OUT" | grep -E '^  .* pps  \(expected +[0-9]+, +[+-][0-9.]+%\)$')
  BAD=$(printf '%s\n' "$PHASES" | sed -nE 's/.*, +([+-][0-9.]+)%\)$/\1/p' |
    awk -v t="$TOL" '{ e = $1 + 0; if (e < 0) e = -e; if (e >= t) n++ } END { print n + 0 }')
  [ "$RC" = 0 ] && [ "$(printf '%s\n' "$PHASES" | grep -c .)" = 8 ] && [ "$BAD" = 0 ] && break
  if [ "$attempt" = 1 ]; then
    echo "note rate.lua: attempt 1 (exit $RC) was off, running it once more; attempt 1 said:"
    printf '%s\n' "$PHASES" | sed 's/^/       /'
  fi
done
check "rate.lua: exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check "rate.lua: 8 phase lines (6 set by the task, 2 by master)" 8 "$(printf '%s\n' "$PHASES" | grep -c .)"
while IFS= read -r line; do
  [ -n "$line" ] || continue
  e=$(printf '%s\n' "$line" | sed -nE 's/.*, +([+-][0-9.]+)%\)$/\1/p')
  check_true "rate.lua:$(printf '%s' "$line" | sed -E 's/ +[0-9]+ pps.*//') error ${e}% within ${TOL}%" "$line" within "$e" "$TOL"
done <<<"$PHASES"
check_pools "rate.lua"
check_no_crash "rate.lua"
finish
