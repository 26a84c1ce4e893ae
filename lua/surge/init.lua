-- surge - the Lua API scripts use.
--
--   local surge = require "surge"
--   function master(args)
--     local port = surge.port(0)
--     surge.launch("tx", port:txq(0), args)
--     surge.wait()
--   end
--   function tx(q, args)
--     local burst = surge.pool{ template = surge.proto.udp{} }:burst(32)
--     while surge.running() do burst:alloc(); q:send(burst) end
--   end
local ffi = require "ffi"
local core = require "surge.core"
local serial = require "surge.vm.serial"
local port = require "surge.port"
local pool = require "surge.pool"
local arg = require "surge.check"

local C, check = core.C, core.check
local surge = {
  version = ffi.string(C.surge_version()),
  proto = require "surge.proto",
  latency = require "surge.latency",
  port = port.open,
  pool = pool.new,
  flow = require "surge.flow",      -- surge.flow{ template, fields, combine }
  size = require "surge.size",      -- surge.size(spec): fixed, uniform, weighted, "imix"
  pcap = require "surge.pcap",      -- pcap.writer(path), pcap.reader(path, { loop, timing })
  counter = require("surge.counter").counter,   -- surge.counter(name):add(n)
  gauge = require("surge.counter").gauge,       -- surge.gauge(name):set(v)
  results = require "surge.results",  -- results.add(name, tbl), collect(), write(file)
  progress = require "surge.results.progress", -- surge.progress(done, total, label)
}

-- surge.plot(file [, out]): charts of a results file (gnuplot), as `surge plot`.
function surge.plot(file, out) return require("surge.results.plot").plot(file, out) end

local launched = {}   -- tasks started by this master, in launch order

function surge.running() return C.surge_running() ~= 0 end
function surge.stop() C.surge_stop() end
function surge.lcore() return C.surge_lcore_id() end
function surge.is_master() return C.surge_is_main() ~= 0 end
function surge.tsc() return C.surge_tsc() end
function surge.tsc_hz() return tonumber(C.surge_tsc_hz()) end
-- A TSC reading (surge.tsc(), burst.tsc) as CLOCK_MONOTONIC_RAW nanoseconds.
local u64, i64 = ffi.typeof("uint64_t"), ffi.typeof("int64_t")
function surge.tsc_ns(tsc)
  if not (ffi.istype(u64, tsc) or (ffi.istype(i64, tsc) and tsc >= 0)) then
    arg.expect(tsc, "number 0..1.8e19", "surge.tsc_ns", "tsc (a TSC reading)")
  end
  return tonumber(C.surge_tsc_to_ns(tsc))
end
-- Master under --control serves attached clients wherever it waits:
-- surge.wait(), surge.poll() and surge.sleep() (see surge/repl.lua).
local function serving()
  return package.preload["surge.replio"] ~= nil and C.surge_is_main() ~= 0 and require("surge.repl").serving()
end

-- Sleeps, returning early when the run stops.
function surge.sleep(seconds)
  arg.expect(seconds, "number 0..4000", "surge.sleep", "seconds")
  core.check_run()
  if surge.running() and serving() then
    local hz, repl = surge.tsc_hz(), require("surge.repl")
    local stop = tonumber(C.surge_tsc()) + seconds * hz
    while surge.running() do
      local left_ms = (stop - tonumber(C.surge_tsc())) * 1000 / hz
      if left_ms <= 0 then return end
      repl.serve(math.ceil(math.min(left_ms, 100)))
    end
    return
  end
  C.surge_sleep_us(math.floor(seconds * 1e6))
end
function surge.ports() return C.surge_port_count() end

-- Adds a DPDK virtual device now (master only), e.g. surge.vdev("net_ring9");
-- returns its port number.
function surge.vdev(spec)
  arg.expect(spec, "string", "surge.vdev", "spec (a device string like \"net_ring0\")")
  local port = check(C.surge_vdev_add(spec), 2)
  return port
end

-- Lets master do its own work between polls: prints the stats line when
-- due, ends the run at --duration, returns the number of running tasks.
function surge.poll()
  if C.surge_is_main() == 0 then
    arg.raise("surge.poll() is for master(): a task cannot wait for tasks")
  end
  surge.progress.poll()
  local n = check(serving() and require("surge.repl").serve(0) or C.surge_task_poll(0), 2)
  -- a loop around poll() with no task left ends once the run stopped
  if n == 0 then core.check_run() end
  return n
