#!/usr/bin/env bash
# test_repl_port_close.sh - p:close() typed at `surge repl < file`: refused
# (naming the queue, task and lcore) while launched tasks use the net_ring
# port, accepted once they are stopped, while a sender on the other port
# (net_null) keeps going; the ring opens again with fresh counters and
# moves exactly 1000 packets; every pool is full at the end.
. "$(dirname "$0")/lib.sh"

SESSION=$E2E_DIR/repl/port_close_session.lua
run_surge 90 repl --no-huge --stats-interval 0 --lcores '(0-4)@(0-1)' --vdev net_ring0 \
  --vdev net_null0,no-rx=1 "$E2E_DIR/repl/flood.lua" < "$SESSION"
check "exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
refused='^error: port 0 cannot close: its (rx|tx) queue 0 is used by task'
check "refused twice while tasks use the port" 2 "$(grep -cE "$refused '(tx|rx)' on lcore [0-9]+ \(stop that task first\)$" <<<"$OUT")"
check_match "the second refusal names the receiver, still running" \
  "port 0 cannot close: its rx queue 0 is used by task 'rx' on lcore" "$OUT"
check_match "closed once the tasks ended" $'^closed as port\t0$' "$OUT"
check_match "the other port kept sending across the close" $'^the other port kept sending\ttrue$' "$OUT"
check_match "opened again with fresh counters" $'^fresh counters\t0\t0$' "$OUT"
check_match "after the reopen: 1000 sent, received, counted by surge and the driver" \
  $'^received after reopen\t1000\t1000\t1000$' "$OUT"
sent=$(sed -n 's/^sent before close\t//p' <<<"$OUT")
check_true "packets moved before the close ($sent)" "" test "${sent:-0}" -gt 0
check_match "the receiver got every packet sent before the close" "^${sent:-x}$" "$OUT"
check "summary: port 0 counts from its reopen" 1000 "$(summary_count "$OUT" 0 TX)"
check "summary: port 0 RX" 1000 "$(summary_count "$OUT" 0 RX)"
check_pools "port close"
check_no_leak "port close"
check_no_crash "port close"
finish
