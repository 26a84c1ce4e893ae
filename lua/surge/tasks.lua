-- tasks.lua - master's tasks: launch, collect, wait, poll and sleep
-- (surge.launch, surge.wait, ... re-exported by init.lua).
--
-- The prompt (surge.repl) sits above this module: when a run has one, the
-- prompt registers itself with set_prompt() as it loads, and master's waits
-- serve it through that hook; nothing here requires the prompt.
local ffi = require("ffi")
local core = require("surge.core")
local C, rc_check = core.C, core.check
local check = require("surge.check")
local serial = require("surge.base.serial")
local results = require("surge.results")
local progress = require("surge.results.progress")
local M = {}

local launched = {}   -- tasks started by this master, in launch order

-- The prompt's hook: { serving = fn() -> bool, serve = fn(ms) -> running
-- tasks, at_wait = fn() (master's wait is about to begin), launched =
-- fn(entry) (a task was started: the prompt lists it until cleared) }, or nil.
local prompt

function M.set_prompt(hook)
  check.expect(hook, "table", "tasks.set_prompt", "hook")
  prompt = hook
end

-- Master under --control serves attached clients wherever it waits:
-- surge.wait(), surge.poll() and surge.sleep().
local function serving()
  return prompt ~= nil and C.surge_is_main() ~= 0 and prompt.serving()
end

local function running() return C.surge_running() ~= 0 end
local function tsc_hz() return tonumber(C.surge_tsc_hz()) end

-- Sleeps, returning early when the run stops.
function M.sleep(seconds)
  check.expect(seconds, "number 0..4000", "surge.sleep", "seconds")
  core.check_run()
  if running() and serving() then
    local hz = tsc_hz()
    local stop = tonumber(C.surge_tsc()) + seconds * hz
    while running() do
      local left_ms = (stop - tonumber(C.surge_tsc())) * 1000 / hz
      if left_ms <= 0 then return end
      prompt.serve(math.ceil(math.min(left_ms, 100)))
    end
    return
  end
  C.surge_sleep_us(math.floor(seconds * 1e6))
end

-- Lets master do its own work between polls: prints the stats line when
-- due, ends the run at --duration, returns the number of running tasks.
function M.poll()
  if C.surge_is_main() == 0 then
    check.raise("surge.poll() is for master(): a task cannot wait for tasks")
  end
  progress.poll()
  local n = rc_check(serving() and prompt.serve(0) or C.surge_task_poll(0), 2)
  -- a loop around poll() with no task left ends once the run stopped
  if n == 0 then core.check_run() end
  return n
end

