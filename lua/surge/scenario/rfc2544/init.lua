-- scenario/rfc2544/init.lua - RFC 2544 benchmarks against a device under test: throughput
-- (binary search per frame size, or RFC 9971 MLRsearch with --search mlr), latency at that throughput, frame loss
-- rate (100 % of the top rate down in steps) and back-to-back bursts.
--
--   surge run --vdev ... rfc2544 --tx 0 --rx 1 --gateway 10.0.0.1 --sizes 64,512
--   require("surge.scenario.rfc2544").run{ tx = 0, rx = 1, sizes = "64,512" }
--
-- Every trial has a fixed length (--trial), counts loss after --settle
-- seconds of receiving with the sender stopped, and answers the DUT's
-- ARP/NDP while it runs. Results come back per frame size as data.
local surge = require("surge")
local scenario = require("surge.scenario")
local search = require("surge.scenario.kit.search")
local mlr = require("surge.scenario.mlrsearch.logic")

local M = { name = "rfc2544",
            description = "RFC 2544: throughput, latency, frame loss rate and back-to-back per frame size" }

function M.options(p)
  scenario.dut_options(p)
  p:option("--sizes", "frame sizes in bytes, FCS included", "64,128,256,512,1024,1280,1518")
  p:option("--tests", "which tests: throughput, latency, loss, b2b", "throughput,latency,loss,b2b")
  p:option("--max-rate", "top of the search (pps, 1mpps, 1gbit, or % of line rate)", "100%")
  p:option("--min-rate", "bottom of the search", "0")
  p:option("--trial", "trial length in seconds", 2, "number >0")
  p:option("--settle", "seconds to keep receiving after a trial before counting loss", 0.5, "number 0..3600")
  p:option("--tolerance", "loss tolerated in a passing trial, percent", 0, "number 0..100")
  p:option("--resolution", "stop the search when the bracket is narrower than this, % of max rate", 1, "number 0..100")
  p:option("--max-trials", "trials per throughput search", 16, "integer 1..1000")
  p:option("--search", "throughput search: binary (RFC 2544) or mlr (RFC 9971 MLRsearch, one goal: loss "
    .. "--tolerance, exceed ratio 0, trials of --trial, width --resolution % of the result)", "binary")
  p:option("--flows", "UDP flows (source ports) in the test traffic", 1, "integer 1..60000")
  p:option("--latency-trial", "seconds of the latency trial at the throughput", 2, "number >0")
  p:option("--probes", "latency probes per second in the latency trial", 1000, "number >0")
  p:option("--loss-step", "frame loss rate: step in % of max rate", 10, "number 1..100")
  p:option("--b2b-max", "back-to-back: longest burst tried (frames)", 10000, "integer 1..1000000000")
  p:option("--b2b-trials", "back-to-back: trials in its search", 12, "integer 1..1000")
  p:flag("--confirm", "after the search, a trial at T (must pass) and one at 1.2 T")
end

local TESTS = { throughput = true, latency = true, loss = true, b2b = true }

-- --tests as a set ({ throughput = true, ... }), each test named once.
local function tests(v)
  local set, n = {}, 0
  for _, w in ipairs(scenario.items(v, "--tests", { what = "test", unique = true,
      expected = "a list like \"throughput,latency\"", parse = function(w)
        if not TESTS[w] then
          scenario.refuse("--tests", "unknown test '%s' (throughput, latency, loss, b2b)", tostring(w))
        end
        return w
      end })) do
    set[w], n = true, n + 1
  end
  if n == 0 then scenario.refuse("--tests", "no test given (throughput, latency, loss, b2b)") end
  return set, n
end

local fmt_rate = require("surge.rate").format_pps
local check = require("surge.check")
local json = require("surge.results.json")

-- --search: "binary" or "mlr". With mlr the throughput is MLRsearch's one
-- goal RFC 2544 defines: a trial of --trial s at the load loses no more than
-- --tolerance (exceed ratio 0, duration sum one trial), --resolution % the
-- relative width; checked by mlrsearch.goal_error before any traffic.
local function mlr_goal(opts)
  if opts.search ~= "binary" and opts.search ~= "mlr" then
    scenario.refuse("--search", "unknown search %s (binary, mlr)", check.show(opts.search))
  end
  if opts.search ~= "mlr" then return nil end
  local g = { name = "throughput", loss_ratio = opts.tolerance / 100, exceed_ratio = 0, final_trial = opts.trial,
              duration_sum = opts.trial, width = opts.resolution / 100 }
  local field, why = mlr.goal_error(g)
  if field then
    scenario.refuse(({ loss_ratio = "--tolerance", width = "--resolution" })[field] or "--trial", "%s", why)
  end
  return g
