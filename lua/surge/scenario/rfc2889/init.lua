-- scenario/rfc2889/init.lua - the scenario `rfc2889`: RFC 2889 LAN switch benchmarks on
-- three or more ports (surge run rfc2889 --ports 0,1,2 --tests caching,...).
-- The procedures, searches and verdicts are logic.lua's (free of
-- packets); here they get a `send` that runs surge.dut.l2 trials on the
-- ports, and the results become rows (docs/results.md).
local surge = require("surge")
local logic = require("surge.scenario.rfc2889.logic")
local fmt_rate = require("surge.rate").format_pps
local dut = require("surge.dut")
local json = require("surge.results.json")
local scenario = require("surge.scenario")

local M = { name = "rfc2889",
  description = "RFC 2889 switch benchmarks: forwarding, address caching and learning, broadcast, congestion, "
    .. "forward pressure" }

function M.options(p)
  p:option("--ports", "the switch's ports surge sits on, comma-separated (3 or more for caching and learning, "
    .. "4 for congestion)", "0,1,2")
  p:option("--tests", "which tests: " .. logic.NAMES .. " (default: every test the ports allow)", "")
  p:option("--sizes", "frame sizes with FCS, comma-separated", "64")
  p:option("--rate", "offered load per sending port (pps, 1mpps, 1gbit, or % of line rate)", "100%")
  p:option("--min-rate", "forwarding: bottom of the throughput search (default: --rate / 100)", "")
  p:option("--trial", "seconds of each forwarding, broadcast, congestion and pressure trial", 1, "number >0")
  p:option("--settle", "seconds to keep receiving after each send before counting", 0.5, "number 0..3600")
  p:option("--resolution", "forwarding and learning searches stop when the bracket is narrower than this, % of "
    .. "the top", 1, "number 0..100")
  p:option("--max-trials", "trials per search at most", 20, "integer 2..1000")
  p:option("--pattern", "forwarding: full (every port to every other, 5.1), partial (the halves to each other, "
    .. "5.3) or unidirectional (first half to second half, 5.4)", "full")
  p:option("--macs", "forwarding: source and destination addresses per port (MAC ranges as flows)", 1,
    "integer 1..65536")
  p:option("--min-addresses", "caching: bottom of the address search", 1, "integer 1..16000000")
  p:option("--max-addresses", "caching: top of the address search", 4096, "integer 1..16000000")
  p:option("--learn-rate", "caching: rate of the learning frames and of the test frames", "1000pps")
  p:option("--learning-addresses", "learning: addresses per trial (default: the caching capacity found in this "
    .. "run less the test port's, else 1000)", 0, "integer 0..16000000")
  p:option("--learning-max-rate", "learning: top of the learning rate search", "10kpps")
  p:option("--learning-min-rate", "learning: bottom of the learning rate search (default: top / 100)", "")
  p:option("--age", "caching and learning: seconds to wait before each trial (the DUT's ageing time; 0: fresh "
    .. "addresses per trial instead)", 0, "number 0..3600")
  p:option("--link-timeout", "seconds to wait for link up", 2, "number 0..3600")
  -- what needs no port is refused when parsed (before EAL for `surge run rfc2889`)
  scenario.parse_check(p, M.plan)
end

