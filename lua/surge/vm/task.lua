-- vm/task.lua - entry point of a task's VM (called by core/run/task.c).
--
-- Loads the script like master did, then calls the named function with the
-- decoded arguments. A name "MODULE:FUNCTION" (a module task, used by
-- scenarios and the DUT toolkit) requires MODULE instead of loading the
-- script, so it runs the same from a script, a scenario name or the REPL. A
-- name "=NAME" is a function typed at the prompt, sent as bytecode. Returns
-- ok, text: the encoded results, or the error message with its traceback
-- and where it ran.
local M = {}

function M.main(script, fn, args)
  local lcore, f
  local core = require("surge.core")
  local ok, res = xpcall(function()
    local surge = require("surge")
    local serial = require("surge.base.serial")
    lcore = surge.lcore()
    local a
    local mod, name = fn:match("^([^:]+):([%w_]+)$")
    if mod then                           -- a module task: no script
      require("surge.base.strict").enable()
      f = require(mod)[name]
    elseif script ~= "" then              -- `surge repl` may have no script
      local chunk, err = core.load_script(script)
      if not chunk then error(err, 0) end
      require("surge.base.strict").enable()
      chunk()
    end
    a = serial.decode(args, surge.handles)
    if fn:sub(1, 1) == "=" then           -- typed at the prompt: its bytecode comes first
      f = require("surge.repl.task").load(a[1])
      a = { n = a.n - 1, unpack(a, 2, a.n) }
    elseif not mod then
      f = rawget(_G, fn)
    end
    if type(f) ~= "function" then
      error(("%s: no function '%s' to run as a task"):format(mod or script, name or fn), 0)
    end
    local results = { f(unpack(a, 1, a.n)) }
    local eok, text = pcall(serial.encode, results, select("#", unpack(results)), "result")
    if not eok then
      -- the return statement is gone from the stack: point at the function
      local info = debug.getinfo(f, "S")
      error(require("surge.base.trace").full(("%s:%d: %s"):format(info.short_src, info.linedefined, text)), 0)
    end
    return text
  end, function(e)
    if e == core.STOPPED then return e end
    local trace = require("surge.base.trace")
    return trace.report(trace.message(e))
  end)
  if not ok and res == core.STOPPED then
    -- the run stopped and the task's loop ran on: a normal end, no results
    return true, require("surge.base.serial").encode({}, 0)
  end
  if not ok then
    -- first line: file:line: message (task 'fn', lcore N); then the traceback
    local first, rest = res:match("^([^\n]*)(.*)$")
    res = ("%s (task '%s', lcore %s)%s"):format(first, fn:gsub("^=", ""), tostring(lcore or "?"), rest)
  end
  return ok, res
end

return M
