-- scenario/y1564/init.lua - the scenario `y1564` (ITU-T Y.1564 Ethernet service activation):
-- per service (told apart by VLAN, DSCP or UDP destination port) the service
-- configuration test (steps at 25/50/75/100 % of CIR, CIR + EIR, then an
-- overshoot the DUT must police), then the service performance test (every
-- service at CIR together for --duration). Per step and service: IR, FLR,
-- FTD, FDV, availability and the verdict against the service's criteria.
-- The logic (services, steps, verdicts) is logic.lua's.
--
--   surge run --vdev ... y1564 --tx 0 --rx 1 --gateway 10.0.0.1 \
--     --services voice:dscp=46:cir=2mbit:eir=0:flr=0.1%:ftd=10ms:fdv=2ms,data:port=5001:cir=5mbit:eir=2mbit
local logic = require("surge.scenario.y1564.logic")
local json = require("surge.results.json")
local scenario = require("surge.scenario")

local M = { name = "y1564",
  description = "ITU-T Y.1564: per-service CIR/EIR/policing steps and a performance test, pass/fail per step" }

local TESTS = { config = true, performance = true }
M.MAX_INTERVALS = 100000

function M.options(p)
  scenario.dut_options(p)
  p:option("--services", "NAME:KEY=VALUE:...,... with keys dscp, vlan, port (what the DUT tells the service apart "
    .. "by), cir, eir (bit/s: 2mbit), cbs, ebs (bytes: 4kb), flr (0.1%), ftd, fdv (10ms, 500us), avail (99.9%)",
    "voice:dscp=46:cir=1mbit:eir=0,data:dscp=0:cir=2mbit:eir=1mbit")
  p:option("--tests", "config (the service configuration test), performance, or both", "config,performance")
  p:option("--size", "frame size in bytes, FCS included", 512, "integer 1..65535")
  p:option("--step", "seconds of each configuration step", 1, "number >0")
  p:option("--duration", "seconds of the service performance test", 5, "number >0")
  p:option("--overshoot", "the policing step's rate above CIR + EIR, as a share of CIR (0.25 or 25%)", "25%")
  p:option("--tolerance", "how far the delivered IR may lie outside CIR..CIR+EIR in the EIR and policing steps",
    "3%")
  p:option("--interval", "seconds of an availability interval", 1, "number >0")
  p:option("--unavailable-flr", "an interval with more loss than this is unavailable (0.5 or 50%)", "50%")
  p:option("--line-rate", "the line's bit rate (L1: 10gbit; default: the tx port's link speed)", "")
  p:option("--flows", "UDP flows (source ports) per service", 1, "integer 1..60000")
  p:option("--probes", "latency probes per second per service", 1000, "number >0")
  p:option("--settle", "seconds to keep receiving after a trial before counting", 0.5, "number 0..3600")
  -- the services and the numbers need no port: refused when parsed (before
  -- EAL starts for `surge run y1564`), by the same check run() makes
  scenario.parse_check(p, M.plan)
end

local function ratio_opt(v, option, lo, hi)
  local r = logic.ratio(v)
  if r == nil or r < lo or r > hi then
    scenario.refuse(option, "%s is not a ratio in %g..%g (0.25 or 25%%)", tostring(v), lo, hi)
  end
  return r
end

-- What the options ask for, checked, without ports: the services, the
-- tests, the ratios and, where --line-rate is given, every step's rate
-- against it. Returns { services, tests, overshoot, tolerance, unavailable,
-- line_bps }.
function M.plan(o)
  local function refuse(fmt, ...) scenario.refuse("--services", fmt, ...) end
  local services = logic.services(o.services, function(v, parse)
    return scenario.items(v, "--services", { what = "service", parse = parse,
      expected = "services like \"voice:dscp=46:cir=2mbit:eir=1mbit\"" })
  end, refuse)
  local tests = {}
  for _, t in ipairs(scenario.items(o.tests, "--tests", { what = "test", unique = true })) do
    if not TESTS[t] then scenario.refuse("--tests", "unknown test '%s' (config, performance)", tostring(t)) end
    tests[t] = true
  end
  if not next(tests) then scenario.refuse("--tests", "no test given (config, performance)") end
  local plan = { services = services, tests = tests, overshoot = ratio_opt(o.overshoot, "--overshoot", 0, 10),
                 tolerance = ratio_opt(o.tolerance, "--tolerance", 0, 1),
                 unavailable = ratio_opt(o.unavailable_flr, "--unavailable-flr", 0, 1) }
  if o.line_rate ~= "" and o.line_rate ~= nil then
    local l = logic.bitrate(o.line_rate)
    if not l or l <= 0 then scenario.refuse("--line-rate", "%s is not a bit rate above 0 (10gbit)", tostring(o.line_rate)) end
    M.check_line(plan, o.size, l, "--line-rate")
  end
  return plan
end

