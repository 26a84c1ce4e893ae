-- no_task_fn.lua - launches a task whose function the script does not define.
local surge = require("surge")

function master()
  local port = surge.port(0)
  surge.launch("no_such_task", port:txq(0))
  surge.wait()
end
