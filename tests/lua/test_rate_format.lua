-- Rates in words and trial frame counts (issue 22 item 3): one function
-- formats every rate a scenario shows, four significant digits and never an
-- exponent (scenarios printed "offered 1.488e+04 kpps"); surge.rate.pps
-- turns a rate into frames per second for a frame length; a trial of D s at
-- R pps plans round(R * D) frames (the old loop sent one more).
local rate = require("surge.rate")
local trial = require("surge.dut.trial")

local T = {}

function T.format_pps_words()
  local cases = {
    { 0, "0 pps" }, { 0.5, "0.5 pps" }, { 1, "1 pps" }, { 500, "500 pps" }, { 999.4, "999.4 pps" },
    { 999.96, "1 kpps" }, { 1000, "1 kpps" }, { 14880.95, "14.88 kpps" }, { 20000, "20 kpps" },
    { 99995, "100 kpps" }, { 812743.8, "812.7 kpps" }, { 999960, "1 Mpps" }, { 1e6, "1 Mpps" },
    { 1488095.2, "1.488 Mpps" }, { 14880952.4, "14.88 Mpps" }, { 148809523, "148.8 Mpps" },
  }
  for _, c in ipairs(cases) do
    local got = rate.format_pps(c[1])
    assert(got == c[2], ("format_pps(%s) = '%s', expected '%s'"):format(c[1], got, c[2]))
    assert(not got:find("e[+-]%d"), got .. ": an exponent")
  end
end

function T.pps_of_rates()
  assert(rate.pps("50kpps", 60) == 50000, "50kpps")
  assert(rate.pps(1234, 60) == 1234, "a number is pps")
  -- 1 Gbit/s at L1 for 60-byte frames: 60 + FCS 4 + 20 = 84 bytes a frame
  local l1 = rate.pps("1gbit", 60)
  assert(math.abs(l1 - 1e9 / (84 * 8)) < 1e-6, "L1: " .. l1)
  local l2 = rate.pps("1gbit-l2", 60)
  assert(math.abs(l2 - 1e9 / (64 * 8)) < 1e-6, "L2: " .. l2)
  assert(math.abs(rate.pps("10%", 60, 10e9) - 1e9 / (84 * 8)) < 1e-6, "% of a 10G link")
  assert(rate.pps("10%", 60) == nil, "% without a link speed: no count")
end

function T.trial_plans_round_r_times_d()
  assert(trial.planned{ rate = 50000, duration = 2 } == 100000, "50 kpps for 2 s")
  assert(trial.planned{ rate = 10000, duration = 0.5 } == 5000, "10 kpps for 0.5 s")
  assert(trial.planned{ rate = 812743.8, duration = 0.3 } == 243823, "round, not floor + 1")
  assert(trial.planned{ rate = 1000, duration = 0.0004 } == 1, "at least one frame")
  assert(trial.planned{ count = 3000 } == 3000, "a count is the count")
  assert(trial.planned{ duration = 1 } == math.huge, "no rate: as many as it can")
end

return T
