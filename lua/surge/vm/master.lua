-- vm/master.lua - entry point of the main VM (called by core/run/master.c).
--
-- `surge run`: load the script, let it declare options (configure), parse
-- them, call master(args) and wait for its tasks (`surge repl`: open the
-- prompt instead of calling master). `surge test`: run Lua test
-- files. Returns the process exit code; errors print as file:line: message.
local M = {}

local core = require("surge.core")

local function report(e)
  local surge = require("surge")
  if e == core.STOPPED then return e end
  if getmetatable(e) == surge.TaskFailure then
    return e.msg
  end
  if getmetatable(e) == require("surge.args").OptionError then return e end   -- exits 2
  local trace = require("surge.base.trace")
  local msg = trace.message(e)
  if msg == "not enough memory" then return msg .. " (master, lcore " .. surge.lcore() .. ")" end
  -- errors raised with a position (file:line:) get the script's part of the
  -- traceback; usage errors (bad option, missing function) are one line
  if msg:match("^[^\n]-:%d+: ") then return trace.report(msg) end
  return msg
end

-- Loads the script and parses its options; nil when --help was printed.
local function load_script(script)
  local chunk, err = core.load_script(script)
  if not chunk then error(err, 0) end
  require("surge.base.strict").enable()
  chunk()
  local parser = require("surge.args").new(script)
  local configure = rawget(_G, "configure")
  if configure then configure(parser) end
  return parser:parse(arg)
end