end
function surge.last_error() return core.last_error() end

local idle_modes = { busy = C.SURGE_IDLE_BUSY, pause = C.SURGE_IDLE_PAUSE, sleep = C.SURGE_IDLE_SLEEP }
local idle_names = { [0] = "busy", "pause", "sleep" }

-- surge.idle{ mode = "busy"|"pause"|"sleep", max_sleep_us = 100, step_us = 1,
-- sleep_min_us = 50, batch = false, rx_intr = true } sets how the calling lcore
-- waits; surge.idle() reads it. batch: paced gaps sleep max_sleep_us at least
-- (low CPU, packets leave in small batches); rx_intr: an idle poller blocks on
-- the queue's RX interrupt where the port has one.
local idle_known = { mode = 1, max_sleep_us = 1, step_us = 1, sleep_min_us = 1, batch = 1, rx_intr = 1 }

function surge.idle(policy)
  local cur = ffi.new("struct surge_idle")
  check(C.surge_idle_get(cur), 2)
  if policy ~= nil then
    arg.expect(policy, "string|table", "surge.idle", "policy")
    if type(policy) == "string" then policy = { mode = policy } end
    arg.options(policy, idle_known, "surge.idle")
    for k, v in pairs(policy) do
      if k == "mode" then
        if idle_modes[v] == nil then arg.raise(("surge.idle: mode: expected busy, pause or sleep, got %s"):format(arg.show(v))) end
        cur.mode = idle_modes[v]
      elseif k == "batch" or k == "rx_intr" then
        cur[k] = arg.expect(v, "boolean", "surge.idle", k) and 1 or 0
      else
        cur[k] = arg.expect(v, "integer 0..1000000", "surge.idle", k)
      end
    end
    check(C.surge_idle_set(cur), 2)
  end
  return { mode = idle_names[cur.mode], max_sleep_us = cur.max_sleep_us, step_us = cur.step_us,
           sleep_min_us = cur.sleep_min_us, batch = cur.batch == 1, rx_intr = cur.rx_intr == 1 }
end

-- Busy and idle TSC cycles of an lcore since its task started.
function surge.lcore_stats(lcore)
  arg.expect(lcore, "integer? 0..1023", "surge.lcore_stats", "lcore")
  local s = ffi.new("struct surge_lcore_stats")
  check(C.surge_lcore_stats(lcore or C.surge_lcore_id(), s), 2)
  local busy, idle = tonumber(s.busy_cycles), tonumber(s.idle_cycles)
  return { busy_cycles = busy, idle_cycles = idle, sleeps = tonumber(s.sleeps),
           idle_pct = busy + idle > 0 and idle * 100 / (busy + idle) or 0 }
end

