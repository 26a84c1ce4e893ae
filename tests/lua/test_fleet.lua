-- surge.fleet (lua/surge/fleet.lua): the start time a controller arms, its
-- argument checks (one error at the caller's line), sleep_until on the wall
-- clock, and the record in the results. The fleet itself, with real
-- instances and a Python controller, is tests/python/test_fleet.py.
local surge = require("surge")
local fleet = require("surge.fleet")
local testrun = require("surge.vm.testrun")
local errors, at = testrun.errors, testrun.at

local T = {}

function T.arguments()
  errors(at('surge.fleet.arm: t (Unix seconds): expected a number in 0..1e11, got "soon"'), function() fleet.arm("soon") end)
  errors(at("surge.fleet.arm: t (Unix seconds): expected a number in 0..1e11, got -1"), function() fleet.arm(-1) end)
  errors(at("surge.fleet.sleep_until: t (Unix seconds): expected a number in 0..1e11, got nil"), function() fleet.sleep_until(nil) end)
  errors(at("surge.fleet.wait_start: timeout_s: expected a number in 0..1e9, got -2"), function() fleet.wait_start(-2) end)
end

function T.now_is_the_wall_clock()
  local now = fleet.now()
  assert(math.abs(now - os.time()) < 2, ("fleet.now() %f is the wall clock (os.time %d)"):format(now, os.time()))
end

function T.arm_then_wait_and_sleep()
  local t = fleet.now() + 0.05
  local lead = fleet.arm(t)
  assert(lead > 0 and lead <= 0.05, "arm returns how far ahead the start is: " .. lead)
  assert(fleet.wait_start(1) == t, "wait_start returns the armed time at once")
  local late = fleet.sleep_until(t)
  assert(fleet.now() >= t and late >= 0 and late < 0.01, "sleep_until wakes at t, not before: late " .. late)
  assert(fleet.sleep_until(t - 1) >= 1, "a time already past returns at once, saying how late")
  local rec = surge.results.collect().scenarios.fleet
  assert(rec.start == t and rec.armed_lead_s > 0, "the start is in the results (scenarios.fleet)")
end

return T
