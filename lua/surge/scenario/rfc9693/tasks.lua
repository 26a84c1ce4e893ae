-- scenario/rfc9693/tasks.lua - rfc9693's task side: the one task that runs
-- every trial (surge.launch("surge.scenario.rfc9693.tasks:run")): a client
-- engine per trial on the tx port, the server on the rx port, both driven
-- by the kit's pump; the searches and verdicts are logic.lua's.
local clients = require("surge.scenario.kit.clients")
local conn = require("surge.conn")
local json = require("surge.results.json")
local kpump = require("surge.scenario.kit.pump")
local logic = require("surge.scenario.rfc9693.logic")
local neigh_mod = require("surge.dut.neigh")
local scenario = require("surge.scenario")
local surge = require("surge")

local M = {}

-- The task: everything from the first trial to the last ------------------

local function stats_diff(a, b)
  local d = {}
  for k, v in pairs(a) do d[k] = v - (b[k] or 0) end
  return d
end

-- Polls the client (if any) on the tx port and the server on the rx port,
-- answering ARP/NDP on both (st: the task's state, M.task; st.pump the
-- kit's one pump, its client entry set here), until until_tsc, or until
-- the client is done when stop_when_done. Returns whether the client
-- finished. Allocates nothing per round.
local function pump(st, client, until_tsc, stop_when_done)
  st.client.engine = client
  return kpump.run(st.pump, until_tsc, stop_when_done and client and function() return client:done() end or nil)
end

-- One client engine: o = { n, rate (0: unpaced), requests, think, retries,
-- limit (seconds the trial may take), body (optional: body(st, engine) ->
-- done, measured, run instead of polling until done or the limit) }; returns the client's counters, the
-- server's over the trial, the seconds from the first open to the last
-- close, and whether the client finished in time.
local function trial(st, o)
  if st.sport + o.n > 65536 then st.sport = 1024 end    -- a fresh range of source ports per trial, wrapping
  st.clients = st.clients + 1
  -- several sources (DHCP clients): the table spread over them evenly, a
  -- whole number of ports each, so the opens take every address in turn;
  -- fewer connections than sources: one each from the first n (ascending),
  -- a table of n, not of every source (64 bytes an entry, kept till the
  -- run's end: a trial's engine is not freed)
  local nsrc = type(st.src) == "table" and #st.src or 1
  local c = conn.client{ src = st.src, server = st.dst, port = st.port, sport = st.sport,
    capacity = o.n < nsrc and o.n or math.ceil(o.n / nsrc) * nsrc,
    concurrency = o.n, connections = o.n, rate = o.rate, requests = o.requests, think = o.think or 0,
    request = st.request, expect = { http = 200 }, close = "fin", mac = st.tx_mac, peer_mac = st.gw_mac,
    rto = st.rto, retries = o.retries or 1, time_wait = 0.2 }
  st.sport = st.sport + o.n
  local s0 = st.server:stats()
  local t0 = tonumber(surge.tsc())
  local done, measured
  if o.body then done, measured = o.body(st, c) else done = pump(st, c, t0 + o.limit * st.hz, true) end
  local t1 = tonumber(surge.tsc())
  if not done then c:abort(st.ifaces[1].txq, st.tx) end
  -- late segments: the last closes, a FIN sent again, the DUT's ARP
  pump(st, c, tonumber(surge.tsc()) + st.settle * st.hz, false)
  local cs = c:stats()
  cs.seconds = (t1 - t0) / st.hz
  return cs, stats_diff(st.server:stats(), s0), done, measured
end

local function row_of(test, value, unit, extra)
  local r = { test = logic.ROW[test], value = value, unit = unit }
  for k, v in pairs(extra or {}) do r[k] = v end
  return r
end

local function progress(...)
  scenario.progress(...)
end

local function run_capacity(st, res)
  local n, rate = st.o.max_connections, st.o.open_rate
  local hold = logic.hold(n, rate, st.rto, st.o.retries, 0.5)
  progress("capacity: %d connections opened at %g/s, each held %.2f s", n, rate, hold)
  local c, s, done = trial(st, { n = n, rate = rate, requests = 2, think = hold, retries = st.o.retries,
                                 limit = hold + n / rate + 10 })
  local v, why = logic.capacity(n, c)
  res.trials[#res.trials + 1] = { test = "capacity", connections = n, rate = rate, established = c.established,
    failed = c.failed, retransmits = c.retransmits, server_established = s.established, seconds = c.seconds }
  if not v or not done then
    why = why or "the trial did not end in time"
    progress("capacity: cannot tell: %s", why)
    res.ok = false
    res.rows[#res.rows + 1] = row_of("capacity", c.established, "connections", { offered = n, error = why })
    return
  end
  progress("capacity: %d of %d established and held (the server saw %d)%s", v.value, n, s.established,
    v.reached and "" or ": the DUT held every one offered, its capacity is that or more (raise --max-connections)")
  res.rows[#res.rows + 1] = row_of("capacity", v.value, "connections", { offered = n, reached = v.reached,
    server_established = s.established })
end

local function run_search(st, res, test)
  local o = st.o
  local hi, bounded = o.max_rate, false
  if test == "teardown-rate" then hi, bounded = logic.teardown_top(o.max_rate, st.setup) end
  local lo = math.min(o.min_rate, hi / 2)
  local teardown = test == "teardown-rate"
  if bounded then
    progress("teardown-rate: from the setup rate %.1f/s down (a trial opens at the rate it closes)", hi)
  end
  local found = logic.rate_search{ lo = lo, hi = hi, width = st.width, max_trials = o.max_trials,
    trial = function(rate)
      local n = logic.connections(rate, o.trial)
      -- teardown: opened at `rate`, held until every one is open, closed
      -- at `rate` (each one `hold` after its own open)
      local hold = teardown and (n / rate + 0.2) or 0
      local c, s, done = trial(st, { n = n, rate = rate, requests = teardown and 2 or 1, think = hold, retries = 1,
                                     limit = n / rate + hold + st.rto * 2 + 5 })
      local pass, why
      if teardown then pass, why = logic.teardown_pass(n, c, s) else pass, why = logic.setup_pass(n, c) end
      if pass and not done then pass, why = false, "not finished in time" end
      local k = #res.trials + 1
      res.trials[k] = { test = test, rate = rate, connections = n, pass = pass, why = why,
        established = c.established, completed = c.completed, failed = c.failed, retransmits = c.retransmits,
        server_completed = s.completed, seconds = c.seconds }
      progress("%s: trial at %9.1f/s  %6d connections  %6d established  %6d completed  %s", test, rate, n,
        c.established, c.completed, pass and "pass" or ("fail: " .. why))
      return pass
    end }
  if test == "setup-rate" then st.setup = found end
  local lo_b, hi_b = found.bracket[1], found.bracket[2]
  progress("%s: %.1f connections/s%s", test, found.rate,
    found.at_top and (" (the top: it passed at --max-rate%s)"):format(bounded and " (the setup rate)" or "")
    or (" (bracket %.1f..%.1f, %d trials%s)"):format(lo_b, hi_b or 0, #found.trials,
      found.converged and "" or ", not converged: --max-trials ran out"))
  res.rows[#res.rows + 1] = row_of(test, found.rate, "connections/s", { at_top = found.at_top,
    converged = found.converged, lower_bound = lo_b, upper_bound = hi_b, trials = #found.trials,
    bounded_by_setup_rate = teardown and bounded or nil })
