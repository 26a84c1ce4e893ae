#!/usr/bin/env bash
# test_close_many_queues.sh - port:close() on a port with the most queues a
# port can have (1024 TX + 1024 RX on net_null): refused while a task sends
# on the last TX queue, naming it, and every queue master took for the
# close is given back (one record per queue, however many there are);
# accepted once the task stopped; every pool full at the end.
. "$(dirname "$0")/lib.sh"

cat >"$TMP/many.lua" <<'LUA'
local surge = require "surge"
function tx(q)
  local b = surge.pool{ template = surge.proto.udp{ size = 60 } }:burst(8)
  while surge.running() do b:alloc(); q:send(b) end
end
function master()
  local p = surge.port(0, { txq = 1024, rxq = 1024, rxd = 64, txd = 64 })
  local t = surge.launch("tx", p:txq(1023))
  for _ = 1, 2000 do
    if p:txq(1023):stats().lcore == t then break end
    surge.sleep(0.001)
  end
  local ok, err = pcall(p.close, p)
  print("refused", ok, err)
  local free = 0
  for q = 0, 1022 do free = free + (p:txq(q):stats().lcore == -1 and 1 or 0) end
  for q = 0, 1023 do free = free + (p:rxq(q):stats().lcore == -1 and 1 or 0) end
  print("given back", free, p:txq(1023):stats().lcore == t)
  surge.stop_task(t)
  surge.wait(t)
  print("closed as port", p:close())
end
LUA
run_surge 60 run --no-huge --stats-interval 0 --lcores '(0-1)@(0-1)' --vdev net_null0,no-rx=1 "$TMP/many.lua"
check "exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 20
check_match "refused while the task sends, naming the queue" \
  $'^refused\tfalse\t.*port 0 cannot close: its tx queue 1023 is used by task .tx. on lcore 1 \\(stop that task first\\)$' "$OUT"
check_match "the 2047 queues taken for the close are free again, the task keeps its own" \
  $'^given back\t2047\ttrue$' "$OUT"
check_match "closed once the task stopped" $'^closed as port\t0$' "$OUT"
check_pools "many queues"
check_no_crash "many queues"
finish
