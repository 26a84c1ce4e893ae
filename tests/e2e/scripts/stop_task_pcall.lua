-- stop_task_pcall.lua - a task catching "run stopped" and calling again:
-- the watchdog says so.
local surge = require("surge")
function spin() while true do pcall(surge.sleep, 0.01) end end
function master()
  surge.launch("spin")
  surge.wait()
end
