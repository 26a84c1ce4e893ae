-- stop_two_tasks.lua - master launches a second task after the first ended;
-- the summary covers the whole run (issue 7.7).
local surge = require("surge")
function master()
  local q = surge.port(0, { txq = 1 }):txq(0)
  surge.wait(surge.launch("tx", q, 0.3))
  surge.sleep(0.6)
  surge.wait(surge.launch("tx", q, 0.3))
  surge.sleep(0.3)
end
function tx(q, secs)
  local b = surge.pool{ template = surge.proto.udp{}, size = 1023 }:burst(32)
  local stop_at = surge.tsc() + secs * surge.tsc_hz()
  while surge.running() and surge.tsc() < stop_at do b:alloc() q:send(b) end
end