end

-- One flat row per frame size: what surge plot and spreadsheets read
-- (docs/results.md).
local function flat_rows(results)
  results.rows = json.array()
  for _, r in ipairs(results.sizes) do
    local t, l = r.throughput or {}, r.latency or {}
    results.rows[#results.rows + 1] = { frame_size = r.size, throughput_pps = t.pps,
      throughput_mpps = t.pps and t.pps / 1e6, throughput_pct = t.line_pct, throughput_searched_pps = t.searched_pps,
      sender_limited = t.sender_limited, p50_ns = l.p50_ns, p99_ns = l.p99_ns, max_ns = l.max_ns }
  end
end

-- The lowest rates the tests can offer from hi (every trial of the
-- throughput search failing; the last step of the frame loss curve), found
-- by running the searches themselves without traffic.
local function lowest(lo, hi, opts, goal)
  local search_low, loss_low = hi, hi
  if goal then   -- MLRsearch: its min load, in its first phase's short trials
    search_low = lo > 0 and lo or hi / 1000
  else search.throughput{ lo = lo, hi = hi, resolution = hi * opts.resolution / 100, max_trials = opts.max_trials,
    tolerance = opts.tolerance, trial = function(rate) search_low = math.min(search_low, rate) return math.huge end }
  end
  search.loss_curve{ hi = hi, step_pct = opts.loss_step,
    trial = function(rate) loss_low = math.min(loss_low, rate) return 100 end }
  return search_low, loss_low
end

-- Every rate of the run, per frame size, checked before any traffic:
-- { [size] = { hi = --max-rate, lo = --min-rate, line = line rate } }.
-- Each trial the tests plan sends a frame (scenario.check_frames).
local function rates(s, opts, sizes, want, goal)
  local out = {}
  for _, size in ipairs(sizes) do
    local line = s:line_pps(size)
    local hi = scenario.pps(opts.max_rate, size, line, "--max-rate")
    local lo = scenario.pps(opts.min_rate, size, line, "--min-rate", true)
    if lo >= hi then
      scenario.refuse("--min-rate", "%s (%g pps at %d bytes) is not below --max-rate %s (%g pps)",
        tostring(opts.min_rate), lo, size, tostring(opts.max_rate), hi)
    end
    local search_low, loss_low = lowest(lo, hi, opts, goal)
    local function from(rate, what) return ("%d bytes, %s"):format(size, rate < hi and what or "--max-rate") end
    if want.throughput then
      scenario.check_frames(search_low, goal and opts.trial / 10 or opts.trial, from(search_low, goal and
        "MLRsearch's min load (--min-rate, or --max-rate / 1000)" or "the lowest rate the throughput search can "
        .. "try from --max-rate, --min-rate, --resolution and --max-trials"), goal and "--trial / 10" or "--trial")
    end
    if want.loss then
      scenario.check_frames(loss_low, opts.trial, from(loss_low, "the frame loss test's last step, --loss-step "
        .. "of --max-rate"), "--trial")
    end
    if want.latency then   -- at the throughput found, or at --max-rate without a search
      local l = want.throughput and search_low or hi
      scenario.check_frames(l, opts.latency_trial, from(l, "the lowest throughput the search can find"),
        "--latency-trial")
    end
    out[size] = { hi = hi, lo = lo, line = line }
  end
  return out
end

