-- strict_global.lua - assigns an undeclared global inside a function, in
-- master (--in master) or in a task (--in task).
local surge = require("surge")

function configure(p)
  p:option("--in", "where the assignment runs: master or task", "master")
end

local function helper()
  counter_not_declared = 1 -- GLOBAL_LINE
end

function master(args)
  if args["in"] == "task" then
    surge.launch("task")
    surge.wait()
  else
    helper()
  end
end

function task()
  helper()
end
