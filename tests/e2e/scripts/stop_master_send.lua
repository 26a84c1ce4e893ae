-- stop_master_send.lua - master-only, sending in its own loop: --duration and
-- the stats lines come from the monitor thread (issue 7.7).
local surge = require("surge")
function master()
  local q = surge.port(0, { txq = 1 }):txq(0)
  local b = surge.pool{ template = surge.proto.udp{} }:burst(32)
  while surge.running() do b:alloc() q:send(b) end
end
