-- fleet.lua (surge.fleet) - one instance of several started as one.
--
--   local fleet = require("surge.fleet")
--   function tx(q, start)
--     local burst = ...                 -- everything slow first (pools, templates)
--     fleet.sleep_until(start)          -- then wait for the common start time
--     while surge.running() do ... end
--   end
--   function master(args)
--     local start = fleet.wait_start()  -- serves --control until a controller arms the start time
--     surge.launch("tx", q, start)      -- the task is ready long before it
--     surge.wait()
--   end
--
-- The controller (python/surge/fleet.py) sends `require("surge.fleet").arm(T)`
-- to every instance over its control socket (local, or forwarded by
-- `ssh -L`): T is a common start time in Unix seconds (CLOCK_REALTIME), so
-- no protocol of our own crosses the network and the start lines up as well
-- as the hosts' clocks do (docs/python.md, "Several instances as one").
-- The tasks wait for T themselves, after their VM and pools are made: a
-- task VM takes milliseconds to start, and not the same on every host.
local ffi = require("ffi")
local surge = require("surge")
local check = require("surge.check")
local results = require("surge.results")
local core = require("surge.core")

pcall(ffi.cdef, [[
struct surge_fleet_timespec { long tv_sec; long tv_nsec; };
int clock_gettime(int clk, struct surge_fleet_timespec *ts);
]])
local C = ffi.C
local CLOCK_REALTIME = 0
local ts = ffi.new("struct surge_fleet_timespec")

local M = { start = nil }

-- Wall-clock time in seconds (the clock the controller's start time is in).
function M.now()
  C.clock_gettime(CLOCK_REALTIME, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

-- The controller's call: the start time, Unix seconds. Returns how far ahead
-- of this host's clock it is (the controller refuses a start already past).
function M.arm(t)
  check.expect(t, "number 0..1e11", "surge.fleet.arm", "t (Unix seconds)")
  M.start = t
  results.add("fleet", { start = t, armed_lead_s = t - M.now() })
  return t - M.now()
end

-- Master: waits, serving the control socket, until a start time is armed;
-- returns it at once (pass it to the tasks, which sleep_until it). Raises
-- "run stopped" when the run stops first, and after timeout_s (default: no
-- limit) without a start time.
function M.wait_start(timeout_s)
  check.expect(timeout_s, "number? 0..1e9", "surge.fleet.wait_start", "timeout_s")
  local give_up = timeout_s and M.now() + timeout_s
  while M.start == nil do
    if not surge.running() then error(core.STOPPED, 0) end
    if give_up and M.now() > give_up then
      error(("surge.fleet.wait_start: no start time after %g s"):format(timeout_s), 2)
    end
    surge.sleep(0.002)
  end
  return M.start
end

-- Any VM: sleeps until 2 ms before t, then spins to t, so what follows runs
-- on time to a few microseconds of this host's clock. Returns how late it
-- woke, in seconds (0 or more; a t already past returns at once).
function M.sleep_until(t)
  check.expect(t, "number 0..1e11", "surge.fleet.sleep_until", "t (Unix seconds)")
  while t - M.now() > 0.002 do
    if not surge.running() then error(core.STOPPED, 0) end
    surge.sleep(math.min(0.05, t - M.now() - 0.002))
  end
  local now = M.now()
  while now < t do now = M.now() end
  return now - t
end

return M