-- Every rate the plan offers must fit the line: each service's steps (its
-- overshoot included) and the services' CIRs together (the performance
-- test). line_l1: the line's bit rate (L1); at `size` it carries
-- line_l1 x size x 8 / l1(size) bits of frames. from: the option or port it
-- comes from, for the message.
function M.check_line(plan, size, line_l1, from)
  local max_ir = line_l1 * size * 8 / scenario.l1(size)
  local all = 0
  for _, s in ipairs(plan.services) do
    all = all + s.cir_bps
    if s.cir_bps > max_ir * (1 + 1e-9) then
      scenario.refuse("--services", "service '%s': cir %s is above line rate (%s of %d-byte frames, %s)", s.name,
        scenario.bits(s.cir_bps), scenario.bits(max_ir), size, from)
    end
    if plan.tests.config then
      for _, st in ipairs(logic.steps(s, plan.overshoot)) do
        if st.rate_bps > max_ir * (1 + 1e-9) then
          scenario.refuse("--services", "service '%s': its %s step (%s) is above line rate (%s of %d-byte frames, %s)",
            s.name, st.step, scenario.bits(st.rate_bps), scenario.bits(max_ir), size, from)
        end
      end
    end
  end
  if plan.tests.performance and all > max_ir * (1 + 1e-9) then
    scenario.refuse("--services", "the services' CIRs add up to %s, above line rate (%s of %d-byte frames, %s)",
      scenario.bits(all), scenario.bits(max_ir), size, from)
  end
end

-- A trial class of service s at `bps` for `seconds`.
local function class_of(s, o, bps, seconds)
  local pps = bps / (o.size * 8)
  local per = math.max(1, math.floor(pps * o.interval + 0.5))
  return { size = o.size, tos = s.dscp and s.dscp * 4 or nil, vlan = s.vlan, dport = s.port, flows = o.flows,
           share = pps, probe_every = scenario.probe_every(pps, o.probes),
           interval_frames = per, intervals = math.max(1, math.ceil(pps * seconds / per)) }, pps
end

