-- check.lua - `surge run NAME`: is NAME a scenario? Called by core/run/master.c
-- before EAL starts, so a typo costs no start-up. Returns nil, or the message.
local M = {}

function M.main(name)
  local scenario = require "surge.scenario"
  if scenario.find(name) then return nil end
  return ("no script or scenario named '%s' (scenarios: %s; see surge scenarios)"):format(name, scenario.names())
end

return M
