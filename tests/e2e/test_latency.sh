#!/bin/bash
# test_latency.sh - latency probes (surge.latency, core/dataplane/probe.c, latency.c).
#   (a) examples/latency.lua on the virtual default (it adds a net_ring
#       loopback itself): exit 0, "lost 0 dup 0 reordered 0", one probe per
#       100 packets sent (the first packet is one: ceil(sent / 100)), every
#       packet back (ring TX == RX), and min <= p50 <= p90 <= p99 <= p99.9 <= max.
#   (b) rate/forward.lua on two net_ring ports: a TX task sends N packets, all
#       probes, on ring0; a forwarding task copies them onto ring1 (from its
#       own shared pool) dropping sequence numbers s % 100 == 99 and swapping
#       each surviving pair (2k, 2k+1); master scans ring1. lost, reordered,
#       duplicated and probes must equal what the forwarder did, and the
#       figures worked out here. A duplicating forwarder (every s % 50 == 49
#       sent twice) gives duplicated == that count.
. "$(dirname "$0")/lib.sh"
FORWARD=$E2E_DIR/rate/forward.lua
read -r -a DEV <<<"$(default_dev)"

lat_read() {  # lat_read LINE-REGEX: sets PROBES LOST DUP REORD MIN MEAN P50 P90 P99 P999 MAX
  local line
  line=$(printf '%s\n' "$OUT" | grep -E -m1 "$1")
  read -r PROBES LOST DUP REORD <<<"$(printf '%s\n' "$line" | sed -nE 's/.*probes ([0-9]+) lost ([0-9]+) dup ([0-9]+) reordered ([0-9]+) \|.*/\1 \2 \3 \4/p')"
  read -r MIN MEAN P50 P90 P99 P999 MAX <<<"$(printf '%s\n' "$line" | sed -nE 's/.*latency us: min ([0-9.]+) mean ([0-9.]+) p50 ([0-9.]+) p90 ([0-9.]+) p99 ([0-9.]+) p99\.9 ([0-9.]+) max ([0-9.]+)$/\1 \2 \3 \4 \5 \6 \7/p')"
}
ordered() { awk -v l="$*" 'BEGIN { n = split(l, v, " "); if (n < 2) exit 1; for (i = 2; i <= n; i++) if (v[i] + 0 < v[i - 1] + 0) exit 1 }'; }
check_percentiles() {  # check_percentiles NAME
  check_true "$1: min <= p50 <= p90 <= p99 <= p99.9 <= max ($MIN $P50 $P90 $P99 $P999 $MAX us)" \
    "min $MIN p50 $P50 p90 $P90 p99 $P99 p99.9 $P999 max $MAX" ordered "$MIN" "$P50" "$P90" "$P99" "$P999" "$MAX"
  check_true "$1: min <= mean <= max ($MIN $MEAN $MAX us)" "min $MIN mean $MEAN max $MAX" ordered "$MIN" "$MEAN" "$MAX"
}

echo "# (a) examples/latency.lua on the virtual default"
run_surge 60 run --no-huge --stats-interval 0 "${DEV[@]}" "$EXAMPLES/latency.lua"
check "latency.lua: exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
LINE=$(printf '%s\n' "$OUT" | grep -m1 '^latency: sent')
echo "     $LINE"
SENT=$(printf '%s\n' "$LINE" | sed -nE 's/^latency: sent ([0-9]+) packets in [0-9.]+ s, .*/\1/p')
lat_read '^latency: sent'
check_match "latency.lua: lost 0 dup 0 reordered 0" 'lost 0 dup 0 reordered 0 \|' "$LINE"
check_true "latency.lua: sent ${SENT:-?} packets (> 100000)" "${SENT:-none}" [ "${SENT:-0}" -gt 100000 ]
# the marker makes packet 0, 100, 200, ... probes
check "latency.lua: probes == ceil(sent / 100) (sent $SENT)" "$(( (${SENT:-0} + 99) / 100 ))" "${PROBES:-missing}"
check_percentiles "latency.lua"
RING=$(printf '%s\n' "$OUT" | awk '$1 == "port" && $3 == "TX" { p = $2 } END { print p }')
check "latency.lua: the loopback's summary TX == sent" "$SENT" "$(summary_count "$OUT" "$RING" TX)"
check "latency.lua: the loopback's summary RX == TX" "$(summary_count "$OUT" "$RING" TX)" "$(summary_count "$OUT" "$RING" RX)"
check_pools "latency.lua"
check_no_crash "latency.lua"