-- `surge show`: the packets show(args) describes, decoded and as hex.
local function show(script, count)
  local opts = load_script(script)
  if opts == nil then return 0 end
  local fn = rawget(_G, "show")
  if type(fn) ~= "function" then
    error(("%s: no function show(args) to say which packets it sends"):format(script), 0)
  end
  local def = debug.getinfo(fn, "S")
  local frames = require("surge.base.frames").frames(fn(opts), count, ("%s:%d: "):format(def.short_src, def.linedefined))
  local decode = require("surge.proto.decode")
  for i, f in ipairs(frames) do
    print(("packet %d, %d bytes: %s"):format(i, #f, decode.decode(f)))
    print(decode.hex(f))
  end
  return 0
end

-- `surge run NAME` where NAME is not a file: a scenario by name.
local function run_scenario(name)
  local scenario = require("surge.scenario")
  local mod, err = scenario.load(name)
  if not mod then error(err, 0) end
  local rc = scenario.main(name, mod, arg)
  local surge = require("surge")
  if surge.is_master() then surge._wait_all() end   -- not after --help: no EAL
  return rc
end

-- `surge scenarios`: name and description of each.
local function list_scenarios()
  for _, s in ipairs(require("surge.scenario").list()) do
    print(("%-14s %s%s"):format(s.name, s.description, s.where ~= "built in" and (" [" .. s.where .. "]") or ""))
  end
  return 0
end

-- With -i or --control the prompt serves master's waits: loading it sets
-- its hook in surge.tasks.
local function load_prompt()
  local replio = package.preload["surge.replio"] and require("surge.replio")
  local o = replio and replio.options()
  if o and (o.interactive or o.control) then require("surge.repl") end
end

local function run(script)
  local surge = require("surge")
  load_prompt()
  -- a real run (EAL is up unless only --help was asked): it gets a results file
  local help = false
  for _, a in ipairs(arg) do if a == "--help" or a == "-h" then help = true end end
  surge.results.armed = not help
  -- main() read the script once (a file or a pipe); a name it did not read
  -- is a scenario (core/front/main.c names_scenario: the one rule)
  if not package.loaded["surge.script"] then
    return run_scenario(script)
  end
  local opts = load_script(script)
  if opts == nil then return 0 end          -- --help was printed
  surge.results.run_started(script, opts)
  local master = rawget(_G, "master")
  if type(master) ~= "function" then
    error(("%s: no function master(args) defined"):format(script), 0)
  end
  -- --control: attached clients are served from master's first wait on
  local replio = package.preload["surge.replio"] and require("surge.replio")
  if replio and replio.options().control then require("surge.repl").listen() end
  -- "run stopped" raised in master's loop ends master normally
  core.C.surge_run_start()
  local ok, rc = xpcall(master, report, opts)
  -- LuaJIT calls no handler for memory errors: say where it happened here
  if not ok and rc == "not enough memory" then rc = rc .. " (master, lcore " .. surge.lcore() .. ")" end
  if not ok and rc ~= core.STOPPED then error(setmetatable({ msg = rc }, surge.TaskFailure), 0) end
  if not ok then rc = 0 end
  surge._wait_all()                         -- tasks master did not wait for
  -- a number or a boolean master returns is the exit status; a table
  -- (master ending `return surge.wait()`) says nothing about it
  -- and os.exit's status (from any VM) wins over it (core/base/run_state.c)
  if core.C.surge_exit_status() >= 0 or (type(rc) ~= "number" and type(rc) ~= "boolean") then return 0 end
  -- (the return statement's line is gone once master returned: its function's)
  local def = debug.getinfo(master, "S")
  return core.exit_status(rc, ("%s:%d: master's return value (the exit status)"):format(def.short_src,
    def.linedefined))
end

-- `surge repl [SCRIPT]`: the script's functions and options, then the prompt
-- (master is not called); leaving stops what is still running.
local function repl(script)
  local surge = require("surge")
  local env = require("surge.repl").env
  surge.results.armed = true                -- --output: the session's results
  core.C.surge_run_start()                  -- --duration counts from here
  if script ~= "" then
    local opts = load_script(script)
    if opts == nil then return 0 end
    env.args = opts
    surge.results.run_started(script, opts)
  end
  local prompt = require("surge.repl")
  prompt.session()
  require("surge.repl.helpers").stop()
  surge._wait_all()
  return prompt.unfinished and 1 or 0     -- the input ended inside a statement
end

-- `surge run`, before EAL starts: only a bad script option is an error here
-- (exit 2); anything else the script does wrong is reported by the run.
local function options(script)
  local ok, e = pcall(load_script, script)
  if not ok and getmetatable(e) == require("surge.args").OptionError then
    io.stderr:write(tostring(e), "\n")
    return 2
  end
  -- a signal while the top level ran (a loop there, core/run/master.c): the run
  -- ends before it starts, saying where the script was
  if not ok and e ~= core.STOPPED and core.C.surge_running() == 0 then io.stderr:write(tostring(e), "\n") end
  return 0
end

function M.main(cmd, script, packets)
  if cmd == "options" then return options(script) end
  local ok, rc = xpcall(function()
    if cmd == "test" then return require("surge.vm.testrun").main(arg) end
    if cmd == "show" then return show(script, tonumber(packets)) end
    if cmd == "plot" then return require("surge.results.plot").main(script, arg) end
    if cmd == "repl" then return repl(script) end
    if cmd == "scenarios" then return list_scenarios() end
    if cmd == "otg" then
      core.C.surge_run_start()
      return require("surge.otg.main").serve()
    end
    return run(script)
  end, report)
  -- "run stopped" ends master's loop as its end would: a normal end
  if not ok and rc == core.STOPPED then ok, rc = true, 0 end
  -- a scenario the script ran, cut by the stop: its results so far are kept
  local scenario = package.loaded["surge.scenario"]
  if not ok and cmd == "run" and type(scenario) == "table" and scenario.stopped_in_lua(rc) then ok, rc = true, 0 end
  if (cmd == "run" or cmd == "repl") and package.loaded["surge.results"] and package.loaded["surge.results"].armed then
    -- the results file is written however the run ended (error, signal)
    local wrote = require("surge.results").finish(ok, rc)
    if wrote == false and ok and rc == 0 then rc = 1 end
  end
  if not ok then
    io.stderr:write(tostring(rc), "\n")
    -- like surge's own CLI errors, a bad script option exits 2
    return getmetatable(rc) == require("surge.args").OptionError and 2 or 1
  end
  return rc
end

return M
