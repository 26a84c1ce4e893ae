-- task_error.lua - task 'tx' fails with error("boom") at a known line while
-- task 'spin' keeps running until surge stops it.
--   surge run --lcores '(0-2)@(0-1)' task_error.lua
local surge = require("surge")

function master()
  local port = surge.port(0)
  surge.launch("spin", port:txq(0))
  surge.launch("tx", port:txq(0))
  surge.wait()
end

-- holds a burst of mbufs while it loops, so a leak would show
function spin(q)
  local burst = surge.pool{ template = surge.proto.udp{} }:burst(32)
  burst:alloc()
  while surge.running() do surge.sleep(0.001) end
  burst:free()
  return 0
end

function tx(q)
  local burst = surge.pool{ template = surge.proto.udp{} }:burst(32)
  burst:alloc()
  surge.sleep(0.2)
  error("boom") -- BOOM_LINE
end
