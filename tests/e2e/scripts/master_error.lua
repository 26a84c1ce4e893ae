-- master_error.lua - master() fails while a task it launched is still running:
-- the run must end with master's file:line and stop the task.
local surge = require("surge")

function master()
  local port = surge.port(0)
  surge.launch("spin", port:txq(0))
  surge.sleep(0.2)
  error("master failed on purpose") -- MASTER_LINE
end

function spin(q)
  local burst = surge.pool{ template = surge.proto.udp{} }:burst(32)
  burst:alloc()
  while surge.running() do surge.sleep(0.001) end
  return 0
end
