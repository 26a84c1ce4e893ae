-- mlrsearch.lua - the search logic of RFC 9971 MLRsearch (Multiple Loss Ratio
-- search), free of packets and ports like search.lua: the trial function is
-- injected, so tests drive it with simulated DUTs whose loss curves are known
-- (tests/lua/test_mlrsearch.lua). The same module is the scenario
-- `mlrsearch` (M.options, M.run, M.report at the end: surge trials, loaded
-- only there), and rfc2544 --search mlr calls M.search with its own trials.
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
local M = { name = "mlrsearch",
  description = "RFC 9971 MLRsearch: NDR, PDR (any loss goals) in one search per frame size" }

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

local function num(v, what, lo, inf_ok)
  if type(v) ~= "number" or v ~= v or v < lo or (v == math.huge and not inf_ok) then
    error(("mlrsearch: %s = %s must be a number >= %s"):format(what, tostring(v), tostring(lo)), 3)
  end
  return v
end

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


-- The scenario `mlrsearch`: M.search per frame size with surge trials
-- through the DUT (surge run mlrsearch --tx 0 --rx 1 --gateway ... --sizes 64,512).

function M.options(p)
  local scenario = require "surge.scenario"
  scenario.dut_options(p)
  p:option("--sizes", "frame sizes with FCS, comma-separated", "64")
  p:option("--goals", "goals NAME:LOSS[:EXCEED[:FINAL[:SUM[:WIDTH]]]], each a loss ratio (0.005 or 0.5%) and "
    .. "optionally its own exceed ratio, final trial (s), duration sum (s), width", "NDR:0,PDR:0.5%")
  p:option("--exceed-ratio", "share of a load's trial time allowed above a goal's loss ratio (0..1, below 1)",
    M.DEFAULTS.exceed_ratio, "number")
  p:option("--final-trial", "seconds of a full trial, the last phase's", M.DEFAULTS.final_trial, "number")
  p:option("--duration-sum", "seconds of full trials that decide a load", M.DEFAULTS.duration_sum, "number")
  p:option("--width", "relative width of the final bounds (0.005 or 0.5%)", "0.5%")
  p:option("--initial-trial", "seconds of the coarsest phase's trials (default: a tenth of the final trial)", "")
  p:option("--phases", "coarse phases before the goals' own", 2, "integer 0..10")
  p:option("--max-rate", "max load, the first trial's (pps, 1mpps, 1gbit, or % of line rate)", "100%")
  p:option("--min-rate", "min load, the lowest the search tries (default: max load / 1000, at least 10 frames "
    .. "in the shortest trial)", "")
  p:option("--settle", "seconds to keep receiving after a trial before counting loss", 0.5, "number 0..3600")
  p:option("--flows", "UDP flows (source ports) in the test traffic", 1, "integer 1..60000")
  p:option("--max-trials", "trials per frame size at most", 1000, "integer 1..1000000")
  p:option("--max-time", "trial seconds per frame size at most (0: no limit)", 0, "number 0..1000000")
end

-- A ratio as given: a number, "0.005" or "0.5%"; option names it when refused.
local function ratio(v, option)
  local scenario = require "surge.scenario"
  if type(v) == "number" then return v end
  if type(v) == "string" then
    local n, pct = v:match("^%s*([-+]?[%d%.]+[eE]?[-+]?%d*)%s*(%%?)%s*$")
    n = tonumber(n)
    if n then return pct == "%" and n / 100 or n end
  end
  scenario.refuse(option, "%s is not a ratio (0.005 or 0.5%%)", type(v) == "string" and "'" .. v .. "'" or tostring(v))
end