-- The options that need no port, checked: { ports = { ids }, tests = {
-- names in run order }, sizes, pattern }. Raises through scenario.refuse.
function M.plan(o)
  local ports = scenario.items(o.ports, "--ports", { what = "port", unique = true, expected = "ports like \"0,1,2\"",
    parse = function(w)
      local n = scenario.finite(w)
      if n == nil or n ~= math.floor(n) or n < 0 or n > 65535 then
        scenario.refuse("--ports", "%s is not a port number", type(w) == "string" and "'" .. w .. "'" or tostring(w))
      end
      return n
    end })
  if #ports < 2 then
    scenario.refuse("--ports", "%d port%s given: RFC 2889 tests need 2 or more (3 for caching and learning, 4 "
      .. "for congestion)", #ports, #ports == 1 and "" or "s")
  end
  local want = {}
  local given = scenario.items(o.tests, "--tests", { what = "test", unique = true, expected = "tests like "
    .. "\"caching,learning\"", parse = function(w)
      if not logic.BY_NAME[w] then scenario.refuse("--tests", "unknown test '%s' (%s)", tostring(w), logic.NAMES) end
      return w
    end })
  for _, w in ipairs(given) do want[w] = true end
  local tests = {}
  for _, t in ipairs(logic.TESTS) do
    if want[t.name] or (#given == 0 and #ports >= t.ports) then tests[#tests + 1] = t.name end
  end
  local short, need = logic.ports_short(tests, #ports)
  if short then
    scenario.refuse("--ports", "test '%s' needs %d ports, %d given (%s)", short, need, #ports, tostring(o.ports))
  end
  if not logic.PATTERNS[o.pattern] then
    scenario.refuse("--pattern", "unknown pattern '%s' (full, partial, unidirectional)", tostring(o.pattern))
  end
  if o.min_addresses > o.max_addresses then
    scenario.refuse("--min-addresses", "%d is above --max-addresses %d", o.min_addresses, o.max_addresses)
  end
  local sizes = scenario.sizes(o.sizes)
  for _, s in ipairs(sizes) do
    if s < 64 then scenario.refuse("--sizes", "%d is below 64, the smallest Ethernet frame (RFC 2889 sizes: 64 to "
      .. "1518)", s) end
  end
  return { ports = ports, tests = tests, sizes = sizes }
end

local rx_pool
local pools = {}            -- frame size -> pool (pools cannot be freed: one per size for the run)
local TAG_OFF = 42          -- Ethernet, IPv4 and UDP headers: the tag (surge.dut.l2) follows

local function pool_for(size)
  if not pools[size] then
    local t = surge.proto.udp{ src_mac = "02:89:00:00:00:00", dst_mac = "02:89:00:00:00:01", src = "198.18.0.1",
                               dst = "198.18.0.2", sport = 2889, dport = 2889, size = size - 4, ttl = 64 }
    pools[size] = surge.pool{ template = t, size = 4095 }
  end
  return pools[size]
end

-- One flat row per test and frame size (docs/results.md).
local function flat_rows(res)
  res.rows = json.array()
  for _, r in ipairs(res.results) do
    local row = {}
    for k, v in pairs(r) do
      if type(v) ~= "table" then row[k] = v end
    end
    res.rows[#res.rows + 1] = row
  end
end

function M.run(opts)
  opts = scenario.defaults(M.name, M, opts)
  local plan = M.plan(opts)
  local ports, ifaces, line = {}, {}, nil
  for i, id in ipairs(plan.ports) do
    scenario.port_exists(id, "--ports")
    ports[i] = dut.open_port(id, opts.link_timeout)
    ifaces[i] = { rxq = ports[i]:rxq(0), txq = ports[i]:txq(0) }
    local mbps = ports[i]:info().speed_mbps or 0
    line = (line == nil or mbps < line) and mbps or line
  end
  local function line_pps(size) return (line or 0) > 0 and scenario.l1_pps(line * 1e6, size) or 0 end
  -- every rate checked before any traffic
  local rates = {}
  for _, size in ipairs(plan.sizes) do
    local mtu = ports[1]:info().mtu
    for _, p in ipairs(ports) do mtu = math.min(mtu, p:info().mtu) end
    if size > mtu + 18 then
      scenario.refuse("--sizes", "%d is above the MTU: the ports take frames up to %d bytes", size, mtu + 18)
    end
    local lp = line_pps(size)
    local r = { line = lp, rate = scenario.pps(opts.rate, size, lp, "--rate"),
                learn = scenario.pps(opts.learn_rate, size, lp, "--learn-rate"),
                lmax = scenario.pps(opts.learning_max_rate, size, lp, "--learning-max-rate") }
    r.min = opts.min_rate ~= "" and scenario.pps(opts.min_rate, size, lp, "--min-rate") or r.rate / 100
    r.lmin = opts.learning_min_rate ~= "" and scenario.pps(opts.learning_min_rate, size, lp, "--learning-min-rate")
      or r.lmax / 100
    if r.min > r.rate then
      scenario.refuse("--min-rate", "%s is above --rate %s", tostring(opts.min_rate), tostring(opts.rate))
    end
    if r.lmin > r.lmax then
      scenario.refuse("--learning-min-rate", "%s is above --learning-max-rate %s", tostring(opts.learning_min_rate),
        tostring(opts.learning_max_rate))
    end
    scenario.check_frames(r.min / 2, opts.trial, ("%d bytes, the forwarding search's bottom per stream"):format(size),
      "--trial")
    rates[size] = r
  end
  if not rx_pool then rx_pool = surge.pool{ size = 1023 } end
  local results = { scenario = M.name, ports = plan.ports, tests = plan.tests, results = json.array() }
  scenario.partial(results, flat_rows)
  scenario.progress("rfc2889: ports %s, tests %s", table.concat(plan.ports, ","), table.concat(plan.tests, ","))
  -- every frame the trials sent and received, on every port (test frames and
  -- others): what the switch's own counters can be held against
  local trials, frames_sent, frames_received, frames_other = 0, 0, 0, 0
  local function send_for(size)
    return function(streams, settle)
      local spec = {}
      for k, s in ipairs(streams) do
        spec[k] = { tx = s.tx, pool = pool_for(size), off = TAG_OFF, src_hi = s.src.hi, src_lo = s.src.lo,
                    src_n = s.src.n or 1, dst_hi = s.dst.hi, dst_lo = s.dst.lo, dst_n = s.dst.n or 1,
                    count = s.count, rate = s.rate, whole = s.whole }
      end
      trials = trials + 1
      local r = dut.task("surge.dut.l2:run", { ifaces = ifaces, ctrl_pool = rx_pool, streams = spec,
        off = TAG_OFF, settle = settle })
      if not surge.running() then error(dut.STOPPED_DURING .. "an rfc2889 trial", 0) end
      for _, st in ipairs(r.streams) do
        frames_sent = frames_sent + st.sent
        for _, n_ in ipairs(st.rx) do frames_received = frames_received + n_ end
      end
      for _, n_ in ipairs(r.other) do frames_received, frames_other = frames_received + n_, frames_other + n_ end
      return r
    end
  end
  local fresh = logic.allocator(tonumber(surge.tsc()) % 4294967296)   -- apart from an earlier run's
  local function aged(n_)
    if opts.age > 0 then surge.sleep(opts.age) end
    return fresh(n_)
  end
  local capacity
  scenario.steps(#plan.tests * #plan.sizes, "rfc2889")
  for _, name in ipairs(plan.tests) do
    for _, size in ipairs(plan.sizes) do
      local r = rates[size]
      local o = { send = send_for(size), settle = opts.settle, nports = #ports, duration = opts.trial,
                  rate = r.rate, line_pps = r.line, learn_rate = r.learn, fresh = aged,
                  ports = { learning = 1, test = 2 }, test_rate = r.learn, max_trials = opts.max_trials }
      local row = { test = logic.BY_NAME[name].row, frame_size = size }
      if name == "forwarding" then
        o.pattern, o.macs, o.min_rate, o.resolution = opts.pattern, opts.macs, r.min, r.rate * opts.resolution / 100
        o.progress = function(_, rate, pass, a)
          scenario.progress("  %5d B  forwarding  %s per port  sent %d  received %d  lost %d  misdirected %d  %s%s",
            size, fmt_rate(rate), a.sent, a.received, a.lost, a.misdirected, pass and "pass" or "fail",
            a.sender_limited and ("  (surge sent only %d of %d frames: surge's limit, not the switch's)"):format(
              a.sent, a.planned) or "")
        end
        local f = logic.forwarding(o)
        row.pattern, row.ports, row.offered_pps, row.forwarding_rate_fps = f.pattern, #ports, f.offered_pps,
          f.forwarding_rate_fps
        row.throughput_pps, row.throughput_fps, row.at_top = f.throughput_pps, f.throughput_fps, f.at_top
        row.lost_at_max, row.misdirected_at_max, row.macs = f.at_max.lost, f.at_max.misdirected, opts.macs
        row.sender_limited = f.sender_limited or nil
        row.trials = f.trials
      elseif name == "caching" then
        o.lo, o.hi = opts.min_addresses, opts.max_addresses
        o.progress = function(_, n_, pass, e)
          scenario.progress("  %5d B  caching  %d addresses  test frames %d  received %d  flooded %d  lost %d  %s%s%s",
            size, n_, e.sent, e.received, e.flooded, e.lost, pass and "pass" or "fail", e.sender_limited and
            ("  (surge sent only %d learning and %d test frames: surge's shortfall, not the switch's)"):format(
              e.learning_sent, e.sent) or "",
            e.not_the_table and ("  (not its table filling: the switch held %d addresses in another trial; %s)")
              :format(e.held_before, e.try <= (o.retries or 2) and "trying again" or "failed every try") or "")
        end
        local c = logic.caching(o)
        capacity = c.learned_addresses
        row.capacity, row.learned_addresses, row.at_top, row.converged = c.capacity, c.learned_addresses, c.at_top,
          c.converged
        row.learn_rate_fps, row.trials, row.sender_limited = r.learn, c.trials, c.sender_limited or nil
        row.held_addresses, row.retried, row.unexplained_failures = c.held_addresses, c.retried, #c.unexplained
        if #c.unexplained > 0 then
          local u = c.unexplained[1]
          row.warning = ("%d address count(s) failed in every try although the switch held more addresses in another "
            .. "trial (%d failed, %d held): frames lost or flooded for another reason than a full table; the capacity "
            .. "may be below the switch's"):format(#c.unexplained, u.addresses, u.held)
          scenario.progress("  %5d B  caching: warning: %s", size, row.warning)
        end
      elseif name == "learning" then
        o.addresses = opts.learning_addresses > 0 and opts.learning_addresses or capacity or 1000
        o.lo, o.hi, o.resolution = r.lmin, r.lmax, r.lmax * opts.resolution / 100
        o.progress = function(_, rate, pass, e)
          scenario.progress("  %5d B  learning  %d addresses at %s  test frames %d  received %d  flooded %d  %s%s",
            size, e.addresses, fmt_rate(rate), e.sent, e.received, e.flooded, pass and "pass" or "fail",
            e.sender_limited and ("  (surge sent only %d learning and %d test frames: surge's shortfall, not the "
              .. "switch's)"):format(e.learning_sent, e.sent) or "")
        end
        local l = logic.learning(o)
        row.learning_rate_fps, row.addresses, row.at_top, row.converged, row.trials = l.learning_rate_fps,
          o.addresses, l.at_top, l.converged, l.trials
        row.sender_limited = l.sender_limited or nil
      elseif name == "broadcast" then
        local b = logic.broadcast(o)
        for k, v in pairs(b) do row[k] = v end
        scenario.progress("  %5d B  broadcast  %s  sent %d  received %d on %d ports  lost %d", size,
          fmt_rate(r.rate), b.sent, b.received, b.receivers, b.lost)
      elseif name == "congestion" then
        local c = logic.congestion(o)
        for k, v in pairs(c) do row[k] = v end
        scenario.progress("  %5d B  congestion  %s  congested port lost %d  uncongested lost %d  %s%s", size,
          fmt_rate(r.rate), c.congested_lost, c.uncongested_lost,
          c.hol_blocking == nil and "head-of-line blocking unknown" or c.hol_blocking and "head-of-line blocking"
            or "no head-of-line blocking",
          c.sender_limited and ("  (surge sent only %d of %d frames: surge's limit, not the switch's)"):format(
            c.sent, c.planned) or "")
      elseif name == "pressure" then
        o.progress = function(_, rate, _, st)
          scenario.progress("  %5d B  pressure  offered %s%s  forwarded %s  lost %d", size, fmt_rate(st.offered_pps),
            rate and "" or " (unpaced)", fmt_rate(st.forwarding_rate_fps), st.lost)
        end
        local p = logic.pressure(o)
        for k, v in pairs(p) do row[k] = v end
      end
      results.results[#results.results + 1] = row
      scenario.step()
    end
  end
  results.trials, results.frames_sent, results.frames_received = trials, frames_sent, frames_received
  results.frames_other = frames_other
  flat_rows(results)
  return scenario.done(M.name, results)
end

local function cell(v, fmt)
  if v == nil then return "-" end
  if type(v) == "boolean" then return v and "yes" or "no" end
  return fmt and fmt:format(v) or v
end

function M.report(res)
  local rows = {}
  for _, r in ipairs(res.rows or {}) do
    local figure
    if r.test == "forwarding" then
      figure = ("forwarding rate %s at %s per port, throughput %s per port (%s)"):format(
        fmt_rate(r.forwarding_rate_fps or 0), fmt_rate(r.offered_pps or 0), r.throughput_pps and
        fmt_rate(r.throughput_pps) or "none", r.pattern)
    elseif r.test == "address_caching" then
      figure = ("capacity %s addresses (%s learned + the test port's)%s%s"):format(cell(r.capacity),
        cell(r.learned_addresses), r.at_top and " or more: --max-addresses passed" or "",
        r.warning and " (warning: " .. r.warning .. ")" or "")
    elseif r.test == "address_learning" then
      figure = ("learning rate %s for %d addresses%s"):format(r.learning_rate_fps and
        fmt_rate(r.learning_rate_fps) or "none", r.addresses, r.at_top and " or more: the top passed" or "")
    elseif r.test == "broadcast" then
      figure = ("forwarding rate %s (%d ports), latency avg %s us, max %s us, lost %d"):format(
        fmt_rate(r.forwarding_rate_fps), r.receivers, scenario.us(r.latency_avg_us), scenario.us(r.latency_max_us),
        r.lost)
    elseif r.test == "congestion_control" then
      figure = ("head-of-line blocking %s, back pressure %s (congested port loss %.3f %%, uncongested %.3f %%)")
        :format(r.hol_blocking == nil and "unknown" or cell(r.hol_blocking),
          r.back_pressure == nil and "unknown" or cell(r.back_pressure),
          r.congested_loss_pct, r.uncongested_loss_pct)
    elseif r.test == "forward_pressure" then
      figure = ("max forwarding rate %s, forward pressure %s"):format(fmt_rate(r.max_forwarding_rate_fps),
        r.forward_pressure == nil and "unknown (no line rate)" or cell(r.forward_pressure))
    end
    rows[#rows + 1] = { r.test, r.frame_size, figure }
  end
  return ("rfc2889 results (%d trials)\n"):format(res.trials or 0)
    .. scenario.table({ "test", "size", "result" }, rows) .. scenario.notes(res.rows or {})
end

return M