-- One row from a trial's class c (service s at step st).
local function row(s, st, c, t, o, plan)
  -- over the time the frames were sent in (the trial's send_seconds)
  local secs = t.send_seconds or t.seconds
  local ir = secs > 0 and c.received * o.size * 8 / secs or 0
  local l = c.latency
  local r = { service = s.name, step = st.step, kind = st.kind, offered_bps = st.rate_bps, ir_bps = ir,
              sent = c.sent, received = c.received, lost = c.lost, flr_pct = c.loss_pct,
              duplicated = c.duplicated, reordered = c.reordered, sender_limited = t.sender_limited,
              rx_poll_ns = t.rx_poll_ns, latency = l, seconds = secs }
  if l and (l.probes or 0) > 0 then
    r.ftd_us = { mean = l.mean_ns / 1e3, min = l.min_ns / 1e3, max = l.max_ns / 1e3 }
    r.fdv_us = (l.p999_ns - l.min_ns) / 1e3
  end
  if c.intervals then
    r.avail_pct = logic.availability(c.intervals.sent, c.intervals.received, plan.unavailable)
  end
  r.pass, r.why = logic.verdict(s, st.kind, r, plan.tolerance)
  r.why = table.concat(r.why, "; ")
  return r
end

local function progress(r)
  scenario.progress("  %-10s %-11s offered %.4g Mbit/s  IR %.4g Mbit/s  sent %d  received %d  FLR %.3f %%  %s%s%s",
    r.service, r.step, r.offered_bps / 1e6, r.ir_bps / 1e6, r.sent, r.received, r.flr_pct,
    r.pass and "PASS" or "FAIL (" .. r.why .. ")", scenario.dup_text(r.duplicated),
    r.sender_limited and "  (surge did not send the offered rate: surge's limit)" or "")
end

function M.run(opts)
  opts = scenario.defaults(M.name, M, opts)
  local plan = M.plan(opts)
  local s = scenario.session(opts)
  scenario.check_size(s, opts.size, "--size")
  for _, sv in ipairs(plan.services) do
    if sv.vlan and not s.vlan and opts.size - 4 < s:min_size() then
      scenario.refuse("--size", "%d is below %d, the smallest frame of VLAN service '%s' (its tag included)",
        opts.size, s:min_size() + 4, sv.name)
    end
  end
  if opts.line_rate == "" and s.tx_info.speed_mbps and s.tx_info.speed_mbps > 0 then
    M.check_line(plan, opts.size, s.tx_info.speed_mbps * 1e6, ("port %d's link speed"):format(s.tx.id))
  end
  scenario.check_flows(M.name, opts.flows, #plan.services, "services")
  -- availability keeps two counts per interval and service: a bounded number
  local longest = math.max(plan.tests.config and opts.step or 0, plan.tests.performance and opts.duration or 0)
  if longest / opts.interval > M.MAX_INTERVALS then
    scenario.refuse("--interval", "%g s cuts a %g s trial into %d intervals, more than %d (give a longer interval)",
      opts.interval, longest, math.ceil(longest / opts.interval), M.MAX_INTERVALS)
  end
  for _, sv in ipairs(plan.services) do
    local what = ("service '%s' of --services"):format(sv.name)
    if plan.tests.config then
      scenario.check_frames(sv.cir_bps * logic.CIR_STEPS[1] / (opts.size * 8), opts.step, what .. ", its 25% step",
        "--step")
    end
    if plan.tests.performance then
      scenario.check_frames(sv.cir_bps / (opts.size * 8), opts.duration, what .. " at cir", "--duration")
    end
  end
  scenario.progress("y1564: tx port %d -> rx port %d %s, %d service(s), %d-byte frames", s.tx.id, s.rx.id,
    s:next_hop(), #plan.services, opts.size)
  for _, sv in ipairs(plan.services) do
    scenario.progress("  service %-10s %s  CIR %.4g Mbit/s  EIR %.4g Mbit/s", sv.name, logic.match_text(sv),
      sv.cir_bps / 1e6, sv.eir_bps / 1e6)
  end
  -- learning (RFC 2544 section 23): the DUT resolves surge's addresses first
  s:trial{ size = opts.size, rate = 1000, duration = 0.2, settle = 0.2, what = "the learning trial" }
  local res = { scenario = M.name, size = opts.size, services = json.array(), rows = json.array(), pass = true }
  for _, sv in ipairs(plan.services) do
    res.services[#res.services + 1] = { name = sv.name, dscp = sv.dscp, vlan = sv.vlan, port = sv.port,
      cir_bps = sv.cir_bps, eir_bps = sv.eir_bps, cbs = sv.cbs, ebs = sv.ebs, flr = sv.flr, ftd_us = sv.ftd_us, fdv_us = sv.fdv_us,
      avail_pct = sv.avail_pct }
  end
  scenario.partial(res)
  local n = 0
  if plan.tests.config then for _, sv in ipairs(plan.services) do n = n + #logic.steps(sv, plan.overshoot) end end
  if plan.tests.performance then n = n + 1 end
  scenario.steps(n, "y1564")
  local function add(r)
    res.rows[#res.rows + 1] = r
    res.pass = res.pass and r.pass
    progress(r)
  end
  if plan.tests.config then
    scenario.progress("y1564: service configuration test, %g s per step", opts.step)
    for _, sv in ipairs(plan.services) do
      for _, st in ipairs(logic.steps(sv, plan.overshoot)) do
        local c, pps = class_of(sv, opts, st.rate_bps, opts.step)
        local t = s:trial{ classes = { c }, rate = pps, duration = opts.step, settle = opts.settle,
                           what = ("y1564 service '%s' step %s"):format(sv.name, st.step) }
        add(row(sv, st, t.classes[1], t, opts, plan))
        scenario.step()
      end
    end
  end
  if plan.tests.performance then
    scenario.progress("y1564: service performance test, every service at CIR for %g s", opts.duration)
    local classes, total = {}, 0
    for k, sv in ipairs(plan.services) do
      local pps
      classes[k], pps = class_of(sv, opts, sv.cir_bps, opts.duration)
      total = total + pps
    end
    local t = s:trial{ classes = classes, rate = total, duration = opts.duration, settle = opts.settle,
                       what = "the y1564 service performance test" }
    for k, sv in ipairs(plan.services) do
      add(row(sv, { step = "performance", kind = "perf", rate_bps = sv.cir_bps }, t.classes[k], t, opts, plan))
    end
    scenario.step()
  end
  return scenario.done(M.name, res)
end

function M.report(res)
  local us = scenario.us
  local rows = {}
  for _, r in ipairs(res.rows) do
    rows[#rows + 1] = { r.service, r.step, ("%.4g"):format(r.offered_bps / 1e6), ("%.4g"):format(r.ir_bps / 1e6),
      ("%.3f"):format(r.flr_pct), us(r.ftd_us and r.ftd_us.mean), us(r.ftd_us and r.ftd_us.min),
      us(r.ftd_us and r.ftd_us.max), us(r.fdv_us), r.avail_pct and ("%.1f"):format(r.avail_pct) or "-",
      r.pass and "PASS" or "FAIL", r.sender_limited and "surge" or "-" }
  end
  local text = ("y1564 results (%d-byte frames; IR counts frame bits with FCS): %s\n"):format(res.size,
    res.pass and "every step passed" or "some steps FAILED")
    .. scenario.table({ "service", "step", "offered_Mbps", "ir_Mbps", "flr_%", "ftd_avg_us", "ftd_min_us",
                        "ftd_max_us", "fdv_us", "avail_%", "verdict", "limited_by" }, rows)
  local fails = {}
  for _, r in ipairs(res.rows) do
    if not r.pass then fails[#fails + 1] = ("%s %s: %s"):format(r.service, r.step, r.why) end
  end
  if #fails > 0 then text = text .. "\nfailed: " .. table.concat(fails, "\nfailed: ") end
  return text .. scenario.notes(res.rows)
end

return M
