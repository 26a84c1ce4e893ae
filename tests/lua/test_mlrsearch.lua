-- surge.scenario.mlr (RFC 9971 MLRsearch's logic) and the mlrsearch scenario against simulated DUTs with known loss
-- curves: a rate limiter (the tbf truth), one with a random per-frame loss,
-- one whose trials are now and then disturbed (what the exceed ratio
-- tolerates), a DUT that passes at max load and one that forwards nothing;
-- the bounds, conditional throughput and trial bookkeeping RFC 9971
-- defines; the goals' bad values refused.
local mlr = require("surge.scenario.mlr")
local scn = require("surge.scenario.mlrsearch")
local search = require("surge.scenario.search")
local errors = require("surge.vm.testrun").errors
local at = require("surge.vm.testrun").at

local T = {}

local CAP = 41667   -- the tbf router's 64-byte truth: 20e6 / (8 x 60)

-- A rate limiter: forwards up to cap pps, drops the rest.
local function limiter(cap)
  return function(load) return math.max(0, 1 - cap / load) end
end

-- A deterministic random source (an LCG), so a noisy DUT is the same every run.
local function rng(seed)
  local x = seed
  return function()
    x = (x * 1103515245 + 12345) % 2147483648
    return x / 2147483648
  end
end

-- The limiter with a random per-frame loss p: a trial of n frames loses the
-- excess plus Binomial(n, p) frames (drawn one by one: small n here).
local function lossy(cap, p, seed)
  local r = rng(seed)
  return function(load, duration)
    local n = math.floor(load * duration)
    local fwd = math.min(n, math.floor(cap * duration))
    local lost = n - fwd
    for _ = 1, fwd do if r() < p then lost = lost + 1 end end
    return lost / n
  end
end

local function goals(over, list)
  local out = {}
  for i, g in ipairs(list or { mlr.NDR, mlr.PDR }) do
    out[i] = {}
    for k, v in pairs(g) do out[i][k] = v end
    for k, v in pairs(over or {}) do out[i][k] = v end
  end
  return out
end

local function within(v, truth, rel, what)
  if math.abs(v - truth) > truth * rel then
    error(("%s: %.1f is not within %g %% of %.1f"):format(what, v, rel * 100, truth), 2)
  end
end

local function by_name(res)
  local t = {}
  for _, g in ipairs(res.goals) do t[g.name] = g end
  return t
end

function T.rate_limiter_ndr_pdr_at_the_truth()
  for _, cfg in ipairs({ {}, { final_trial = 0.5, duration_sum = 3 } }) do
    local calls = 0
    local f = limiter(CAP)
    local res = mlr.search{ max_load = 200000, min_load = 1000, goals = goals(cfg),
      trial = function(load, d) calls = calls + 1 return f(load, d) end }
    local g = by_name(res)
    assert(res.complete and g.NDR.reached and g.PDR.reached, "both goals reached")
    -- NDR: the largest load with no loss lies at the capacity, within the width
    assert(g.NDR.lower_bound <= CAP and g.NDR.upper_bound > CAP, "NDR bounds bracket the capacity")
    assert(g.NDR.relative_width <= 0.005 + 1e-12, "NDR width " .. g.NDR.relative_width)
    within(g.NDR.lower_bound, CAP, 0.005, "NDR lower bound")
    within(g.NDR.conditional_throughput, CAP, 0.005, "NDR conditional throughput")
    -- PDR: loss 0.5 % allowed: the load is up to cap / 0.995, its forwarding rate the capacity
    assert(g.PDR.lower_bound <= CAP / 0.995 and g.PDR.upper_bound > CAP / 0.995, "PDR bounds bracket cap/0.995")
    within(g.PDR.lower_bound, CAP, 0.01, "PDR lower bound")
    within(g.PDR.conditional_throughput, CAP, 0.005, "PDR conditional throughput")
    assert(calls == #res.trials, "every trial recorded")
    -- the search's first trial is at max load; the coarse phases' trials are shorter
    local t1 = res.trials[1]
    assert(t1.load == 200000 and t1.duration < (cfg.final_trial or 1), "first trial at max load, short")
    assert(res.trials[2].load <= CAP * 1.0001, "the second at the max-load trial's forwarding rate")
    local sum, final = 0, cfg.final_trial or 1
    for i, t in ipairs(res.trials) do
      assert(math.abs(t.start - sum) < 1e-9, "start is the trial time before it")
      sum = sum + t.duration
      assert(t.duration <= final + 1e-12, "no trial longer than the final trial")
      if t.phase == 0 then assert(math.abs(t.duration - final) < 1e-12, "the last phase's trials are final") end
      if i > 1 then assert(t.phase <= res.trials[i - 1].phase, "phases go coarse to fine") end
    end
    assert(math.abs(res.trial_seconds - sum) < 1e-9, "trial_seconds is the sum")
    -- a lower bound rests on full trials worth at least duration_sum x (1 - exceed ratio) of low loss
    local good = 0
    for _, t in ipairs(res.trials) do
      if t.load == g.NDR.lower_bound and t.duration >= final and t.loss_ratio == 0 then good = good + t.duration end
    end
    assert(good >= (cfg.duration_sum or 21) * 0.5 - 1e-9, "NDR lower bound's good time " .. good)
  end
end

-- The exceed ratio: a DUT whose trials are disturbed now and then (30 % of
-- trials lose an extra 2 %, say a neighbour's burst) keeps its bounds at the
-- capacity with exceed ratio 0.5; with exceed ratio 0 one bad trial makes a
-- load an upper bound, and the NDR falls far below.
function T.noisy_dut_exceed_ratio()
  local function disturbed(seed)
    local r, f = rng(seed), limiter(CAP)
    return function(load) return math.min(1, f(load) + (r() < 0.15 and 0.02 or 0)) end
  end
  local below = 0
  for seed = 1, 20 do
    local res = mlr.search{ max_load = 200000, min_load = 1000, trial = disturbed(seed),
                            goals = goals({ final_trial = 0.5, duration_sum = 5 }) }
    local g = by_name(res)
    assert(res.complete and g.NDR.reached and g.PDR.reached, "reached, seed " .. seed)
    within(g.NDR.lower_bound, CAP, 0.01, "NDR with exceed ratio 0.5, seed " .. seed)
    within(g.PDR.lower_bound, CAP, 0.01, "PDR with exceed ratio 0.5, seed " .. seed)
    local strict = mlr.search{ max_load = 200000, min_load = 1000, trial = disturbed(seed),
      goals = goals({ final_trial = 0.5, duration_sum = 5, exceed_ratio = 0 }, { mlr.NDR }) }
    local s = strict.goals[1]
    for _, t in ipairs(strict.trials) do
      assert(not (t.load == s.lower_bound and t.duration >= 0.5 and t.loss_ratio > 0),
        "exceed ratio 0: the lower bound has no bad full trial")
    end
    print(("#   seed %2d: NDR %.0f (exceed ratio 0.5) vs %.0f (exceed ratio 0)"):format(seed, g.NDR.lower_bound,
      s.lower_bound))
    if s.lower_bound < CAP * 0.98 then below = below + 1 end
  end
  -- 10 clean trials in a row happen 0.85^10 = 20 % of the time at a load
  assert(below >= 10, ("exceed ratio 0: NDR more than 2 %% below the capacity in only %d of 20 runs"):format(below))
end

function T.random_loss_pdr_holds_ndr_falls()
  for seed = 1, 3 do
    local res = mlr.search{ max_load = 50000, min_load = 100, trial = lossy(CAP, 0.001, seed),
                            goals = goals({ final_trial = 0.5, duration_sum = 3 }) }
    local g = by_name(res)
    assert(res.complete and g.NDR.reached and g.PDR.reached, "reached, seed " .. seed)
    within(g.PDR.lower_bound, CAP, 0.01, "PDR with 0.1 % random loss, seed " .. seed)
    within(g.PDR.conditional_throughput, CAP, 0.01, "PDR conditional throughput, seed " .. seed)
    assert(g.NDR.lower_bound < CAP * 0.5,
      ("NDR with random loss falls below: %.0f, seed %d"):format(g.NDR.lower_bound, seed))
  end
end

function T.max_load_passes()
  local n = 0
  local res = mlr.search{ max_load = 10000, min_load = 10, trial = function() n = n + 1 return 0 end,
                          goals = goals({ final_trial = 1, duration_sum = 3 }) }
  for _, g in ipairs(res.goals) do
    assert(g.reached and g.lower_bound == 10000 and g.upper_bound == nil, g.name .. ": max load is the bound")
    assert(g.conditional_throughput == 10000, g.name .. ": conditional throughput at max load")
  end
  -- only max load measured: the coarse trial, then full trials to duration_sum x (1 - exceed ratio)
  for _, t in ipairs(res.trials) do assert(t.load == 10000, "no other load tried") end
  assert(n == #res.trials and n <= 4, "a few trials: " .. n)
end

function T.nothing_forwarded()
  local res = mlr.search{ max_load = 1e6, min_load = 1000, trial = function() return 1 end,
                          goals = goals({ final_trial = 0.1, duration_sum = 0.1 }) }
  for _, g in ipairs(res.goals) do
    assert(g.reached and g.lower_bound == 0 and g.conditional_throughput == 0, g.name .. ": none passes")
    assert(g.upper_bound == 1000, g.name .. ": min load is the upper bound")
  end
  for _, t in ipairs(res.trials) do assert(t.load >= 1000, "never below min load") end
end

-- All goals in one search: the trials are shared, so one search for NDR and
-- PDR takes less trial time than one per goal; and less than binary search
-- (one trial of the final duration per load) needs to reach the same 0.5 %
-- width for the two goals (trial time, a count of the simulation: not speed).
function T.one_search_all_goals_less_trial_time()
  local cfg = { final_trial = 0.5, duration_sum = 3 }
  local both = mlr.search{ max_load = 200000, min_load = 1000, trial = limiter(CAP), goals = goals(cfg) }
  local ndr = mlr.search{ max_load = 200000, min_load = 1000, trial = limiter(CAP), goals = goals(cfg, { mlr.NDR }) }
  local pdr = mlr.search{ max_load = 200000, min_load = 1000, trial = limiter(CAP), goals = goals(cfg, { mlr.PDR }) }
  assert(both.trial_seconds < ndr.trial_seconds + pdr.trial_seconds,
    ("one search %.2f s, two %.2f s"):format(both.trial_seconds, ndr.trial_seconds + pdr.trial_seconds))
  local binary = 0
  for _, tol in ipairs({ 0, 0.5 }) do
    local f = limiter(CAP)
    local r = search.throughput{ lo = 0, hi = 200000, resolution = CAP * 0.005, tolerance = tol, max_trials = 100,
      trial = function(load) return f(load) * 100 end }
    assert(r.converged, "binary converged")
    binary = binary + #r.trials * cfg.final_trial
  end
  assert(both.trial_seconds < binary, ("MLRsearch %.2f s, binary %.2f s"):format(both.trial_seconds, binary))
end

function T.budget_is_kept()
  local res = mlr.search{ max_load = 200000, min_load = 1000, trial = limiter(CAP), max_trials = 4 }
  assert(#res.trials == 4 and not res.complete, "stops after max_trials, incomplete")
  res = mlr.search{ max_load = 200000, min_load = 1000, trial = limiter(CAP), max_time = 5 }
  assert(res.trial_seconds <= 5 and not res.complete, "stops within max_time")
end

function T.classification_as_rfc9971()
  local t = { loss_ratio = 0, exceed_ratio = 0.5, trial = 1, duration_sum = 21 }
  local function trials(good, bad, d)
    local out = {}
    for _ = 1, good do out[#out + 1] = { duration = d or 1, loss_ratio = 0 } end
    for _ = 1, bad do out[#out + 1] = { duration = d or 1, loss_ratio = 0.01 } end
    return out
  end
  assert(mlr.classify(trials(10, 10), t) == "undecided", "10 good, 10 bad of 21: undecided")
  assert(mlr.classify(trials(11, 10), t) == "lower", "11 good s: lower (missing 0 s, 10 bad <= 10.5)")
  assert(mlr.classify(trials(0, 11), t) == "upper", "11 bad s: upper")
  assert(mlr.classify(trials(0, 10), t) == "undecided", "10 bad s: not yet")
  -- short trials: a bad one counts, a good one only balances bad short ones
  assert(mlr.classify(trials(300, 0, 0.1), t) == "undecided", "short good trials never make a lower bound")
  assert(mlr.classify(trials(300, 0, 1), t) == "lower", "as full trials they would")
  assert(mlr.classify(trials(0, 110, 0.1), t) == "upper", "11 s of short bad trials: upper")
end

-- Conditional throughput: the load times one minus the loss ratio at the
-- exceed-ratio quantile of the full trials (worst first), short ones ignored.
function T.conditional_throughput_quantile()
  local g = { loss_ratio = 0.005, exceed_ratio = 0.5, final_trial = 1, duration_sum = 4 }
  local at = { { duration = 1, loss_ratio = 0.01 }, { duration = 1, loss_ratio = 0.002 },
               { duration = 1, loss_ratio = 0 }, { duration = 1, loss_ratio = 0 },
               { duration = 0.1, loss_ratio = 0.5 } }
  -- 0.5 x 4 s = 2 s of the worst trials skipped: the third worst, 0, is the quantile
  assert(mlr.conditional(1000, at, g) == 1000, "exceed ratio 0.5: " .. mlr.conditional(1000, at, g))
  g.exceed_ratio = 0
  assert(math.abs(mlr.conditional(1000, at, g) - 990) < 1e-9, "exceed ratio 0: the worst full trial")
  g.exceed_ratio, g.duration_sum = 0.3, 4
  assert(math.abs(mlr.conditional(1000, at, g) - 998) < 1e-9, "1.2 s skipped: the second worst")
end

function T.bad_goals_refused()
  local base = { name = "X", loss_ratio = 0, exceed_ratio = 0.5, final_trial = 1, duration_sum = 21, width = 0.005 }
  local function with(k, v) local g = {} for a, b in pairs(base) do g[a] = b end g[k] = v return g end
  for _, c in ipairs({ { "loss_ratio", 1 }, { "loss_ratio", -0.1 }, { "exceed_ratio", 1 }, { "exceed_ratio", -1 },
                       { "width", 0 }, { "width", 1 }, { "final_trial", 0 }, { "duration_sum", 0.5 } }) do
    local field = mlr.goal_error(with(c[1], c[2]))
    assert(field == c[1], ("%s = %s: refused as %s"):format(c[1], tostring(c[2]), tostring(field)))
  end
  assert(mlr.goal_error(base) == nil, "the defaults are fine")
  errors("goal X given twice", mlr.goals, { base, base })
  errors("goal X: width 0 must be above 0", mlr.search, { max_load = 1e6, goals = { with("width", 0) },
    trial = function() return 0 end })
  errors("min_load 2e%+06 must be above 0 and below max_load", mlr.search,
    { max_load = 1e6, min_load = 2e6, trial = function() return 0 end })
end

-- The scenario from Lua (as a script or the REPL calls it) on the ring
-- loopback (port 0): the results in the shape --output writes (what it
-- finds is what surge's sender manages on this machine, not asserted); bad
-- goals raise at the caller's line.
function T.scenario_from_lua()
  local r = scn.run{ tx = 0, sizes = "64", max_rate = "5kpps", final_trial = 0.2, duration_sum = 0.2,
                     settle = 0.05, max_trials = 12 }
  assert(r.scenario == "mlrsearch" and r.search == "mlr", "the results say which search ran")
  assert(#r.rows == 2 and r.rows[1].goal == "NDR" and r.rows[2].goal == "PDR", "a row per goal")
  for _, row in ipairs(r.rows) do
    assert(row.frame_size == 64 and row.lower_bound_pps >= 0 and row.loss_ratio < 1, row.goal)
  end
  assert(#r.trials >= 2 and #r.trials <= 12 and r.trials[1].load_pps == 5000, "trials recorded, the budget kept")
  local sum = 0
  for _, t in ipairs(r.trials) do sum = sum + t.duration_s end
  assert(math.abs(sum - r.trial_seconds) < 1e-9, "trial_seconds is their sum")
  assert(scn.report(r):find("mlrsearch results", 1, true), "the report")
  errors(at("mlrsearch: --goals: goal NDR: loss ratio 1 must be in 0..1, below 1 (a loss ratio of 1 is met by a "
    .. "DUT that forwards nothing)", 2), function()
    scn.run{ tx = 0, goals = "NDR:1" } end)
  errors(at("mlrsearch: --width: goal NDR: width 0 must be above 0 and below 1 (a relative width; 0 is never "
    .. "reached)", 2), function()
    scn.run{ tx = 0, width = 0 } end)
  errors(at("rfc2544: --search: unknown search \"fast\" (binary, mlr)", 1), function()
    require("surge.scenario.rfc2544").run{ tx = 0, search = "fast" } end)
end

-- The frames a trial intended and the frames it planned and sent are one
-- number (surge.dut.frames): a trial that lost one frame is lossy. With
-- floor(load x duration) intended and round(load x duration) sent, a load
-- whose product ends in .5 or more scored one lost frame as no loss (two
-- such trials held up an NDR).
function T.one_lost_frame_is_loss()
  local planned = require("surge.dut.trial").planned
  local frames = require("surge.dut.frames")
  for _, c in ipairs({ { 41666.7, 1 }, { 1000.5, 0.1 }, { 14880952.4, 0.2 }, { 3.9, 1 }, { 50000, 0.5 } }) do
    local load, d = c[1], c[2]
    local n = planned{ rate = load, duration = d }
    assert(n == frames.planned(load, d), "the trial's schedule is the shared count")
    local t = { sent = n, planned = n, received = n - 1 }
    local loss = mlr.trial_loss(load, d, t)
    assert(loss > 0, ("%g pps for %g s: %d sent, %d received scored loss %g"):format(load, d, n, n - 1, loss))
    assert(math.abs(loss - 1 / n) < 1e-12, "one frame of " .. n)
    assert(mlr.trial_loss(load, d, { sent = n, planned = n, received = n }) == 0, "all received: no loss")
  end
  -- the search: a DUT that loses one frame in every trial above 40000 pps
  -- has its NDR below 40000, not on a load where one frame went missing
  local res = mlr.search{ max_load = 100000, min_load = 1000, goals = goals({ final_trial = 0.5, duration_sum = 1 }),
    trial = function(load, d)
      local n = frames.planned(load, d)
      return mlr.trial_loss(load, d, { sent = n, planned = n, received = load > 40000 and n - 1 or n })
    end }
  local g = by_name(res)
  assert(g.NDR.lower_bound <= 40000, "NDR lower bound " .. g.NDR.lower_bound)
end

-- docs/scenarios.md's example of surge.scenario.mlr's search, run as the
-- doc shows it (issue 31 item 13: the doc named a mlrsearch.search that
-- does not exist): its goals as tables, what it prints as the doc says.
function T.doc_example_runs()
  local here = debug.getinfo(1, "S").source:gsub("^@", ""):match("^(.*)/[^/]*$")
  local f = assert(io.open(here .. "/../../docs/scenarios.md"))
  local text = f:read("*a")
  f:close()
  local block = text:match("\n```lua\n(local mlr = require%(\"surge%.scenario%.mlr\"%).-)```\n")
  assert(block, "docs/scenarios.md shows the mlr.search example")
  local out = {}
  local env = setmetatable({ print = function(...)
    local t = {}
    for i = 1, select("#", ...) do t[i] = tostring((select(i, ...))) end
    out[#out + 1] = table.concat(t, "\t")
  end }, { __index = _G })
  local chunk = assert(loadstring(block, "=docs/scenarios.md"))
  setfenv(chunk, env)
  chunk()
  assert(#out == 3, "three lines printed, got " .. #out)
  local name, lo, hi, _, reached = out[1]:match("^(%S+)\t(%S+)\t(%S+)\t(%S+)\t(%S+)$")   -- the 4th: conditional throughput
  assert(name == "NDR" and reached == "true", out[1])
  lo, hi = tonumber(lo), tonumber(hi)
  assert(lo <= 41667 and hi > 41667 and (hi - lo) / hi <= 0.005 + 1e-9, "NDR brackets the truth: " .. out[1])
  assert(out[1] == "NDR\t41667\t41876.381909548\t41667\ttrue", "the line the doc shows: " .. out[1])
  assert(out[3] == "39 trials, 33.82082039325 trial seconds", "the line the doc shows: " .. out[3])
  assert(out[2]:match("^PDR\t") and out[2]:match("\ttrue$"), out[2])
  assert(out[3]:match("^%d+ trials, [%d.]+ trial seconds$"), out[3])
end

return T
