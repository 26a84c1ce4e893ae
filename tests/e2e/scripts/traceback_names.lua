-- traceback_names.lua - an error three calls below the task function (--in
-- task) or master (--in master): the traceback names every frame of the
-- script, the entry function too (issue 23 item 2).
local surge = require("surge")
local lib = {}

function configure(p)
  p:option("--in", "where the error is raised: master or task", "master")
end

local function innermost(x)
  error("deep " .. x) -- DEEP_LINE
end
function lib.middle(x)
  innermost(x) -- MIDDLE_LINE
end
local function outer(x)
  lib.middle(x) -- OUTER_LINE
  return x
end

function master(args)
  if args["in"] == "task" then
    surge.launch("tx", 1)
    surge.wait()
  else
    outer(0) -- MASTER_LINE
  end
end

function tx(n)
  outer(n) -- TX_LINE
  return 0
end
