-- pipe_task.lua - run through a pipe (issue 7.16): master and the task both
-- load the text that was read once.
local surge = require("surge")
function master()
  print("master: " .. surge.wait(surge.launch("t", 20)))
end
function t(x) return x + 1 end
