-- check.lua - `surge run NAME [options]`: called by core/run/master.c before
-- EAL starts, so a typo, a module that breaks the scenario contract or an
-- option error costs no start-up. Loads the scenario (checking its module)
-- and parses its options (every check that needs no port). Returns nil, or
-- the message and the exit status: 2 for the name or an option, 1 for a
-- module that cannot be used (like a script that fails).
local args = require("surge.args")
local scenario = require("surge.scenario")
local trace = require("surge.base.trace")
local M = {}

function M.main(name, ...)
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
  local ok, e = pcall(function() return scenario.parser(name, mod):parse(argv) end)
  -- a built-in's own run, dry, refuses what else it would refuse after EAL
  -- (scenario.dry_run; a user's scenario is not run twice: its side effects)
  if ok then
    local builtin = false
    for _, b in ipairs(scenario.builtin) do if b == name or b:gsub("%-", "_") == name then builtin = true end end
    if not builtin then return nil end
    e = scenario.dry_run(mod, e)
    if e == nil then return nil end
  end
  if getmetatable(e) == args.OptionError then return tostring(e), 2 end
  -- options(parser) itself raised: the module's fault, at its line
  return (trace.message(e):match("^[^\n]*")), 1
end

return M
