#!/bin/bash
# test_ring_loopback.sh - loopback.lua on one net_ring port (its own
# loopback): a TX task and an RX task on separate lcores, every packet back.
. "$(dirname "$0")/lib.sh"

loopback() {  # loopback COUNT [script options...]
  local count=$1
  shift
  run_surge 120 run --no-huge --stats-interval 0 --lcores '(0-2)@(0-1)' --vdev net_ring0 \
    "$EXAMPLES/loopback.lua" --count "$count" "$@"
  check "exit 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run
  check_match "prints: loopback: sent $count received $count" "^loopback: sent $count received $count\$" "$OUT"
  check "summary: TX $count" "$count" "$(summary_count "$OUT" 0 TX)"
  check "summary: RX == TX" "$(summary_count "$OUT" 0 TX)" "$(summary_count "$OUT" 0 RX)"
  check_match "summary: tx-drops 0" 'port 0  tx-drops 0 ' "$OUT"
  check_pools "loopback $count"
  check_no_crash "loopback $count"
}

echo "# --count 200000"
loopback 200000
echo "# --count 100003 --burst 7 --size 1500 (partial bursts, big frames)"
loopback 100003 --burst 7 --size 1500
check_match "summary: bytes are 100003 x 1500" 'port 0  RX 100003 packets 150004500 bytes' "$OUT"
finish
