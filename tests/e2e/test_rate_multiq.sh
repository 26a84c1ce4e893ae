#!/bin/bash
# test_rate_multiq.sh - one TX task feeding 4 TX queues of one port, each
# paced at its own rate (250 kpps, 500 kpps, 1 Mpps, 2 Mpps) with
# q:send_due (issue 20): each queue's rate, measured from outside the
# generator (DPDK telemetry's per-queue q_opackets over 4 s, on
# CLOCK_MONOTONIC_RAW; rate/qrates.py), is within 0.02 % of its target; the
# task's counts, the queue counters and the driver agree, nothing dropped.
# Then the same loop with q:send, which waits for each burst's departures:
# there every queue goes at the slowest one's rate (shown, and checked so,
# as what send_due is for).
#
# The machine is shared: a run whose figures are off is run once more (both
# are printed); a shortfall no larger than the time the TX thread waited for
# a CPU (schedstat) is let pass and said so, as in test_rate.sh. A surplus
# is never excused.
. "$(dirname "$0")/lib.sh"
need_cmd python3
MQ=$E2E_DIR/rate/multiq.lua
QRATES=$E2E_DIR/rate/qrates.py
RATES=(250000 500000 1000000 2000000)
SPEC=250kpps,500kpps,1mpps,2mpps
TOL=0.02          # percent
PREFIX=tx-multiq-$$
on_exit "rm -rf /var/run/dpdk/$PREFIX"

# run_mq LOOP: surge sending for 6.5 s, qrates.py sampling from 1.5 s for
# 4 s; sets RC, OUT (surge's output and the sampler's lines), CPUWAIT
run_mq() {
  local pid
  timeout -k 5 60 "$SURGE" run --no-huge --stats-interval 0 --vdev net_null0,no-rx=1 \
    --eal "--file-prefix $PREFIX" "$MQ" --rates "$SPEC" --seconds 6.5 --loop "$1" \
    >"$TMP/surge.out" 2>"$TMP/surge.err" &
  pid=$!
  timeout 30 python3 "$QRATES" "$PREFIX" 0 1.5 4 >"$TMP/qrates.out" 2>&1
  wait "$pid"; RC=$?
  OUT=$(cat "$TMP/surge.out" "$TMP/qrates.out"); ERR=$(cat "$TMP/surge.err")
  CPUWAIT=$(printf '%s\n' "$OUT" | sed -nE 's/^multiq: cpu-wait tx ([0-9.]+) s$/\1/p')
}
qpps() { printf '%s\n' "$OUT" | awk -v q="$1" '$1 == "queue" && $2 == q && $3 == "pps" { print $4 }'; }
qerr() { awk -v p="$(qpps "$1")" -v t="${RATES[$1]}" 'BEGIN { if (p == "") exit; printf "%+.4f", (p - t) / t * 100 }'; }
within() { awk -v e="$1" -v t="$2" 'BEGIN { if (e == "") exit 1; e += 0; if (e < 0) e = -e; exit !(e < t) }'; }
# a shortfall of at most the CPU wait's share of the 4 s window (of schedule)
excused() { awk -v e="$1" -v w="${CPUWAIT:-}" 'BEGIN { exit !(w != "" && e < 0 && -e / 100 * 4 <= w) }'; }
all_within() { local q; for q in 0 1 2 3; do within "$(qerr $q)" "$TOL" || return 1; done; }

echo "# send_due: each queue at its own rate"
for attempt in 1 2; do
  run_mq due
  [ "$RC" = 0 ] && all_within && break
  if [ "$attempt" = 1 ]; then
    echo "note attempt 1 (exit $RC) was off, running it once more; it measured:"
    for q in 0 1 2 3; do echo "       queue $q: $(qpps $q) pps ($(qerr $q) %)"; done
    echo "       cpu-wait ${CPUWAIT:-?} s; $(printf '%s\n' "$OUT" | grep '^window')"
  fi
done
check "send_due: exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
printf '%s\n' "$OUT" | grep -E '^(window|multiq: cpu-wait)' | sed 's/^/     /'
for q in 0 1 2 3; do
  e=$(qerr $q)
  if ! within "$e" "$TOL" && excused "$e"; then
    echo "ok   queue $q: $(qpps $q) pps, error ${e}% NOT within ${TOL}%, let pass: the TX thread waited ${CPUWAIT} s for a CPU"
    continue
  fi
  check_true "queue $q: $(qpps $q) pps from telemetry, error ${e:-?}% within ${TOL}% of ${RATES[$q]}" \
    "$(printf '%s\n' "$OUT" | grep "^queue $q ")" within "$e" "$TOL"
done
total=0
for q in 0 1 2 3; do
  read -r sent pk dr un <<<"$(printf '%s\n' "$OUT" | sed -nE \
    "s/^multiq: queue $q task sent ([0-9]+) stats packets ([0-9]+) drops ([0-9]+) unsent ([0-9]+)$/\1 \2 \3 \4/p")"
  check "queue $q: the task's count is the queue's" "${sent:-none}" "${pk:-}"
  check "queue $q: no drops, nothing unsent" "0 0" "${dr:-} ${un:-}"
  total=$((total + ${sent:-0}))
done
check "summary TX is what the task sent" "$total" "$(summary_count "$OUT" 0 TX)"
check_pools "send_due"
check_no_crash "send_due"

echo "# send: every queue waits on the others' schedules"
run_mq send
check "send: exit 0" 0 "$RC"
for q in 0 1 2 3; do echo "     queue $q: $(qpps $q) pps ($(qerr $q) %)"; done
check_true "send: queue 3 (2 Mpps) goes at about queue 0's 250 kpps" "$(qpps 3) against $(qpps 0)" \
  awk -v a="$(qpps 3)" -v b="$(qpps 0)" 'BEGIN { exit !(a > 0 && b > 0 && a < 1.1 * b) }'
check_pools "send"
finish
