-- scenario/mlrsearch/init.lua - the scenario `mlrsearch` (RFC 9971): the search of logic.lua
-- per frame size with surge trials through the DUT
-- (surge run mlrsearch --tx 0 --rx 1 --gateway ... --sizes 64,512).
local mlr = require("surge.scenario.mlrsearch.logic")
local fmt_rate = require("surge.rate").format_pps
local json = require("surge.results.json")
local scenario = require("surge.scenario")

local M = { name = "mlrsearch",
  description = "RFC 9971 MLRsearch: NDR, PDR (any loss goals) in one search per frame size" }

function M.options(p)
  scenario.dut_options(p)
  p:option("--sizes", "frame sizes with FCS, comma-separated", "64")
  p:option("--goals", "goals NAME:LOSS[:EXCEED[:FINAL[:SUM[:WIDTH]]]], each a loss ratio (0.005 or 0.5%) and "
    .. "optionally its own exceed ratio, final trial (s), duration sum (s), width", "NDR:0,PDR:0.5%")
  p:option("--exceed-ratio", "share of a load's trial time allowed above a goal's loss ratio (0..1, below 1)",
    mlr.DEFAULTS.exceed_ratio, "number")
  p:option("--final-trial", "seconds of a full trial, the last phase's", mlr.DEFAULTS.final_trial, "number")
  p:option("--duration-sum", "seconds of full trials that decide a load", mlr.DEFAULTS.duration_sum, "number")
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
  -- the goals need no port: refused when parsed (before EAL starts for
  -- `surge run mlrsearch`), by the same check run() makes
  scenario.parse_check(p, M.goals_from)
end

