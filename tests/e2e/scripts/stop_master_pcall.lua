-- stop_master_pcall.lua - master catching "run stopped" and calling again
-- (issue 7.5): pcall around surge.sleep, forever.
local surge = require("surge")
function master()
  surge.port(0, { txq = 1 })
  while true do pcall(surge.sleep, 0.05) end
end