function M.run(opts)
  opts = scenario.defaults("rfc2544", M, opts)
  local sizes = scenario.sizes(opts.sizes)
  local want, ntests = tests(opts.tests)
  local goal = mlr_goal(opts)
  local s = scenario.session(opts)
  for _, size in ipairs(sizes) do scenario.check_size(s, size, "--sizes") end
  local planned = rates(s, opts, sizes, want, goal)
  local mac = s:resolve()
  scenario.progress("rfc2544: tx port %d -> rx port %d, %s -> %s %s%s", s.tx.id, s.rx.id, s.src, s.dst, s:next_hop(),
    s.rx_gateway_mac and (" (rx side: %s at %s)"):format(s.rx_gateway, s.rx_gateway_mac) or "")
  -- learning (RFC 2544 section 23): a short low-rate trial so the DUT has
  -- resolved surge's addresses before anything is measured
  s:trial{ size = sizes[1], rate = 1000, duration = 0.2, settle = 0.2, what = "the learning trial" }
  local results = { scenario = "rfc2544", tx = s.tx.id, rx = s.rx.id, src = s.src, dst = s.dst,
                    dst_mac = mac, rx_gateway_mac = s.rx_gateway_mac, trial_s = opts.trial,
                    tolerance_pct = opts.tolerance, search = opts.search, sizes = json.array() }
  scenario.partial(results, flat_rows)
  scenario.steps(#sizes * ntests, "rfc2544")
  for _, size in ipairs(sizes) do
    local line, hi, lo = planned[size].line, planned[size].hi, planned[size].lo
    local r = { size = size, max_rate_pps = hi, line_pps = line }
    results.sizes[#results.sizes + 1] = r
    local function trial(rate, what, extra)
      local t = { size = size, rate = rate, duration = opts.trial, settle = opts.settle, flows = opts.flows,
                  what = what }
      for k, v in pairs(extra or {}) do t[k] = v end
      return s:trial(t)
    end
    local T = hi
    if want.throughput and goal then
      -- MLRsearch: T is the relevant lower bound of its one goal
      local n, trials = 0, {}
      local found = mlr.search{ max_load = hi, min_load = lo > 0 and lo or hi / 1000, goals = { goal },
        max_trials = opts.max_trials, trial = function(rate, d)
          n = n + 1
          local t = trial(rate, ("throughput trial %d at %d bytes"):format(n, size), { duration = d })
          scenario.progress("  %5d B  throughput trial %2d  %.3g s  offered %s  sent %d  received %d  loss %.3f %%%s",
            size, n, d, fmt_rate(rate), t.sent, t.received, t.loss_pct, scenario.dup_text(t.duplicated))
          trials[n] = { rate = rate, duration = d, loss_pct = t.loss_pct, pass = t.loss_pct <= opts.tolerance,
                        extra = { sent = t.sent, received = t.received, tx_pps = t.tx_pps, duplicated = t.duplicated } }
          return mlr.trial_loss(rate, d, t), t.received / d
        end }
      local g = found.goals[1]
      T = g.lower_bound
      for _, tr in ipairs(trials) do
        if tr.rate == T and tr.duration >= opts.trial then T = math.floor(math.min(T, tr.extra.tx_pps)) end
      end
      r.throughput = { pps = T, searched_pps = g.lower_bound, search = "mlr", upper_bound_pps = g.upper_bound,
                       conditional_throughput_pps = g.conditional_throughput, relative_width = g.relative_width,
                       trial_seconds = found.trial_seconds, l1_mbps = T * scenario.l1(size) / 1e6,
                       line_pct = line > 0 and T * 100 / line or nil, converged = g.reached, trials = trials }
    elseif want.throughput then
      local n = 0
      local found = search.throughput{ lo = lo, hi = hi, resolution = hi * opts.resolution / 100,
        max_trials = opts.max_trials, tolerance = opts.tolerance, trial = function(rate)
          n = n + 1
          local t = trial(rate, ("throughput trial %d at %d bytes"):format(n, size))
          scenario.progress("  %5d B  throughput trial %2d  offered %s  sent %d  received %d  loss %.3f %%%s%s",
            size, n, fmt_rate(rate), t.sent, t.received, t.loss_pct, scenario.dup_text(t.duplicated),
            scenario.limited_text(t))
          return t.loss_pct, { sent = t.sent, received = t.received, tx_pps = t.tx_pps, reordered = t.reordered,
                               duplicated = t.duplicated, planned = t.planned, sender_limited = t.sender_limited }
        end }
      -- T is the searched rate when the passing trial sent its schedule;
      -- where surge could not offer it (its own limit, preemption, a DUT
      -- that pushes back on the sender), the rate it did offer is the one
      -- shown to pass, and T is surge's limit, flagged (sender_limited)
      T = math.floor(found.rate)
      local limited = false
      for _, tr in ipairs(found.trials) do
        if tr.pass and tr.rate == found.rate and tr.extra.sender_limited then
          T = math.floor(math.min(found.rate, tr.extra.tx_pps))
          limited = true
        end
      end
      r.throughput = { pps = T, searched_pps = found.rate, search = "binary", trial_seconds = #found.trials * opts.trial,
                       l1_mbps = T * scenario.l1(size) / 1e6, line_pct = line > 0 and T * 100 / line or nil,
                       converged = found.converged, trials = found.trials, sender_limited = limited }
      if limited then
        scenario.progress("  %5d B  throughput %s is surge's limit, not the DUT's: it offered %s and sent only that",
          size, fmt_rate(T), fmt_rate(found.rate))
      end
    end
    if want.throughput then
      if opts.confirm and T > 0 then
        local a = trial(T, "the confirmation trial at T")
        local b = trial(T * 1.2, "the trial at 1.2 T")
        r.throughput.confirm = { at_T = { loss_pct = a.loss_pct, sent = a.sent, received = a.received,
                                          duplicated = a.duplicated },
                                 at_1_2T = { loss_pct = b.loss_pct, sent = b.sent, received = b.received,
                                             duplicated = b.duplicated } }
        scenario.progress("  %5d B  confirmation: at T loss %.3f %%, at 1.2 T loss %.3f %%", size, a.loss_pct,
          b.loss_pct)
      end
      scenario.step()
    end
    if want.latency and T > 0 then
      local every = scenario.probe_every(T, opts.probes)
      local t = trial(T, "the latency trial", { duration = opts.latency_trial, probe_every = every })
      local l = t.classes[1].latency
      r.latency = { rate_pps = T, probes = l.probes, min_ns = l.min_ns, mean_ns = l.mean_ns, p50_ns = l.p50_ns,
                    p90_ns = l.p90_ns,
                    p99_ns = l.p99_ns, max_ns = l.max_ns, loss_pct = t.loss_pct, tx_pps = t.tx_pps,
                    sender_limited = t.sender_limited, rx_poll_ns = t.rx_poll_ns }
      scenario.progress("  %5d B  latency at %s: %s%s", size, fmt_rate(T), surge.latency.format(l),
        scenario.limited_text(t))
    end
    if want.latency then scenario.step() end
    if want.loss then
      r.loss = search.loss_curve{ hi = hi, step_pct = opts.loss_step, trial = function(rate)
        local t = trial(rate, "a frame loss trial")
        scenario.progress("  %5d B  frame loss at %s: %.3f %%%s%s", size, fmt_rate(rate), t.loss_pct,
          scenario.dup_text(t.duplicated), scenario.limited_text(t))
        return t.loss_pct, { sent = t.sent, received = t.received, duplicated = t.duplicated, tx_pps = t.tx_pps,
                             planned = t.planned, sender_limited = t.sender_limited }
      end }
      scenario.step()
    end
    if want.b2b then
      local b = search.back_to_back{ lo = 1, hi = opts.b2b_max, max_trials = opts.b2b_trials,
        resolution = math.max(1, math.floor(opts.b2b_max / 1000)), trial = function(n)
          local t = s:trial{ size = size, count = n, settle = opts.settle, flows = opts.flows,
                             what = "a back-to-back trial" }
          scenario.progress("  %5d B  back-to-back %d frames: lost %d%s%s", size, n, t.lost,
            scenario.dup_text(t.duplicated), t.sender_limited and ("  (surge sent only %d: the driver took no more)"):format(t.sent) or "")
          return t.lost
        end }
      r.back_to_back = b
      scenario.step()
    end
  end
  flat_rows(results)
  return scenario.done("rfc2544", results)
end

function M.report(res)
  local rows, notes = {}, {}
  for _, r in ipairs(res.sizes) do
    local t, l = r.throughput, r.latency
    local lat = scenario.lat_cells(l)
    local loss1 = r.loss and r.loss[1]
    -- which of this size's results were limited by surge's sender
    local by = {}
    if t and t.sender_limited then by[#by + 1] = "tput" end
    if l and l.sender_limited then by[#by + 1] = "lat" end
    if loss1 and loss1.extra and loss1.extra.sender_limited then by[#by + 1] = "loss" end
    rows[#rows + 1] = { r.size, t and t.pps or "-", t and t.l1_mbps or "-", t and t.line_pct or "-",
                        lat[1], lat[2], lat[3], lat[4], lat[5], loss1 and loss1.loss_pct or "-",
                        r.back_to_back and r.back_to_back.frames or "-",
                        #by > 0 and "surge:" .. table.concat(by, ",") or "-" }
    notes[#notes + 1] = { sender_limited = #by > 0, latency = l, rx_poll_ns = l and l.rx_poll_ns }
  end
  return "rfc2544 results (loss tolerance " .. res.tolerance_pct .. " %, trials of " .. res.trial_s .. " s, "
    .. (res.search or "binary") .. " search)\n"
    .. scenario.table({ "size", "tput_pps", "L1_Mbit/s", "line_%", "lat_min_us", "lat_avg_us", "lat_p50_us",
                        "lat_p99_us", "lat_max_us", "loss@100%", "b2b_frames", "limited_by" }, rows)
    .. scenario.notes(notes)
end

return M
