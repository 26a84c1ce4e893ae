-- task.lua - entry point of a task's VM (called by core/task.c).
--
-- Loads the script like master did, then calls the named function with the
-- decoded arguments. Returns ok, text: the encoded results, or the error
-- message with its traceback and where it ran.
local M = {}

function M.main(script, fn, args)
  local lcore
  local core = require "surge.core"
  local ok, res = xpcall(function()
    local surge = require "surge"
    local serial = require "surge.serial"
    lcore = surge.lcore()
    local chunk, err = core.load_script(script)
    if not chunk then error(err, 0) end
    require("surge.strict").enable()
    chunk()
    local f = rawget(_G, fn)
    if type(f) ~= "function" then
      error(("%s: no function '%s' to run as a task"):format(script, fn), 0)
    end
    local a = serial.decode(args, surge.handles)
    local results = { f(unpack(a, 1, a.n)) }
    return serial.encode(results, select("#", unpack(results)))
  end, function(e)
    if e == core.STOPPED then return e end
    return require("surge.trace").report(e, 2)
  end)
  if not ok and res == core.STOPPED then
    -- the run stopped and the task's loop ran on: a normal end, no results
    return true, require("surge.serial").encode({}, 0)
  end
  if not ok then
    -- first line: file:line: message (task 'fn', lcore N); then the traceback
    local first, rest = res:match("^([^\n]*)(.*)$")
    res = ("%s (task '%s', lcore %s)%s"):format(first, fn, tostring(lcore or "?"), rest)
  end
  return ok, res
end

return M