-- A ratio as given (the kit's one parser: a number, "0.005" or "0.5%");
-- option names it when refused. Its range is each goal field's own check
-- (mlr.goal_error), so a number passes as it is.
local function ratio(v, option)
  if type(v) == "number" then return v end
  local n = scenario.kit.numbers.ratio(v)
  if n then return n end
  scenario.refuse(option, "%s is not a ratio (0.005 or 0.5%%)", type(v) == "string" and "'" .. v .. "'" or tostring(v))
end

-- The goals of --goals with the other options as their defaults, each
-- checked by mlr.goal_error; a wrong field is refused naming the option it
-- came from (the goal's own item, or --exceed-ratio, --width, ...).
local FIELDS = { "loss_ratio", "exceed_ratio", "final_trial", "duration_sum", "width" }
local OPTION = { exceed_ratio = "--exceed-ratio", final_trial = "--final-trial", duration_sum = "--duration-sum",
                 width = "--width" }
function M.goals_from(opts)
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
    local field, why = mlr.goal_error(g)
    if field then
      local given = item.given == nil or item.given[field] or field == "loss_ratio"
      scenario.refuse(given and "--goals" or OPTION[field], "goal %s: %s", g.name, why)
    end
    out[i] = g
  end
  return out
end



-- One flat row per frame size and goal (docs/results.md), and the trials
-- of every size in one list over the run's trial time (for surge plot).
local function flat_rows(results)
  results.rows, results.trials = json.array(), json.array()
  local t0 = 0
  for _, r in ipairs(results.sizes) do
    for _, g in ipairs(r.goals or {}) do
      results.rows[#results.rows + 1] = { frame_size = r.size, goal = g.name, loss_ratio = g.loss_ratio,
        exceed_ratio = g.exceed_ratio, lower_bound_pps = g.lower_bound_pps, upper_bound_pps = g.upper_bound_pps,
        conditional_throughput_pps = g.conditional_throughput_pps, relative_width = g.relative_width,
        reached = g.reached, trial_seconds = r.trial_seconds, sender_limited = g.sender_limited }
    end
    for _, t in ipairs(r.trials) do
      results.trials[#results.trials + 1] = { frame_size = r.size, t_s = t0 + t.start_s, load_pps = t.load_pps,
        duration_s = t.duration_s, loss_ratio = t.loss_ratio, phase = t.phase, sender_limited = t.sender_limited }
    end
    if #r.trials > 0 then t0 = t0 + r.trials[#r.trials].start_s + r.trials[#r.trials].duration_s end
  end
end

function M.run(opts)

  opts = scenario.defaults(M.name, M, opts)
  local goals = M.goals_from(opts)
  local sizes = scenario.sizes(opts.sizes)
  local shortest = math.huge
  for _, g in ipairs(goals) do shortest = math.min(shortest, g.final_trial) end
  local initial = shortest / 10
  if opts.initial_trial ~= "" then
    initial = scenario.finite(opts.initial_trial)
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
  -- where the frames go as every scenario says it (no "via" a MAC where
  -- there is no gateway: a loopback's all-zero MAC is nobody's)
  scenario.progress("mlrsearch: tx port %d -> rx port %d, %s -> %s %s%s", s.tx.id, s.rx.id, s.src, s.dst, s:next_hop(),
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
    local found = mlr.search{ max_load = rate[size].hi, min_load = rate[size].lo, goals = goals,
      initial_trial = initial, phases = opts.phases, max_trials = opts.max_trials,
      max_time = opts.max_time > 0 and opts.max_time or nil, trial = function(load, d, phase)
        local n = #r.trials + 1
        local t = s:trial{ size = size, rate = load, duration = d, settle = opts.settle, flows = opts.flows,
                           what = ("MLRsearch trial %d at %d bytes"):format(n, size) }
        local loss = mlr.trial_loss(load, d, t)
        -- short: the trial's own sender_limited (fewer frames left than
        -- it planned), the rule of every scenario; those frames count as lost
        r.trials[n] = { load_pps = load, duration_s = d, loss_ratio = loss, start_s = r.trial_seconds, phase = phase,
                        sent = t.sent, planned = t.planned, received = t.received, tx_pps = t.tx_pps,
                        duplicated = t.duplicated, sender_limited = t.sender_limited }
        if t.sender_limited then results.short_trials = results.short_trials + 1 end
        r.trial_seconds = r.trial_seconds + d
        scenario.progress("  %5d B  trial %3d  %.3g s at %s  sent %d  received %d  loss ratio %.3g%s%s", size, n, d,
          fmt_rate(load), t.sent, t.received, loss, scenario.dup_text(t.duplicated), scenario.limited_text(t))
        return loss, t.received / d
      end }
    for i, t in ipairs(found.trials) do r.trials[i].goal = t.goal end
    -- a goal's bound resting on a trial surge could not offer is surge's
    -- limit: its row is flagged, as every scenario flags one
    local function limited_at(load)
      if not load then return false end
      for _, t in ipairs(r.trials) do
        if t.load_pps == load and t.sender_limited then return true end
      end
      return false
    end
    r.complete = found.complete
    r.goals = {}
    for i, g in ipairs(found.goals) do
      r.goals[i] = { name = g.name, loss_ratio = g.loss_ratio, exceed_ratio = g.exceed_ratio,
                     final_trial_s = g.final_trial, duration_sum_s = g.duration_sum, width = g.width,
                     lower_bound_pps = g.lower_bound, upper_bound_pps = g.upper_bound,
                     conditional_throughput_pps = g.conditional_throughput, relative_width = g.relative_width,
                     reached = g.reached,
                     sender_limited = limited_at(g.lower_bound) or limited_at(g.upper_bound) or nil }
      scenario.progress("  %5d B  %s (loss ratio %g): lower bound %s, upper bound %s, conditional throughput %s%s",
        size, g.name, g.loss_ratio, fmt_rate(g.lower_bound), g.upper_bound and fmt_rate(g.upper_bound) or "none",
        fmt_rate(g.conditional_throughput), g.reached and "" or "  (not reached: the trial budget ran out)")
    end
    results.trial_seconds = results.trial_seconds + r.trial_seconds
    scenario.step()
  end
  flat_rows(results)
  return scenario.done(M.name, results)
end

function M.report(res)
  local rows, notes = {}, {}
  for _, r in ipairs(res.sizes) do
    for _, g in ipairs(r.goals or {}) do
      rows[#rows + 1] = { r.size, g.name, ("%g"):format(g.loss_ratio), g.lower_bound_pps, g.upper_bound_pps or "-",
        g.conditional_throughput_pps, g.relative_width * 100, g.reached and "yes" or "no", #r.trials,
        r.trial_seconds, g.sender_limited and "surge" or "-" }
      notes[#notes + 1] = { sender_limited = g.sender_limited }
    end
  end
  return ("mlrsearch results (RFC 9971; %.4g trial seconds in all)\n"):format(res.trial_seconds)
    .. scenario.table({ "size", "goal", "loss_ratio", "lower_pps", "upper_pps", "cond_tput_pps", "width_%",
                        "reached", "trials", "trial_s", "limited_by" }, rows) .. scenario.notes(notes)
end

return M
