-- check.lua - `surge run NAME [options]`: called by core/run/master.c before
-- EAL starts, so a typo, a module that breaks the scenario contract or an
-- option error costs no start-up. Loads the scenario (checking its module)
-- and parses its options (every check that needs no port). Returns nil, or
-- the message and the exit status: 2 for the name or an option, 1 for a
-- module that cannot be used (like a script that fails).
local M = {}

function M.main(name, ...)
  local scenario = require "surge.scenario"
  if not scenario.find(name) then
    return ("surge: no script or scenario named '%s' (scenarios: %s; see surge scenarios)"):format(name,
      scenario.names()), 2
  end
  local mod, err = scenario.load(name)
  if not mod then return err, 1 end
  local argv = { ... }
  for _, a in ipairs(argv) do
    if a == "--help" or a == "-h" then return nil end       -- printed by the run, without EAL
  end
  local args = require "surge.args"
  local ok, e = pcall(function() return scenario.parser(name, mod):parse(argv) end)
  if ok then return nil end
  if getmetatable(e) == args.OptionError then return tostring(e), 2 end
  -- options(parser) itself raised: the module's fault, at its line
  return (require("surge.base.trace").message(e):match("^[^\n]*")), 1
end

return M
