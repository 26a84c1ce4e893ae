-- surge - the Lua API scripts use.
--
--   local surge = require("surge")
--   function master(args)
--     local port = surge.port(0)
--     surge.launch("tx", port:txq(0), args)
--     surge.wait()
--   end
--   function tx(q, args)
--     local burst = surge.pool{ template = surge.proto.udp{} }:burst(32)
--     while surge.running() do burst:alloc(); q:send(burst) end
--   end
local ffi = require("ffi")
local core = require("surge.core")
local check = require("surge.check")
local tasks = require("surge.tasks")

local C, rc_check = core.C, core.check
local surge = {
  version = ffi.string(C.surge_version()),
  proto = require("surge.proto"),
  latency = require("surge.latency"),
  port = require("surge.port").open,
  pool = require("surge.pool").new,
  flow = require("surge.flow"),      -- surge.flow{ template, fields, combine }
  size = require("surge.size"),      -- surge.size(spec): fixed, uniform, weighted, "imix"
  pcap = require("surge.pcap"),      -- pcap.writer(path), pcap.reader(path, { loop, timing })
  counter = require("surge.counter").counter,   -- surge.counter(name):add(n)
  gauge = require("surge.counter").gauge,       -- surge.gauge(name):set(v)
  results = require("surge.results"),  -- results.add(name, tbl), collect(), write(file)
  progress = require("surge.results.progress"), -- surge.progress(done, total, label)
}

-- surge.plot(file [, out]): charts of a results file (gnuplot), as `surge plot`.
function surge.plot(file, out)
  return require("surge.results.plot").plot(file, out)   -- lazy: every VM loads the facade; only a plot needs gnuplot's charts
end

function surge.running() return C.surge_running() ~= 0 end
function surge.stop() C.surge_stop() end
function surge.lcore() return C.surge_lcore_id() end
function surge.is_master() return C.surge_is_main() ~= 0 end
function surge.tsc() return C.surge_tsc() end
function surge.tsc_hz() return tonumber(C.surge_tsc_hz()) end
-- The run's --duration in seconds, nil without one: a script's own default
-- length can give way to it.
function surge.duration()
  local d = C.surge_duration()
  return d > 0 and d or nil
end
-- A TSC reading (surge.tsc(), burst.tsc) as CLOCK_MONOTONIC_RAW nanoseconds.
local u64, i64 = ffi.typeof("uint64_t"), ffi.typeof("int64_t")
function surge.tsc_ns(tsc)
  if not (ffi.istype(u64, tsc) or (ffi.istype(i64, tsc) and tsc >= 0)) then
    check.expect(tsc, "number 0..1.8e19", "surge.tsc_ns", "tsc (a TSC reading)")
  end
  return tonumber(C.surge_tsc_to_ns(tsc))
end
function surge.ports() return C.surge_port_count() end

-- Adds a DPDK virtual device now (master only), e.g. surge.vdev("net_ring9");
-- returns its port number.
function surge.vdev(spec)
  check.expect(spec, "string", "surge.vdev", "spec (a device string like \"net_ring0\")")
  local port = rc_check(C.surge_vdev_add(spec), 2)
  return port
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
  rc_check(C.surge_idle_get(cur), 2)
  if policy ~= nil then
    check.expect(policy, "string|table", "surge.idle", "policy")
    if type(policy) == "string" then policy = { mode = policy } end
    check.options(policy, idle_known, "surge.idle")
    for k, v in pairs(policy) do
      if k == "mode" then
        if idle_modes[v] == nil then check.raise(("surge.idle: mode: expected busy, pause or sleep, got %s"):format(check.show(v))) end
        cur.mode = idle_modes[v]
      elseif k == "batch" or k == "rx_intr" then
        cur[k] = check.expect(v, "boolean", "surge.idle", k) and 1 or 0
      else
        cur[k] = check.expect(v, "integer 0..1000000", "surge.idle", k)
      end
    end
    rc_check(C.surge_idle_set(cur), 2)
  end
  return { mode = idle_names[cur.mode], max_sleep_us = cur.max_sleep_us, step_us = cur.step_us,
           sleep_min_us = cur.sleep_min_us, batch = cur.batch == 1, rx_intr = cur.rx_intr == 1 }
end

-- Busy and idle TSC cycles of an lcore since its task started.
function surge.lcore_stats(lcore)
  check.expect(lcore, "integer? 0..1023", "surge.lcore_stats", "lcore")
  local s = ffi.new("struct surge_lcore_stats")
  rc_check(C.surge_lcore_stats(lcore or C.surge_lcore_id(), s), 2)
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

-- Master's tasks: launching, waiting and polling (lua/surge/tasks.lua).
surge.launch, surge.wait, surge.poll, surge.sleep = tasks.launch, tasks.wait, tasks.poll, tasks.sleep
surge.stop_task, surge.tasks, surge.collect = tasks.stop_task, tasks.tasks, tasks.collect
surge.handles, surge.TaskFailure = tasks.handles, tasks.TaskFailure
surge._wait_all = tasks.wait_all   -- master.lua's wait for the tasks master left running
-- Fields for surge's own modules (and the Python client), not the API
-- (docs/api.md): the prompt's Tab completion does not offer them.
surge._internals = { handles = true, TaskFailure = true }

return surge
