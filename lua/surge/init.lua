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
local serial = require "surge.serial"
local port = require "surge.port"
local pool = require "surge.pool"

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
}

local launched = {}   -- tasks started by this master, in launch order

function surge.running() return C.surge_running() ~= 0 end
function surge.stop() C.surge_stop() end
function surge.lcore() return C.surge_lcore_id() end
function surge.is_master() return C.surge_is_main() ~= 0 end
function surge.tsc() return C.surge_tsc() end
function surge.tsc_hz() return tonumber(C.surge_tsc_hz()) end
-- A TSC reading (surge.tsc(), burst.tsc) as CLOCK_MONOTONIC_RAW nanoseconds.
function surge.tsc_ns(tsc) return tonumber(C.surge_tsc_to_ns(tsc)) end
-- Sleeps, returning early when the run stops.
function surge.sleep(seconds)
  if type(seconds) ~= "number" or not (seconds >= 0 and seconds < 4000) then
    error(("surge.sleep: %s is not a number of seconds (0..4000)"):format(tostring(seconds)), 2)
  end
  C.surge_sleep_us(math.floor(seconds * 1e6))
end
function surge.ports() return C.surge_port_count() end

-- Adds a DPDK virtual device now (master only), e.g. surge.vdev("net_ring9");
-- returns its port number.
function surge.vdev(spec)
  if type(spec) ~= "string" then error("surge.vdev: expected a device string like \"net_ring0\"", 2) end
  local port = check(C.surge_vdev_add(spec), 2)
  return port
end

-- Lets master do its own work between polls: prints the stats line when
-- due, ends the run at --duration, returns the number of running tasks.
function surge.poll()
  return C.surge_task_poll(0)
end
function surge.last_error() return core.last_error() end

local idle_modes = { busy = C.SURGE_IDLE_BUSY, pause = C.SURGE_IDLE_PAUSE, sleep = C.SURGE_IDLE_SLEEP }
local idle_names = { [0] = "busy", "pause", "sleep" }

-- surge.idle{ mode = "busy"|"pause"|"sleep", max_sleep_us = 100, step_us = 1,
-- sleep_min_us = 50, batch = false, rx_intr = true } sets how the calling lcore
-- waits; surge.idle() reads it. batch: paced gaps sleep max_sleep_us at least
-- (low CPU, packets leave in small batches); rx_intr: an idle poller blocks on
-- the queue's RX interrupt where the port has one.
function surge.idle(policy)
  local cur = ffi.new("struct surge_idle")
  check(C.surge_idle_get(cur), 2)
  if policy ~= nil then
    if type(policy) == "string" then policy = { mode = policy } end
    for k, v in pairs(policy) do
      if k == "mode" then
        if idle_modes[v] == nil then error(("surge.idle: mode '%s' unknown (busy, pause, sleep)"):format(tostring(v)), 2) end
        cur.mode = idle_modes[v]
      elseif k == "max_sleep_us" or k == "step_us" or k == "sleep_min_us" then
        if type(v) ~= "number" or v < 0 or v ~= math.floor(v) or v > 1e6 then
          error(("surge.idle: %s = %s outside 0..1000000"):format(k, tostring(v)), 2)
        end
        cur[k] = v
      elseif k == "batch" or k == "rx_intr" then
        if type(v) ~= "boolean" then error(("surge.idle: %s = %s: true or false"):format(k, tostring(v)), 2) end
        cur[k] = v and 1 or 0
      else
        error(("surge.idle: unknown field '%s'"):format(tostring(k)), 2)
      end
    end
    check(C.surge_idle_set(cur), 2)
  end
  return { mode = idle_names[cur.mode], max_sleep_us = cur.max_sleep_us, step_us = cur.step_us,
           sleep_min_us = cur.sleep_min_us, batch = cur.batch == 1, rx_intr = cur.rx_intr == 1 }
end

-- Busy and idle TSC cycles of an lcore since its task started.
function surge.lcore_stats(lcore)
  local s = ffi.new("struct surge_lcore_stats")
  check(C.surge_lcore_stats(lcore or C.surge_lcore_id(), s), 2)
  local busy, idle = tonumber(s.busy_cycles), tonumber(s.idle_cycles)
  return { busy_cycles = busy, idle_cycles = idle, sleeps = tonumber(s.sleeps),
           idle_pct = busy + idle > 0 and idle * 100 / (busy + idle) or 0 }
end

-- Starts fn (a global function of the script) on a free lcore in a fresh VM,
-- with the arguments copied as plain data. Returns the task's id (its lcore).
function surge.launch(fn, ...)
  if type(fn) ~= "string" then
    error("surge.launch: the first argument is the name of a global function, e.g. \"tx\"", 2)
  end
  if type(rawget(_G, fn)) ~= "function" then
    error(("surge.launch: the script has no global function '%s' to run as a task"):format(fn), 2)
  end
  local n = select("#", ...)
  local ok, text = pcall(serial.encode, { ... }, n)
  if not ok then error("surge.launch(\"" .. fn .. "\"): " .. text, 2) end
  local id = check(C.surge_task_launch(fn, text, #text), 2)
  launched[#launched + 1] = { id = id, fn = fn }
  return id
end

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

-- Collects a finished task: true, value | false, error text | nil (running).
local function collect(t)
  local rc = C.surge_task_result(t.id, text_p, len_p)
  if rc == -EAGAIN then return nil end
  check(rc, 3)
  local s = ffi.string(text_p[0], len_p[0])
  if rc == 1 then return false, s end
  return true, serial.decode(s, surge.handles)[1]
end

local function fail(msgs)
  error(setmetatable({ msg = table.concat(msgs, "\n") }, TaskFailure), 0)
end

-- surge.wait(): waits for every launched task, printing a stats line each
-- interval, and returns a list of each task's first return value in launch
-- order. surge.wait(id [, timeout]): waits for that task alone and returns
-- its value, or nil, "timeout" after `timeout` seconds. A failed task raises
-- its error (file:line and traceback) either way.
function surge.wait(id, timeout)
  local hz = surge.tsc_hz()
  local deadline = timeout and (tonumber(C.surge_tsc()) + timeout * hz) or nil
  if id ~= nil then
    local idx
    for i, t in ipairs(launched) do if t.id == id then idx = i end end
    if not idx then error(("surge.wait: no running task %s"):format(tostring(id)), 2) end
    while true do
      local ok, v = collect(launched[idx])
      if ok ~= nil then
        table.remove(launched, idx)
        if not ok then fail({ v }) end
        return v
      end
      if deadline and tonumber(C.surge_tsc()) >= deadline then return nil, "timeout" end
      C.surge_task_poll(10)
    end
  end
  while C.surge_task_poll(100) > 0 do
    if deadline and tonumber(C.surge_tsc()) >= deadline then return nil, "timeout" end
  end
  local results, failures = {}, {}
  for i, t in ipairs(launched) do
    local ok, v = collect(t)
    if ok then results[i] = v else failures[#failures + 1] = v end
  end
  launched = {}
  if #failures > 0 then fail(failures) end
  return results
end

return surge