end

-- Throughput with connections open: n connections, each sending its
-- requests back to back; the bytes of the responses received in a window
-- that starts a second after the last open.
local function run_throughput(st, res)
  local n, secs, rate = st.o.connections, st.o.throughput_time, st.o.open_rate
  progress("throughput: %d connections, requests back to back for %g s, %d-byte bodies", n, secs,
    st.o.response_size)
  local c, _, _, m = trial(st, { n = n, rate = rate, requests = 65535, retries = 5, body = function(_, e)
    pump(st, e, tonumber(surge.tsc()) + (n / rate + 1) * st.hz, false)
    local a = e:stats()
    local t0 = tonumber(surge.tsc())
    pump(st, e, t0 + secs * st.hz, false)
    local b = e:stats()
    return false, { a = a, b = b, seconds = (tonumber(surge.tsc()) - t0) / st.hz }
  end })
  local d = stats_diff(m.b, m.a)
  local bps = d.bytes_rcvd * 8 / m.seconds
  local failed = d.failed_timeout + d.failed_rst + d.failed_bad
  progress("throughput: %s of responses (%d bytes in %.2f s), %.1f requests/s, %d of %d connections "
    .. "open, %d failed", scenario.bits(bps), d.bytes_rcvd, m.seconds, d.responses / m.seconds, m.b.concurrent, n, failed)
  if m.a.established < n or failed > 0 then res.ok = false end
  res.trials[#res.trials + 1] = { test = "throughput", connections = n, rate = rate, established = c.established,
    failed = failed, retransmits = c.retransmits, seconds = m.seconds }
  res.rows[#res.rows + 1] = row_of("throughput", bps, "bit/s", { connections = n, established = c.established,
    requests_per_s = d.responses / m.seconds, bytes = d.bytes_rcvd, seconds = m.seconds, failed = failed,
    error = (m.a.established < n or failed > 0) and ("%d of %d connections open, %d failed while measured"):format(
      m.a.established, n, failed) or nil })
