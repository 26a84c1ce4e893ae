-- surge.scenario.search against simulated DUTs with known loss curves:
-- the throughput search converges to the capacity within the resolution,
-- respects the loss tolerance and the trial budget; the loss curve steps
-- down and stops after two clean trials; back-to-back finds the buffer size.
local search = require("surge.scenario.search")

local T = {}

-- A DUT that forwards up to `cap` pps and drops the rest.
local function dut(cap)
  local calls = 0
  return function(rate)
    calls = calls + 1
    return rate <= cap and 0 or (rate - cap) * 100 / rate
  end, function() return calls end
end

local function near(a, b, eps, what)
  if math.abs(a - b) > eps then error(("%s: %g is not within %g of %g"):format(what, a, eps, b), 2) end
end

function T.converges_to_capacity()
  for _, cap in ipairs({ 123456, 777777, 1000, 999999 }) do
    local trial, calls = dut(cap)
    local r = search.throughput{ lo = 0, hi = 1e6, resolution = 1000, max_trials = 30, trial = trial }
    assert(r.converged, "converged")
    assert(r.rate <= cap, ("found %g above the capacity %g"):format(r.rate, cap))
    near(r.rate, cap, 1000, "throughput")
    assert(r.trials[#r.trials].rate, "trials recorded")
    assert(calls() == #r.trials, "one trial call per recorded trial")
    -- every passing trial lost nothing, every failing one lost something
    for _, t in ipairs(r.trials) do assert(t.pass == (t.rate <= cap), "pass flag at " .. t.rate) end
    -- the bracket: a trial just above the result fails
    assert(r.bracket[2] > cap and r.bracket[2] - r.rate <= 1000, "bracket")
  end
end

function T.tolerance_allows_loss()
  -- 1 % tolerance on capacity 500k: rates up to 500k / 0.99 pass
  local trial = dut(500000)
  local r = search.throughput{ lo = 0, hi = 1e6, resolution = 100, tolerance = 1, trial = trial, max_trials = 40 }
  near(r.rate, 500000 / 0.99, 100, "throughput with 1 % tolerance")
  assert(trial(r.rate) <= 1 and trial(r.rate * 1.2) > 1, "T passes, 1.2 T fails")
end

function T.top_rate_passes_at_once()
  local trial, calls = dut(2e6)
  local r = search.throughput{ hi = 1e6, resolution = 1000, trial = trial }
  assert(r.rate == 1e6 and calls() == 1 and r.converged, "one trial at the top, passed")
end

function T.nothing_passes()
  local trial = dut(0)
  local r = search.throughput{ lo = 0, hi = 1e6, resolution = 1000, max_trials = 50, trial = trial }
  assert(r.rate == 0, "no rate passes: 0")
end

function T.trial_budget_is_kept()
  local trial, calls = dut(333333)
  local r = search.throughput{ hi = 1e6, resolution = 1, max_trials = 5, trial = trial }
  assert(calls() == 5 and #r.trials == 5 and not r.converged, "stops after max_trials, not converged")
  assert(r.rate <= 333333, "best pass so far")
end

function T.loss_curve_steps_down()
  local trial = dut(450000)
  local c = search.loss_curve{ hi = 1e6, step_pct = 10, trial = trial }
  -- 100 .. 50 % lose, 40 % and 30 % are clean: stop there
  local pcts = {}
  for _, x in ipairs(c) do pcts[#pcts + 1] = x.pct end
  assert(table.concat(pcts, ",") == "100,90,80,70,60,50,40,30", table.concat(pcts, ","))
  near(c[1].loss_pct, 55, 1e-9, "loss at 100 %")
  assert(c[#c].loss_pct == 0 and c[#c - 1].loss_pct == 0, "two clean trials at the end")
end

function T.back_to_back_finds_buffer()
  for _, buf in ipairs({ 1, 37, 1000, 4095 }) do
    local n = 0
    local r = search.back_to_back{ lo = 1, hi = 10000, max_trials = 40, trial = function(frames)
      n = n + 1
      return math.max(0, frames - buf)
    end }
    assert(r.frames == buf, ("buffer %d: found %d"):format(buf, r.frames))
    assert(n == #r.trials, "trials recorded")
  end
  local r = search.back_to_back{ hi = 500, trial = function() return 0 end }
  assert(r.frames == 500 and #r.trials == 1, "a lossless DUT passes the longest burst at once")
  r = search.back_to_back{ hi = 500, max_trials = 40, trial = function(n) return n end }
  assert(r.frames == 0, "a DUT that loses everything: 0")
end

function T.bad_input()
  local ok, e = pcall(search.throughput, { hi = 0, lo = 0, resolution = 1, trial = dut(1) })
  assert(not ok and tostring(e):find("hi 0 must be above lo 0"), tostring(e))
  ok, e = pcall(search.throughput, { hi = 10, resolution = "x", trial = dut(1) })
  assert(not ok and tostring(e):find("resolution = x"), tostring(e))
end

return T