echo "# examples/latency.lua --duration 5: sends for the run's 5 s, not its own 3 s"
run_surge 60 run --no-huge --stats-interval 0 --duration 5 "${DEV[@]}" "$EXAMPLES/latency.lua" --rate 100kpps
check "latency.lua --duration 5: exit 0" 0 "$RC"
SECS_SENT=$(printf '%s\n' "$OUT" | sed -n 's/^latency: sent [0-9]* packets in \([0-9.]*\) s,.*/\1/p')
check_true "latency.lua --duration 5: the sender ran ${SECS_SENT:-?} s (4.5..5.5), not 3" "${SECS_SENT:-none}" \
  awk -v s="${SECS_SENT:-0}" 'BEGIN { exit !(s >= 4.5 && s <= 5.5) }'

# forward NAME MODE COUNT EXP_LOST EXP_REORD EXP_DUP EXP_DROPPED EXP_OUT
forward() {
  local name=$1 mode=$2 count=$3 lost=$4 reord=$5 dup=$6 dropped=$7 out=$8 line
  run_surge 60 run --no-huge --stats-interval 0 --vdev net_ring0 --vdev net_ring1 --lcores '(0-3)@(0-1)' \
    "$FORWARD" --mode "$mode" --count "$count"
  check "$name: exit 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run
  printf '%s\n' "$OUT" | grep '^forward:' | sed 's/^/     /'
  line=$(printf '%s\n' "$OUT" | grep -m1 '^forward: mode')
  check_match "$name: TX task sent $count, forwarder received them all" \
    "tx sent $count, forwarder received $count sent $out \\(dropped $dropped, " "$line"
  check_match "$name: master received what the forwarder sent" "master received $out, probes found $out\$" "$line"
  check_match "$name: the receiver agrees with what the forwarder did" '^forward: counts match$' "$OUT"
  lat_read '^forward: probes'
  check "$name: lost" "$lost" "${LOST:-missing}"
  check "$name: reordered" "$reord" "${REORD:-missing}"
  check "$name: duplicated" "$dup" "${DUP:-missing}"
  check "$name: probes (distinct sequence numbers received)" "$((count - dropped))" "${PROBES:-missing}"
  check_percentiles "$name"
  check "$name: ring0 summary TX" "$count" "$(summary_count "$OUT" 0 TX)"
  check "$name: ring0 summary RX" "$count" "$(summary_count "$OUT" 0 RX)"
  check "$name: ring1 summary TX" "$out" "$(summary_count "$OUT" 1 TX)"
  check "$name: ring1 summary RX" "$out" "$(summary_count "$OUT" 1 RX)"
  check_pools "$name"
  check_no_crash "$name"
}

echo "# (b) drop s % 100 == 99, swap the pairs (2k, 2k+1)"
# 10010 packets: drops 99, 199, ..., 9999 (100), all below the last one sent
# (10009), so all 100 are detectably lost; 5005 pairs, 100 of them lost a
# member: 4905 swapped; 9910 forwarded
forward "dropswap 10010" dropswap 10010 100 4905 0 100 9910
# 10000 packets: the last drop (9999) is above the highest number that
# arrives (9998), so the receiver can see only 99 of the 100 drops
forward "dropswap 10000" dropswap 10000 99 4900 0 100 9900

echo "# (b) duplicate s % 50 == 49"
forward "dup 10000" dup 10000 0 0 200 0 10200
finish
