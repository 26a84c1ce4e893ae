-- stop_master_spin.lua - master in a loop that never calls surge (issue 7.5).
local surge = require("surge")
function master()
  surge.port(0, { txq = 1 })
  surge.pool{ size = 255 }:burst(4):alloc()
  local x = 0
  while true do x = x + 1 end
end
