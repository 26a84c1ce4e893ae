#!/usr/bin/env bash
# test_repl_port_close.sh - p:close() typed at `surge repl < file`: refused
# (naming the queue, task and lcore) while launched tasks use the net_ring
# port, accepted once they are stopped, while a sender on the other port
# (net_null) keeps going; the ring opens again with fresh counters and
# moves exactly 1000 packets; every pool is full at the end. Then the same
# from `surge attach -e` into a running `surge run --control`.
. "$(dirname "$0")/lib.sh"

SESSION=$E2E_DIR/repl/port_close_session.lua
run_surge 90 repl --no-huge --stats-interval 0 --lcores '(0-4)@(0-1)' --vdev net_ring0 \
  --vdev net_null0,no-rx=1 "$E2E_DIR/repl/flood.lua" < "$SESSION"
check "exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
refused='^error: prompt:1: port 0 cannot close: its (rx|tx) queue 0 is used by task'
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

# surge attach -e: close the idle ring, refused on the port the task sends on
cat >"$TMP/two.lua" <<'LUA'
local surge = require "surge"
function tx(q)
  local pool = surge.pool{ template = surge.proto.udp{ size = 60 } }
  local b = pool:burst(32)
  q:set_rate("50kpps")
  while surge.running() do b:alloc(); q:send(b) end
  return "sent"
end
function master()
  local ring = surge.port("net_ring0")
  local pool = surge.pool{ size = 255, template = surge.proto.udp{ size = 60 } }
  local b = pool:burst(32)
  b:alloc()
  ring:txq(0):send(b)
  assert(ring:rxq(0):recv(b) == 32)
  b:free()
  surge.launch("tx", surge.port("net_null0"):txq(0))
  print("ready")
  io.stdout:flush()
  surge.wait()
end
LUA
CTL=$TMP/pc.sock
timeout -k 5 60 "$SURGE" run --no-huge --stats-interval 0 --lcores '(0-1)@(0-1)' --vdev net_ring0 \
  --vdev net_null0,no-rx=1 --control "$CTL" --output "$TMP/pc.json" "$TMP/two.lua" >"$TMP/run.out" 2>"$TMP/run.err" &
RUN=$!
on_exit "kill $RUN"
wait_for_text "$TMP/run.out" '^ready$' 20 "$RUN" && for _ in $(seq 50); do [ -S "$CTL" ] && break; sleep 0.1; done
A1=$("$SURGE" attach "$CTL" -e 'return surge.port(0):close()' 2>&1); R1=$?
check "attach -e: the idle ring port closes" "0/0" "$R1/$A1"
# "ready" comes at the launch; the queue is the task's from its first send
# (bounded wait, as a user who looks again would)
for _ in $(seq 100); do
  [ "$("$SURGE" attach "$CTL" -e 'return surge.port(1):txq(0):stats().lcore' 2>/dev/null)" = 1 ] && break
  sleep 0.05
done
A2=$("$SURGE" attach "$CTL" -e 'surge.port(1):close()' 2>&1); R2=$?
check "attach -e: refused on the busy port, exit 1" 1 "$R2"
check_match "attach -e: the refusal names the task" "port 1 cannot close: its tx queue 0 is used by task 'tx' on lcore 1" "$A2"
A3=$("$SURGE" attach "$CTL" -e 'return surge.port("net_ring0"):info().txq' 2>&1)
check "attach -e: the ring opens again" 1 "$A3"
"$SURGE" attach "$CTL" -e 'surge.stop()' >/dev/null 2>&1
wait "$RUN"; RC=$?
OUT=$(cat "$TMP/run.out"); ERR=$(cat "$TMP/run.err"); SURGE_PID=
check "attach -e: the run ends with exit 0" 0 "$RC"
check_true "attach -e: the null port sent on" "" test "$(summary_count "$OUT" 1 TX)" -gt 0
# the results: valid, the series adds up to the summary; the ring's 32
# packets before its close are kept though it was opened again
if python3 -c 'import jsonschema' 2>/dev/null; then
  R=$(python3 "$E2E_DIR/results/check_results.py" "$TMP/pc.json" "$SURGE_SRC/docs/results.schema.json" status=ok 2>&1)
  check "attach -e: results valid and consistent" "" "$(grep -v '^ok' <<<"$R")"
fi
check "attach -e: results keep the closed port's packets" "32 32" "$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
p = [x for x in r["summary"]["ports"] if x["port"] == 0][0]
print(p["tx_packets"], p["rx_packets"])' "$TMP/pc.json")"
check_pools "attach -e"
check_no_crash "attach -e"
finish