end

-- spec: ifaces (tx's, rx's), tx_mac, rx_mac, gw_mac, src, dst, opts, width, tests, clients
-- (kit/clients.lua's plan: the DHCP clients bound first, whose addresses
-- every trial's client engine opens from; nil: from src).
function M.run(spec)
  local o = spec.opts
  local t = surge.proto.tcp{ src = spec.src, dst = spec.dst, sport = 1024, dport = o.port, size = 74 }
  local pool = surge.pool{ template = t, data_room = conn.data_room(), size = 8191 }
  local ifaces = spec.ifaces
  local st = { o = o, ifaces = ifaces, src = spec.src, dst = spec.dst, port = o.port, tx_mac = spec.tx_mac,
    gw_mac = spec.gw_mac, rto = o.rto, settle = o.settle, width = spec.width, sport = 1024, clients = 0,
    hz = tonumber(surge.tsc_hz()), rx = pool:burst(64), tx = pool:burst(64),
    neigh = neigh_mod.new(ifaces, pool),
    request = conn.http_get{ host = spec.dst:find(":", 1, true) and "[" .. spec.dst .. "]" or spec.dst } }
  st.server = conn.server{ addr = spec.dst, port = o.port, mac = spec.rx_mac, capacity = 1048576,
    response = conn.http_response{ body = o.response_size }, rto = o.rto, time_wait = 0.2 }
  st.server:publish()
  st.client = { rxq = ifaces[1].rxq, txq = ifaces[1].txq, neigh = 1 }
  if spec.clients then   -- the table answers the DUT's ARP for its addresses (the pump's take)
    local a
    st.client.hosts, a = clients.bind(spec.clients, ifaces[1].rxq, ifaces[1].txq, pool, progress)
    st.src = a.ip
  end
  st.pump = kpump.new{ engines = { st.client, { engine = st.server, rxq = ifaces[2].rxq, txq = ifaces[2].txq, neigh = 2 } },
    neigh = st.neigh, rx = st.rx, tx = st.tx, tick = function() st.server:sync() end }
  local res = { rows = json.array(), trials = json.array(), ok = true }
  for _, test in ipairs(spec.tests) do
    if not surge.running() then break end
    if test == "capacity" then run_capacity(st, res)
    elseif test == "throughput" then run_throughput(st, res)
    else run_search(st, res, test) end
  end
  res.stopped = not surge.running() or nil
  res.server = st.server:stats()
  res.client_engines = st.clients
  res.clients = spec.clients and #st.src or nil
  return res
end

return M
