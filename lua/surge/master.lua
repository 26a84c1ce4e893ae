-- master.lua - entry point of the main VM (called by core/task.c).
--
-- `surge run`: load the script, let it declare options (configure), parse
-- them, call master(args) and wait for its tasks. `surge test`: run Lua test
-- files. Returns the process exit code; errors print as file:line: message.
local M = {}

local core = require "surge.core"

local function report(e)
  local surge = require "surge"
  if e == core.STOPPED then return e end
  if getmetatable(e) == surge.TaskFailure then
    return e.msg
  end
  local msg = tostring(e)
  if msg == "not enough memory" then return msg .. " (master, lcore " .. surge.lcore() .. ")" end
  -- errors raised with a position (file:line:) get the script's part of the
  -- traceback; usage errors (bad option, missing function) are one line
  if msg:match("^[^\n]-:%d+: ") then return require("surge.trace").report(msg, 2) end
  return msg
end

-- Loads the script and parses its options; nil when --help was printed.
local function load_script(script)
  local chunk, err = core.load_script(script)
  if not chunk then error(err, 0) end
  require("surge.strict").enable()
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
  local frames = require("surge.show").frames(fn(opts), count)
  local decode = require "surge.proto.decode"
  for i, f in ipairs(frames) do
    print(("packet %d, %d bytes: %s"):format(i, #f, decode.decode(f)))
    print(decode.hex(f))
  end
  return 0
end

local function run(script)
  local surge = require "surge"
  local opts = load_script(script)
  if opts == nil then return 0 end          -- --help was printed
  local master = rawget(_G, "master")
  if type(master) ~= "function" then
    error(("%s: no function master(args) defined"):format(script), 0)
  end
  -- "run stopped" raised in master's loop ends master normally
  core.C.surge_run_start()
  local ok, rc = xpcall(master, report, opts)
  -- LuaJIT calls no handler for memory errors: say where it happened here
  if not ok and rc == "not enough memory" then rc = rc .. " (master, lcore " .. surge.lcore() .. ")" end
  if not ok and rc ~= core.STOPPED then error(setmetatable({ msg = rc }, surge.TaskFailure), 0) end
  if not ok then rc = 0 end
  surge._wait_all()                         -- tasks master did not wait for
  return type(rc) == "number" and rc or 0
end

function M.main(cmd, script, packets)
  local ok, rc = xpcall(function()
    if cmd == "test" then return require("surge.testrun").main(arg) end
    if cmd == "show" then return show(script, tonumber(packets)) end
    return run(script)
  end, report)
  if not ok and rc == core.STOPPED then return 0 end
  if not ok then
    io.stderr:write(tostring(rc), "\n")
    return 1
  end
  return rc
end

return M
