-- fleet.lua (surge.fleet) - one instance of several started as one.
--
--   local fleet = require "surge.fleet"
--   function master(args)
--     fleet.wait_start()          -- serves --control until a controller arms a start time, then waits for it
--     surge.launch("tx", ...)     -- every instance launches at the same wall-clock moment
--     surge.wait()
--   end
--
-- The controller (python/surge/fleet.py) sends `require("surge.fleet").arm(T)`
-- to every instance over its control socket (local, or forwarded by
-- `ssh -L`): T is a common start time in Unix seconds (CLOCK_REALTIME), so
-- no protocol of our own crosses the network and the alignment is as good
-- as the hosts' clocks (docs/python.md, "Several instances as one").
local ffi = require "ffi"
local surge = require "surge"
local check = require "surge.check"

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
-- it is here (negative: already past, wait_start returns at once).
function M.arm(t)
  check.expect(t, "number 0..1e11", "surge.fleet.arm", "t (Unix seconds)")
  M.start = t
  return t - M.now()
end

-- Waits (serving the control socket) until a start time is armed, then
-- until that time: sleeps to 2 ms before it, then spins, so the launch that
-- follows is on time to a few microseconds of this host's clock. Returns the
-- start time; records it and how late this host was in the results
-- (scenarios.fleet). Raises "run stopped" when the run stops first, and
-- after timeout_s (default: no limit) without a start time.
function M.wait_start(timeout_s)
  check.expect(timeout_s, "number? 0..1e9", "surge.fleet.wait_start", "timeout_s")
  local give_up = timeout_s and M.now() + timeout_s
  while M.start == nil do
    if not surge.running() then error(require("surge.core").STOPPED, 0) end
    if give_up and M.now() > give_up then
      error(("surge.fleet.wait_start: no start time after %g s"):format(timeout_s), 2)
    end
    surge.sleep(0.002)
  end
  while M.start - M.now() > 0.002 do
    if not surge.running() then error(require("surge.core").STOPPED, 0) end
    surge.sleep(math.min(0.001, M.start - M.now() - 0.002))
  end
  local now = M.now()
  while now < M.start do now = M.now() end
  require("surge.results").add("fleet", { start = M.start, started = now, late_us = (now - M.start) * 1e6 })
  return M.start
end

return M
