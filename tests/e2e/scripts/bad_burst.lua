-- bad_burst.lua - a task asks for a burst of 0 packets: the error must name
-- this line, as errors from the surge API name their caller.
local surge = require("surge")

function master()
  surge.launch("tx")
  surge.wait()
end

function tx()
  local pool = surge.pool{ template = surge.proto.udp{} }
  local burst = pool:burst(0) -- BURST_LINE
end