-- The goals of --goals with the other options as their defaults, each
-- checked by M.goal_error; a wrong field is refused naming the option it
-- came from (the goal's own item, or --exceed-ratio, --width, ...).
local FIELDS = { "loss_ratio", "exceed_ratio", "final_trial", "duration_sum", "width" }
local OPTION = { exceed_ratio = "--exceed-ratio", final_trial = "--final-trial", duration_sum = "--duration-sum",
                 width = "--width" }
function M.goals_from(opts)
  local scenario = require "surge.scenario"
  local base = { exceed_ratio = ratio(opts.exceed_ratio, "--exceed-ratio"), final_trial = opts.final_trial,
                 duration_sum = opts.duration_sum, width = ratio(opts.width, "--width") }
  local items = scenario.items(opts.goals, "--goals", { what = "goal", expected = "goals like \"NDR:0,PDR:0.5%\"",
    unique = function(g) return g.name end, parse = function(w)
      if type(w) == "table" then return w end
      local parts = {}
      for f in (tostring(w) .. ":"):gmatch("([^:]*):") do parts[#parts + 1] = f end
      if #parts < 2 or #parts > 6 or parts[1] == "" or not parts[1]:match("^[%w_%-]+$") then
        scenario.refuse("--goals", "'%s' is not NAME:LOSS[:EXCEED[:FINAL[:SUM[:WIDTH]]]] (e.g. PDR:0.5%%)", tostring(w))
      end
      local g = { name = parts[1], given = {} }
      for i = 2, #parts do
        local k = FIELDS[i - 1]
        if parts[i] ~= "" then g[k], g.given[k] = ratio(parts[i], "--goals"), true end
      end
      return g
    end })
  if #items == 0 then scenario.refuse("--goals", "no goal given (e.g. NDR:0,PDR:0.5%%)") end
  local out = {}
  for i, item in ipairs(items) do
    local g = { name = item.name }
    for _, k in ipairs(FIELDS) do
      if item[k] ~= nil then g[k] = item[k] else g[k] = base[k] end
    end
    if g.loss_ratio == nil then scenario.refuse("--goals", "goal %s has no loss ratio", g.name) end
    local field, why = M.goal_error(g)
    if field then
      local given = item.given == nil or item.given[field] or field == "loss_ratio"
      scenario.refuse(given and "--goals" or OPTION[field], "goal %s: %s", g.name, why)
    end
    out[i] = g
  end
  return out
end

local function fmt_rate(pps) return ("%.5g kpps"):format(pps / 1e3) end

-- A trial's loss ratio (RFC 9971): the frames its load intended (load x
-- duration) that did not arrive. Frames surge could not send count as lost:
-- a DUT that pushes back on the sender (a shaper behind veths: af_packet's
-- ring waits for the DUT) forwards less than the load, whatever it drops
-- itself. Where surge's own limit is why, the progress line and the
-- results' short_trials say so: those bounds are surge's.
function M.trial_loss(load, duration, t)
  local intended = math.max(1, math.floor(load * duration))   -- a paced trial sends ceil(load x duration)
  return math.min(1, math.max(0, intended - t.received) / intended)
end

-- One flat row per frame size and goal (docs/results.md), and the trials
-- of every size in one list over the run's trial time (for surge plot).
local function flat_rows(results)
  results.rows, results.trials = {}, {}
  local t0 = 0
  for _, r in ipairs(results.sizes) do
    for _, g in ipairs(r.goals or {}) do
      results.rows[#results.rows + 1] = { frame_size = r.size, goal = g.name, loss_ratio = g.loss_ratio,
        exceed_ratio = g.exceed_ratio, lower_bound_pps = g.lower_bound_pps, upper_bound_pps = g.upper_bound_pps,
        conditional_throughput_pps = g.conditional_throughput_pps, relative_width = g.relative_width,
        reached = g.reached, trial_seconds = r.trial_seconds }
    end
    for _, t in ipairs(r.trials) do
      results.trials[#results.trials + 1] = { frame_size = r.size, t_s = t0 + t.start_s, load_pps = t.load_pps,
        duration_s = t.duration_s, loss_ratio = t.loss_ratio, phase = t.phase }
    end
    if #r.trials > 0 then t0 = t0 + r.trials[#r.trials].start_s + r.trials[#r.trials].duration_s end
  end
end

function M.run(opts)
  local scenario = require "surge.scenario"
  local json = require "surge.results.json"
  opts = scenario.defaults(M.name, M, opts)
  local goals = M.goals_from(opts)
  local sizes = scenario.sizes(opts.sizes)
  local shortest = math.huge
  for _, g in ipairs(goals) do shortest = math.min(shortest, g.final_trial) end
  local initial = shortest / 10
  if opts.initial_trial ~= "" then
    initial = tonumber(opts.initial_trial)
    if not initial or initial <= 0 or initial > shortest then
      scenario.refuse("--initial-trial", "%s must be seconds above 0, at most the final trial (%g s)",
        tostring(opts.initial_trial), shortest)
    end
  end
  local s = scenario.session(opts)
  local rate = {}
  for _, size in ipairs(sizes) do
    scenario.check_size(s, size, "--sizes")
    local line = s:line_pps(size)
    local hi = scenario.pps(opts.max_rate, size, line, "--max-rate")
    -- default min load: a thousandth of max load, and no lower than 10
    -- frames in the shortest trial (a loss ratio needs frames to count)
    local lo = opts.min_rate ~= "" and scenario.pps(opts.min_rate, size, line, "--min-rate")
      or math.min(hi / 2, math.max(hi / 1000, 10 / initial))
    if lo >= hi then
      scenario.refuse("--min-rate", "%s (%g pps at %d bytes) is not below --max-rate %s (%g pps)",
        tostring(opts.min_rate), lo, size, tostring(opts.max_rate), hi)
    end
    scenario.check_frames(lo, initial, ("%d bytes, the min load (--min-rate)"):format(size),
      opts.initial_trial ~= "" and "--initial-trial" or "the first phase's trial, --final-trial / 10")
    rate[size] = { hi = hi, lo = lo, line = line }
  end
  local mac = s:resolve()
  scenario.progress("mlrsearch: tx port %d -> rx port %d, %s -> %s via %s%s", s.tx.id, s.rx.id, s.src, s.dst, mac,
    s.rx_gateway_mac and (" (rx side: %s at %s)"):format(s.rx_gateway, s.rx_gateway_mac) or "")
  -- learning (RFC 2544 section 23): the DUT resolves surge's addresses first
  s:trial{ size = sizes[1], rate = 1000, duration = 0.2, settle = 0.2, what = "the learning trial" }
  local results = { scenario = "mlrsearch", search = "mlr", tx = s.tx.id, rx = s.rx.id, src = s.src, dst = s.dst,
                    dst_mac = mac, rx_gateway_mac = s.rx_gateway_mac, goals = goals, trial_seconds = 0, short_trials = 0,
                    sizes = json.array() }
  scenario.partial(results, flat_rows)
  scenario.steps(#sizes, "mlrsearch")
  for _, size in ipairs(sizes) do
    local r = { size = size, max_rate_pps = rate[size].hi, min_rate_pps = rate[size].lo, line_pps = rate[size].line,
                trial_seconds = 0, trials = json.array() }
    results.sizes[#results.sizes + 1] = r
    local found = M.search{ max_load = rate[size].hi, min_load = rate[size].lo, goals = goals,
      initial_trial = initial, phases = opts.phases, max_trials = opts.max_trials,
      max_time = opts.max_time > 0 and opts.max_time or nil, trial = function(load, d, phase)
        local n = #r.trials + 1
        local t = s:trial{ size = size, rate = load, duration = d, settle = opts.settle, flows = opts.flows,
                           what = ("MLRsearch trial %d at %d bytes"):format(n, size) }
        local loss = M.trial_loss(load, d, t)
        r.trials[n] = { load_pps = load, duration_s = d, loss_ratio = loss, start_s = r.trial_seconds, phase = phase,
                        sent = t.sent, received = t.received, tx_pps = t.tx_pps, duplicated = t.duplicated }
        if t.tx_pps < load * 0.95 then results.short_trials = results.short_trials + 1 end
        r.trial_seconds = r.trial_seconds + d
        local short = t.tx_pps < load * 0.95
        scenario.progress("  %5d B  trial %3d  %.3g s at %s  sent %d  received %d  loss ratio %.3g%s%s", size, n, d,
          fmt_rate(load), t.sent, t.received, loss, scenario.dup_text(t.duplicated),
          short and ("  (surge sent only " .. fmt_rate(t.tx_pps) .. ")") or "")
        return loss, t.received / d
      end }
    for i, t in ipairs(found.trials) do r.trials[i].goal = t.goal end
    r.complete = found.complete
    r.goals = {}
    for i, g in ipairs(found.goals) do
      r.goals[i] = { name = g.name, loss_ratio = g.loss_ratio, exceed_ratio = g.exceed_ratio,
                     final_trial_s = g.final_trial, duration_sum_s = g.duration_sum, width = g.width,
                     lower_bound_pps = g.lower_bound, upper_bound_pps = g.upper_bound,
                     conditional_throughput_pps = g.conditional_throughput, relative_width = g.relative_width,
                     reached = g.reached }
      scenario.progress("  %5d B  %s (loss ratio %g): lower bound %s, upper bound %s, conditional throughput %s%s",
        size, g.name, g.loss_ratio, fmt_rate(g.lower_bound), g.upper_bound and fmt_rate(g.upper_bound) or "none",
        fmt_rate(g.conditional_throughput), g.reached and "" or "  (not reached: the trial budget ran out)")
    end
    results.trial_seconds = results.trial_seconds + r.trial_seconds
    scenario.step()
  end
  if results.short_trials > 0 then
    scenario.progress("mlrsearch: in %d trials surge sent less than 95 %% of the load (see 'surge sent only'): "
      .. "the DUT pushed back, or surge could not offer it", results.short_trials)
  end
  flat_rows(results)
  return scenario.done(M.name, results)
end

function M.report(res)
  local scenario = require "surge.scenario"
  local rows = {}
  for _, r in ipairs(res.sizes) do
    for _, g in ipairs(r.goals or {}) do
      rows[#rows + 1] = { r.size, g.name, ("%g"):format(g.loss_ratio), g.lower_bound_pps, g.upper_bound_pps or "-",
        g.conditional_throughput_pps, g.relative_width * 100, g.reached and "yes" or "no", #r.trials,
        r.trial_seconds }
    end
  end
  return ("mlrsearch results (RFC 9971; %.4g trial seconds in all)\n"):format(res.trial_seconds)
    .. scenario.table({ "size", "goal", "loss_ratio", "lower_pps", "upper_pps", "cond_tput_pps", "width_%",
                        "reached", "trials", "trial_s" }, rows)
end

return M
