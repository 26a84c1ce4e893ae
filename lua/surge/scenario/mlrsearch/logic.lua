-- scenario/mlrsearch/logic.lua - the search logic of RFC 9971 MLRsearch (Multiple Loss Ratio
-- search), free of packets and ports like search.lua: the trial function is
-- injected, so tests drive it with simulated DUTs whose loss curves are known
-- (tests/lua/test_mlrsearch.lua). The scenario `mlrsearch` (mlrsearch.lua)
-- and rfc2544 --search mlr call M.search with their own trials.
--
-- A goal: { name, loss_ratio, exceed_ratio, final_trial (s), duration_sum
-- (s), width (relative) }. At one load a goal classifies the trials there
-- (RFC 9971 "load classification"): full-length trials (final_trial or
-- longer) count with their duration as low-loss (loss ratio <= the goal's)
-- or high-loss; short trials count only where they lose too much, less the
-- share the short low-loss ones balance. The load is an upper bound when
-- even the optimistic exceed ratio (missing time counted good) is above the
-- goal's, a lower bound when the pessimistic one (missing time counted bad)
-- is not, undecided otherwise. The relevant upper bound (RUB) is the
-- smallest upper-bound load; the relevant lower bound (RLB) the largest
-- lower-bound load below it. A goal is reached when (RUB - RLB) / RUB <=
-- width (or the max load is a lower bound, or the min load an upper one).
--
-- The search: one trial at max load, whose forwarding rate gives the first
-- guess of where the bounds lie; then phases from coarse to fine, each a
-- target per goal (the goal with its width doubled per coarser phase, trials
-- shorter on a geometric scale from initial_trial to final_trial, and one
-- trial's duration as duration sum), the last phase the goals themselves.
-- Every trial is seen by every goal (each classifies it with its own loss
-- ratio): all goals in one search.
local frames = require("surge.dut.frames")
local numbers = require("surge.scenario.kit.numbers")

local M = {}

-- CSIT's NDR and PDR goals (RFC 9971 appendix; FD.io CSIT's defaults).
M.DEFAULTS = { exceed_ratio = 0.5, final_trial = 1, duration_sum = 21, width = 0.005 }
M.NDR = { name = "NDR", loss_ratio = 0 }
M.PDR = { name = "PDR", loss_ratio = 0.005 }

-- What is wrong with goal g (nil: nothing): field, why. One check for the
-- module, the scenario's options and rfc2544 --search mlr.
function M.goal_error(g)
  local function num(k) return type(g[k]) == "number" and g[k] == g[k] end
  if not num("loss_ratio") or g.loss_ratio < 0 or g.loss_ratio >= 1 then
    return "loss_ratio", ("loss ratio %s must be in 0..1, below 1 (a loss ratio of 1 is met by a DUT that "
      .. "forwards nothing)"):format(tostring(g.loss_ratio))
  end
  if not num("exceed_ratio") or g.exceed_ratio < 0 or g.exceed_ratio >= 1 then
    return "exceed_ratio", ("exceed ratio %s must be in 0..1, below 1 (at 1 every load would pass)"):format(
      tostring(g.exceed_ratio))
  end
  if not num("width") or g.width <= 0 or g.width >= 1 then
    return "width", ("width %s must be above 0 and below 1 (a relative width; 0 is never reached)"):format(
      tostring(g.width))
  end
  if not num("final_trial") or g.final_trial <= 0 or g.final_trial == math.huge then
    return "final_trial", ("final trial duration %s must be a number of seconds above 0"):format(
      tostring(g.final_trial))
  end
  if not num("duration_sum") or g.duration_sum < g.final_trial or g.duration_sum == math.huge then
    return "duration_sum", ("duration sum %s s must be at least the final trial duration %g s (a load needs "
      .. "one full trial)"):format(tostring(g.duration_sum), g.final_trial)
  end
  return nil
end

-- Goals with the defaults filled in, checked; raises "mlrsearch: ..." for
-- the first wrong one (two goals with one name contradict each other).
function M.goals(list)
  local out, seen = {}, {}
  for i, g in ipairs(list or { M.NDR, M.PDR }) do
    local c = {}
    for k, v in pairs(M.DEFAULTS) do c[k] = v end
    for k, v in pairs(g) do c[k] = v end
    c.name = c.name or ("goal" .. i)
    local field, why = M.goal_error(c)
    if field then error(("mlrsearch: goal %s: %s"):format(c.name, why), 0) end
    if seen[c.name] then error(("mlrsearch: goal %s given twice"):format(c.name), 0) end
    seen[c.name] = true
    out[i] = c
  end
  if #out == 0 then error("mlrsearch: no goal given", 0) end
  return out
end

-- Load classification (RFC 9971 section 5 pseudocode, in our own words):
-- "upper", "lower" or "undecided" for target t at the trials `at` one load.
local function classify(at, t)
  local full_low, full_high, short_low, short_high = 0, 0, 0, 0
  for i = 1, #at do
    local r = at[i]
    local high = r.loss_ratio > t.loss_ratio
    if r.duration >= t.trial * (1 - 1e-9) then
      if high then full_high = full_high + r.duration else full_low = full_low + r.duration end
    elseif high then short_high = short_high + r.duration else short_low = short_low + r.duration end
  end
  local e = t.exceed_ratio
  local balancing = short_low * e / (1 - e)
  local eff_high = full_high + math.max(0, short_high - balancing)
  local eff_full = full_low + eff_high
  local missing = math.max(0, t.duration_sum - eff_full)
  local denom = math.max(t.duration_sum, eff_full)
  if eff_high / denom > e then return "upper" end
  if (eff_high + missing) / denom <= e then return "lower" end
  return "undecided"
end
M.classify = function(trials, target) return classify(trials, target) end

-- Conditional throughput (RFC 9971): at the relevant lower bound, the
-- full-length trials sorted by loss (highest first); the loss ratio at the
-- exceed-ratio quantile of max(duration sum, their total) gives load x (1 - it).
local function conditional(load, at, g)
  local full, total = {}, 0
  for _, r in ipairs(at) do
    if r.duration >= g.final_trial * (1 - 1e-9) then full[#full + 1] = r total = total + r.duration end
  end
  if #full == 0 then return nil end
  table.sort(full, function(a, b) return a.loss_ratio > b.loss_ratio end)
  local remaining = g.exceed_ratio * math.max(g.duration_sum, total)
  local q = full[#full].loss_ratio
  for _, r in ipairs(full) do
    remaining = remaining - r.duration
    if remaining < 0 then q = r.loss_ratio break end
  end
  return load * (1 - q)
end
M.conditional = function(load, trials, goal) return conditional(load, trials, goal) end

local num = numbers.checker("mlrsearch")

-- The search. o: max_load, min_load (> 0, below max_load), goals (list, see
-- M.goals; default NDR and PDR), initial_trial (s, the coarsest phase's
-- trials; default a tenth of the shortest final trial), phases (coarse
-- phases before the goals' own, default 2), max_trials (default 1000),
-- max_time (trial seconds, default none), trial(load, duration, phase) ->
-- loss_ratio [, forwarding_rate [, extra]] (forwarding rate default load x
-- (1 - loss ratio)).
-- Returns { goals = { { goal fields, lower_bound, upper_bound (nil: max load
-- is a lower bound), conditional_throughput, relative_width, reached } },
-- trials = { { load, duration, loss_ratio, forwarding_rate, phase, goal,
-- start (trial seconds before it), extra } }, trial_seconds, complete }.
function M.search(o)
  local max_load = num(o.max_load, "max_load", 0)
  local min_load = num(o.min_load or max_load / 1000, "min_load", 0)
  if not (min_load > 0 and min_load < max_load) then
    error(("mlrsearch: min_load %g must be above 0 and below max_load %g"):format(min_load, max_load), 2)
  end
  local goals = M.goals(o.goals)
  local shortest = math.huge
  for _, g in ipairs(goals) do shortest = math.min(shortest, g.final_trial) end
  local initial = num(o.initial_trial or shortest / 10, "initial_trial", 0)
  if initial <= 0 or initial > shortest then
    error(("mlrsearch: initial_trial %g must be above 0 and at most the final trial %g"):format(initial, shortest), 2)
  end
  local phases = math.floor(num(o.phases or 2, "phases", 0))
  local max_trials = num(o.max_trials or 1000, "max_trials", 1)
  local max_time = num(o.max_time or math.huge, "max_time", 0, true)

  local trials, at, elapsed = {}, {}, 0     -- at[load] = the trials at that load
  local function run(load, duration, phase, goal)
    local loss, fr, extra = o.trial(load, duration, phase)
    if type(loss) ~= "number" or loss ~= loss then
      error(("mlrsearch: trial(%g, %g) returned loss ratio %s, not a number"):format(load, duration,
        tostring(loss)), 0)
    end
    loss = math.min(1, math.max(0, loss))   -- a DUT's duplicates do not make a negative loss
    local r = { load = load, duration = duration, loss_ratio = loss, forwarding_rate = fr or load * (1 - loss),
                phase = phase, goal = goal, start = elapsed, extra = extra }
    trials[#trials + 1] = r
    at[load] = at[load] or {}
    at[load][#at[load] + 1] = r
    elapsed = elapsed + duration
  end

  -- Goal g's target in phase k (0 = the goal itself, k > 0 coarser).
  local function target(g, k)
    if k == 0 then
      return { loss_ratio = g.loss_ratio, exceed_ratio = g.exceed_ratio, trial = g.final_trial,
               duration_sum = g.duration_sum, width = g.width }
    end
    local d = initial * (g.final_trial / initial) ^ ((phases - k) / phases)
    return { loss_ratio = g.loss_ratio, exceed_ratio = g.exceed_ratio, trial = d, duration_sum = d,
             width = math.min(0.5, g.width * 2 ^ k) }
  end

  -- The bounds of target t over every load measured: rlb, rub (nil: none),
  -- the sorted loads and their classes.
  local function bounds(t)
    local loads, cls = {}, {}
    for load, list in pairs(at) do loads[#loads + 1] = load cls[load] = classify(list, t) end
    table.sort(loads)
    local rub, rlb
    for _, l in ipairs(loads) do if cls[l] == "upper" then rub = l break end end
    for _, l in ipairs(loads) do
      if cls[l] == "lower" and (rub == nil or l < rub) then rlb = l end
    end
    return rlb, rub, loads, cls
  end

  -- The highest forwarding rate seen at or above load `from`: where the
  -- DUT's capacity lies, as loads above it show it.
  local function capacity_hint(from)
    local h
    for load, list in pairs(at) do
      if load >= from then
        for _, r in ipairs(list) do h = math.max(h or 0, r.forwarding_rate) end
      end
    end
    return h
  end

  -- The next load target t (goal state st) needs, or nil when it is reached.
  local function next_load(t, st)
    local rlb, rub, loads, cls = bounds(t)
    -- loads the coarser phase found as bounds, not yet decided here: more
    -- trials there first (they are where this phase's bounds will be)
    for _, l in ipairs({ st.prev_rlb, st.prev_rub }) do
      if l and cls[l] == "undecided" and (rlb == nil or l > rlb) and (rub == nil or l < rub) then return l end
    end
    -- then any undecided load inside the bracket: the highest one below an
    -- upper bound (decided lower, it makes those below irrelevant), the
    -- lowest above the lower bound where no upper bound is known yet
    local pick
    for _, l in ipairs(loads) do
      if cls[l] == "undecided" and (rlb == nil or l > rlb) and (rub == nil or l < rub) then
        if rub == nil then return l end
        pick = l
      end
    end
    if pick then return pick end
    if rub == nil then
      if rlb == nil then return max_load end
      if rlb >= max_load then return nil end
      -- expand up: the step doubles while the loads above keep passing
      st.up = (st.last_up == rlb) and math.min(0.5, st.up * 2) or t.width
      local l = math.min(max_load, rlb / (1 - st.up))
      st.last_up = l
      return l
    end
    if rlb == nil then
      if rub <= min_load then return nil end
      -- expand down: at least to the forwarding rate the loads above showed
      -- (max load's trial gives the first bound at once), the step doubling
      -- while the loads below keep failing
      st.down = (st.last_down == rub) and math.min(0.5, st.down * 2) or t.width
      local h = capacity_hint(rub) or rub
      local l = math.max(min_load, math.min(rub * (1 - st.down), h))
      st.last_down = l
      return l
    end
    if (rub - rlb) / rub <= t.width * (1 + 1e-9) then return nil end
    -- inside the bracket: the capacity the loads above showed, kept a width
    -- away from either bound; where no such load fits, RUB x (1 - width),
    -- which leaves both halves at most one width wide
    local lo, hi = rlb / (1 - t.width), rub * (1 - t.width)
    if lo >= hi then return hi end
    local h = capacity_hint(rub) or (rlb + rub) / 2
    if h <= lo then return lo end
    if h >= hi then return math.max(lo, math.sqrt(rlb * rub)) end
    return h
  end

  local state = {}
  for i = 1, #goals do state[i] = { up = 0, down = 0 } end
  local complete = true
  run(max_load, initial, phases, goals[1].name)
  for k = phases, 0, -1 do
    local targets = {}
    for i, g in ipairs(goals) do targets[i] = target(g, k) end
    while true do
      local load, who
      for i = 1, #goals do
        load = next_load(targets[i], state[i])
        if load then who = i break end
      end
      if not load then break end
      if #trials >= max_trials or elapsed + targets[who].trial > max_time * (1 + 1e-9) then
        complete = false
        break
      end
      run(load, targets[who].trial, k, goals[who].name)
    end
    if not complete then break end
    for i = 1, #goals do
      state[i].prev_rlb, state[i].prev_rub = bounds(targets[i])
      state[i].last_up, state[i].last_down = nil, nil
    end
  end

  local out = {}
  for i, g in ipairs(goals) do
    local rlb, rub = bounds(target(g, 0))
    local r = {}
    for key, v in pairs(g) do r[key] = v end
    r.upper_bound = rub
    r.lower_bound = rlb or 0
    r.conditional_throughput = rlb and conditional(rlb, at[rlb], g) or 0
    r.relative_width = rub and (rub - (rlb or 0)) / rub or 0
    r.reached = (rub == nil and rlb ~= nil) or (rub ~= nil and rub <= min_load)
      or (rub ~= nil and rlb ~= nil and r.relative_width <= g.width * (1 + 1e-9))
    out[i] = r
  end
  return { goals = out, trials = trials, trial_seconds = elapsed, complete = complete }
end

-- A trial's loss ratio (RFC 9971): the frames its load intended that did
-- not arrive. Intended is the count the trial itself planned and sent
-- (surge.dut.frames, load x duration rounded), one number for both: a count
-- of its own here, rounded otherwise, hid a lost frame. Frames surge could
-- not send count as lost:
-- a DUT that pushes back on the sender (a shaper behind veths: af_packet's
-- ring waits for the DUT) forwards less than the load, whatever it drops
-- itself. Where surge's own limit is why (the trial's sender_limited), the
-- progress line and the results' rows say so: those bounds are surge's.
function M.trial_loss(load, duration, t)
  local intended = frames.planned(load, duration)
  return math.min(1, math.max(0, intended - t.received) / intended)
end

return M