-- Starts fn (a global function of the script, or "MODULE:FUNCTION", a
-- function a module returns in its table) on a free lcore in a fresh VM,
-- with the arguments copied as plain data. Returns the task's id (its lcore).
-- A name starting with "=" is a function typed at the prompt (surge.repl):
-- its first argument carries the function's bytecode.
function M.launch(fn, ...)
  check.expect(fn, "string", "surge.launch", "fn (the name of a global function, e.g. \"tx\")")
  local mod, name = fn:match("^([^:]+):([%w_]+)$")
  if mod then
    local ok, m = pcall(require, mod)
    if not ok or type(m) ~= "table" or type(m[name]) ~= "function" then
      -- require's "not found" lists every path it tried: its first line says it
      check.raise(("surge.launch: module '%s' has no function '%s' to run as a task%s"):format(mod, name,
        ok and "" or (": " .. tostring(m):match("^[^\n]*"):gsub(":$", ""))))
    end
  elseif fn:sub(1, 1) ~= "=" and type(rawget(_G, fn)) ~= "function" then
    check.raise(("surge.launch: the script has no global function '%s' to run as a task"):format(fn))
  end
  local n = select("#", ...)
  local ok, text = pcall(serial.encode, { ... }, n)
  if not ok then check.raise("surge.launch(\"" .. fn .. "\"): " .. text) end
  local id = rc_check(C.surge_task_launch(fn, text, #text), 2)
  local entry = { id = id, fn = fn, started = tonumber(C.surge_tsc()) }
  launched[#launched + 1] = entry
  if prompt and prompt.launched then prompt.launched(entry) end
  results.task_started(id, fn)
  return id
end

-- Asks one task to end (surge.running() turns false in it alone).
function M.stop_task(id)
  check.expect(id, "integer 0..1023", "surge.stop_task", "id")
  rc_check(C.surge_task_stop(id), 2)
end

-- The tasks this master started and has not collected with wait() yet:
-- { id, fn, started (TSC), ok (nil while running), value } (for the prompt).
function M.tasks() return launched end

-- Handles rebuilt from ids when task data is decoded.
local port, pcap = require("surge.port"), require("surge.pcap")
M.handles = {
  port = port.wrap, txq = port.txq, rxq = port.rxq, pool = require("surge.pool").wrap,
  pcap_writer = pcap.handles.pcap_writer, pcap_reader = pcap.handles.pcap_reader,
}

local TaskFailure = {}
TaskFailure.__tostring = function(e) return e.msg end
M.TaskFailure = TaskFailure

local EAGAIN = 11
local text_p, len_p = ffi.new("const char *[1]"), ffi.new("size_t[1]")

-- Collects a finished task once: true, value | false, error text | nil (running).
local function collect(t)
  check.expect(t, "table", "surge.collect", "t (an entry of surge.tasks())")
  if t.ok == nil then
    check.expect(t.id, "integer 0..1023", "surge.collect", "t.id")
    local rc = C.surge_task_result(t.id, text_p, len_p)
    if rc == -EAGAIN then return nil end
    rc_check(rc, 3)
    local s = ffi.string(text_p[0], len_p[0])
    if rc == 1 then t.ok, t.value = false, s
    else t.ok, t.value = true, serial.decode(s, M.handles)[1] end
  end
  return t.ok, t.value
end
M.collect = collect

local function fail(msgs)
  error(setmetatable({ msg = table.concat(msgs, "\n") }, TaskFailure), 0)
end

-- One round of master's own work: progress lines, the prompt's clients,
-- then the tasks (stats lines, --duration).
local function poll(ms)
  progress.poll()
  if serving() then return prompt.serve(ms) end
  return C.surge_task_poll(ms)
end

-- surge.wait(): waits for every launched task, printing a stats line each
-- interval, and returns a list of each task's first return value in launch
-- order. surge.wait(id [, timeout]): waits for that task alone and returns
-- its value, or nil, "timeout" after `timeout` seconds. A failed task raises
-- its error (file:line and traceback) either way.
local function wait(id, timeout)
  local hz = tsc_hz()
  if prompt then prompt.at_wait() end
  local deadline = timeout and (tonumber(C.surge_tsc()) + timeout * hz) or nil
  if id ~= nil then
    local idx
    for i, t in ipairs(launched) do if t.id == id then idx = i end end
    if not idx then check.raise(("surge.wait: no running task %s"):format(tostring(id))) end
    while true do
      local ok, v = collect(launched[idx])
      if ok ~= nil then
        table.remove(launched, idx)
        if not ok then fail({ v }) end
        return v
      end
      if deadline and tonumber(C.surge_tsc()) >= deadline then return nil, "timeout" end
      poll(10)
    end
  end
  while poll(100) > 0 do
    if deadline and tonumber(C.surge_tsc()) >= deadline then return nil, "timeout" end
  end
  local values, failures = {}, {}
  for i, t in ipairs(launched) do
    local ok, v = collect(t)
    if ok then values[i] = v elseif not t.reported then failures[#failures + 1] = v end
  end
  launched = {}
  progress.poll(true)
  if #failures > 0 then fail(failures) end
  return values
end

function M.wait(id, timeout)
  if C.surge_is_main() == 0 then
    check.raise("surge.wait() is for master(): a task cannot wait for tasks")
  end
  check.expect(id, "integer? 0..1023", "surge.wait", "id")
  check.expect(timeout, "number? 0..inf", "surge.wait", "timeout (seconds)")
  -- a loop around wait() with nothing left to wait for ends once stopped
  if #launched == 0 then core.check_run() end
  return wait(id, timeout)
end

-- master.lua's wait for the tasks master left running (never "run stopped").
function M.wait_all() return wait() end

return M
