-- stop_spin_task.lua - a task whose loop never calls into surge: only the
-- watchdog can end it (issue 7.5).
local surge = require("surge")
function master()
  surge.pool{ size = 255, shared = true }:burst(8):alloc()
  surge.launch("spin")
  surge.wait()
end
function spin()
  local x = 0
  while true do x = x + 1 end   -- SPIN_LINE
end