-- Seconds the calling thread was runnable but waited for a CPU since it
-- started (the kernel's schedstat run delay; 0 where /proc does not say):
-- on a shared machine, time no pacer or poller could use. Take differences.
function surge.cpu_wait()
  local f = io.open("/proc/thread-self/schedstat")
  if not f then return 0 end
  local _, wait = f:read("*n", "*n")
  f:close()
  return (wait or 0) / 1e9
end

-- Starts fn (a global function of the script, or "MODULE:FUNCTION", a
-- function a module returns in its table) on a free lcore in a fresh VM,
-- with the arguments copied as plain data. Returns the task's id (its lcore).
-- A name starting with "=" is a function typed at the prompt (surge.repl):
-- its first argument carries the function's bytecode.
function surge.launch(fn, ...)
  arg.expect(fn, "string", "surge.launch", "fn (the name of a global function, e.g. \"tx\")")
  local mod, name = fn:match("^([^:]+):([%w_]+)$")
  if mod then
    local ok, m = pcall(require, mod)
    if not ok or type(m) ~= "table" or type(m[name]) ~= "function" then
      -- require's "not found" lists every path it tried: its first line says it
      arg.raise(("surge.launch: module '%s' has no function '%s' to run as a task%s"):format(mod, name,
        ok and "" or (": " .. tostring(m):match("^[^\n]*"):gsub(":$", ""))))
    end
  elseif fn:sub(1, 1) ~= "=" and type(rawget(_G, fn)) ~= "function" then
    arg.raise(("surge.launch: the script has no global function '%s' to run as a task"):format(fn))
  end
  local n = select("#", ...)
  local ok, text = pcall(serial.encode, { ... }, n)
  if not ok then arg.raise("surge.launch(\"" .. fn .. "\"): " .. text) end
  local id = check(C.surge_task_launch(fn, text, #text), 2)
  launched[#launched + 1] = { id = id, fn = fn, started = tonumber(C.surge_tsc()) }
  surge.results.task_started(id, fn)
  return id
end

-- Asks one task to end (surge.running() turns false in it alone).
function surge.stop_task(id)
  arg.expect(id, "integer 0..1023", "surge.stop_task", "id")
  check(C.surge_task_stop(id), 2)
end

-- The tasks this master started and has not collected with wait() yet:
-- { id, fn, started (TSC), ok (nil while running), value } (for the prompt).
function surge.tasks() return launched end

-- Handles rebuilt from ids when task data is decoded.
surge.handles = {
  port = port.wrap, txq = port.txq, rxq = port.rxq, pool = pool.wrap,
  pcap_writer = surge.pcap.handles.pcap_writer, pcap_reader = surge.pcap.handles.pcap_reader,
}

local TaskFailure = {}
TaskFailure.__tostring = function(e) return e.msg end
surge.TaskFailure = TaskFailure

local EAGAIN = 11
local text_p, len_p = ffi.new("const char *[1]"), ffi.new("size_t[1]")

-- Collects a finished task once: true, value | false, error text | nil (running).
local function collect(t)
  arg.expect(t, "table", "surge.collect", "t (an entry of surge.tasks())")
  if t.ok == nil then
    arg.expect(t.id, "integer 0..1023", "surge.collect", "t.id")
    local rc = C.surge_task_result(t.id, text_p, len_p)
    if rc == -EAGAIN then return nil end
    check(rc, 3)
    local s = ffi.string(text_p[0], len_p[0])
    if rc == 1 then t.ok, t.value = false, s
    else t.ok, t.value = true, serial.decode(s, surge.handles)[1] end
  end
  return t.ok, t.value
end
surge.collect = collect

local function fail(msgs)
  error(setmetatable({ msg = table.concat(msgs, "\n") }, TaskFailure), 0)
end

-- surge.wait(): waits for every launched task, printing a stats line each
-- interval, and returns a list of each task's first return value in launch
-- order. surge.wait(id [, timeout]): waits for that task alone and returns
-- its value, or nil, "timeout" after `timeout` seconds. A failed task raises
-- its error (file:line and traceback) either way.
local replio = surge.is_master() and package.preload["surge.replio"] and require("surge.replio")
local served = false   -- the prompt of `run -i` opened once already

-- One round of master's own work: progress lines, the prompt's clients,
-- then the tasks (stats lines, --duration).
local function poll(ms)
  surge.progress.poll()
  if serving() then return require("surge.repl").serve(ms) end
  return C.surge_task_poll(ms)
end

local function wait(id, timeout)
  local hz = surge.tsc_hz()
  if replio and replio.options().interactive and not served then
    served = true
    -- `run -i`: the prompt, at master's first wait (for all tasks or one),
    -- with the tasks running; leaving stops them unless the user said
    -- exit("wait"); then the wait goes on as usual
    if require("surge.repl").session() == "stop" then require("surge.repl.helpers").stop() end
  end
  local deadline = timeout and (tonumber(C.surge_tsc()) + timeout * hz) or nil
  if id ~= nil then
    local idx
    for i, t in ipairs(launched) do if t.id == id then idx = i end end
    if not idx then arg.raise(("surge.wait: no running task %s"):format(tostring(id))) end
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
  local results, failures = {}, {}
  for i, t in ipairs(launched) do
    local ok, v = collect(t)
    if ok then results[i] = v elseif not t.reported then failures[#failures + 1] = v end
  end
  launched = {}
  surge.progress.poll(true)
  if #failures > 0 then fail(failures) end
  return results
end

function surge.wait(id, timeout)
  if C.surge_is_main() == 0 then
    arg.raise("surge.wait() is for master(): a task cannot wait for tasks")
  end
  arg.expect(id, "integer? 0..1023", "surge.wait", "id")
  arg.expect(timeout, "number? 0..inf", "surge.wait", "timeout (seconds)")
  -- a loop around wait() with nothing left to wait for ends once stopped
  if #launched == 0 then core.check_run() end
  return wait(id, timeout)
end

-- master.lua's wait for the tasks master left running (never "run stopped").
surge._wait_all = function() return wait() end

return surge
