-- http.lua - the scenario `http`: HTTP/1.1 load against a real server from
-- surge's connection engine (docs/connections.md), one trial per offered
-- connection rate: the connections/s, requests/s and response-time
-- percentiles the server gave at each
-- (surge run http --tx 0 --src 10.1.0.2 --server 10.1.0.1 --rates 500,1000,2000).
-- Every trial runs in one task (engines live on the lcore that polls them).
local frames = require "surge.dut.frames"
local pump = require "surge.scenario.kit.pump"
local conn = require "surge.conn"
local dut = require "surge.dut"
local json = require "surge.results.json"
local neigh_mod = require "surge.dut.neigh"
local scenario = require "surge.scenario"
local surge = require "surge"

local M = { name = "http",
  description = "HTTP/1.1 load on new TCP connections against a server: CPS, requests/s, response times per rate" }

local MAX_CONNECTIONS = 64512   -- one client engine's source ports (docs/connections.md)

function M.options(p)
  p:option("--tx", "the port surge's client sends from (number)", "0")
  p:option("--src", "surge's address (IPv4 or IPv6)", "10.1.0.2")
  p:option("--server", "the server's address (of --src's family)", "10.1.0.1")
  p:option("--port", "the server's TCP port", 80, "integer 1..65535")
  p:option("--gateway", "next hop to the server (default: the server, on the link)", "")
  p:option("--rates", "offered connection rates, connections/s, comma-separated", "500,1000")
  p:option("--trial", "seconds of connections opened at each rate", 1, "number 0.01..3600")
  p:option("--requests", "GETs per connection (HTTP/1.1 keep-alive)", 1, "integer 1..65535")
  p:option("--concurrency", "most connections open at once", 4096, "integer 1.." .. MAX_CONNECTIONS)
  p:option("--path", "the path requested", "/")
  p:option("--status", "the status every response must have (0: any)", 200, "integer 0..999")
  p:option("--rto", "retransmission timeout, seconds (fixed)", 0.2, "number 0.001..60")
  p:option("--settle", "seconds between rates (the last closes, the server's timers)", 0.3, "number 0..3600")
  p:option("--resolve-timeout", "seconds to wait for the ARP/NDP reply", 2, "number 0..3600")
  scenario.parse_check(p, M.plan)
end

local function addr_problem(a, option, v6)
  local six = a:find(":", 1, true) ~= nil
  local ok = six and pcall(surge.proto.ip6.addr, a, option, 1) or
             (not six and a:match("^%d+%.%d+%.%d+%.%d+$") and pcall(surge.proto.ip4.addr, a, option, 1))
  if not ok then return ("'%s' is not an IPv4 or IPv6 address"):format(a) end
  if six ~= v6 then return ("%s is not of the family of --src"):format(a) end
  return nil
end

-- The options checked together, before any port: returns the rates.
function M.plan(o)
  local v6 = o.src:find(":", 1, true) ~= nil
  for _, k in ipairs({ "src", "server", "gateway" }) do
    if o[k] ~= "" then
      local why = addr_problem(o[k], "--" .. k, v6)
      if why then scenario.refuse("--" .. k, "%s", why) end
    end
  end
  if o.path:sub(1, 1) ~= "/" or o.path:find("[%s%c]") then
    scenario.refuse("--path", "'%s' starts with / and holds no spaces", o.path)
  end
  local rates = scenario.items(o.rates, "--rates", { what = "rate", unique = true, parse = function(w)
    local n = scenario.finite(w)
    if not n or n <= 0 or n ~= n or n == math.huge then
      scenario.refuse("--rates", "'%s' is not a rate above 0 (connections/s)", tostring(w))
    end
    return n
  end })
  if #rates == 0 then scenario.refuse("--rates", "no rate given (e.g. 500,1000)") end
  if #rates > 60 then scenario.refuse("--rates", "%d rates: a run has 64 connection engines, one per rate", #rates) end
  for _, r in ipairs(rates) do
    local n = frames.planned(r, o.trial, 0)
    if n < 1 then
      scenario.refuse("--rates", "%g connections/s for %g s (--trial) is no connection: give a higher rate or a "
        .. "longer trial", r, o.trial)
    end
    if n > MAX_CONNECTIONS then
      scenario.refuse("--rates", "%g connections/s for %g s (--trial) is %d connections; one source address holds "
        .. "at most %d", r, o.trial, n, MAX_CONNECTIONS)
    end
  end
  return rates
end

local function pct(h, k) return h and h[k] or nil end

-- spec: rxq, txq, mac, opts, rates. Returns the rows.
function M.task(spec)
  local o = spec.opts
  local v6 = o.src:find(":", 1, true) ~= nil
  local t = surge.proto.tcp{ src = o.src, dst = o.server, sport = 1024, dport = o.port, size = 74 }
  local pool = surge.pool{ template = t, data_room = conn.data_room(), size = 8191 }
  local rxq, txq = spec.rxq, spec.txq
  local neigh = neigh_mod.new({ { rxq = rxq, txq = txq, mac = spec.mac, ip4 = not v6 and o.src or nil,
                                  ip6 = v6 and o.src or nil } }, pool):set_rx_burst(pool:burst(32))
  local hop = o.gateway ~= "" and o.gateway or o.server
  local peer_mac, err = neigh:resolve(1, hop, o.resolve_timeout)
  if not peer_mac then
    if not surge.running() then return { rows = json.array(), stopped = true } end
    error(err, 0)
  end
  scenario.progress("http: client %s on port %d -> %s:%d via %s (%s)", o.src, rxq.port, o.server, o.port, hop,
    peer_mac)
  local request = conn.http_get{ host = v6 and "[" .. o.server .. "]" or o.server, path = o.path }
  local tx = pool:burst(64)
  local hz = tonumber(surge.tsc_hz())
  local rows = json.array()
  local sport = 1024
  local client = { rxq = rxq, txq = txq, neigh = 1 }
  local p = pump.new{ engines = { client }, neigh = neigh, rx = pool:burst(64), tx = tx }
  for _, rate in ipairs(spec.rates) do
    if not surge.running() then break end
    local n = frames.planned(rate, o.trial, 0)
    local cap = math.min(MAX_CONNECTIONS, n)
    if sport + cap > 65536 then sport = 1024 end
    local e = conn.client{ src = o.src, server = o.server, port = o.port, sport = sport, capacity = cap,
      concurrency = math.min(o.concurrency, cap), connections = n, rate = rate, requests = o.requests,
      request = request, expect = { http = o.status }, close = "fin", mac = spec.mac, peer_mac = peer_mac,
      rto = o.rto }
    sport = sport + cap
    client.engine = e
    local t0 = tonumber(surge.tsc())
    local done = pump.run(p, t0 + (n / rate + 15) * hz, function() return e:done() end)
    local secs = (tonumber(surge.tsc()) - t0) / hz
    if not done then e:abort(txq, tx) end
    pump.run(p, tonumber(surge.tsc()) + o.settle * hz)
    local s = e:summary(secs)
    local c, r = s.connect_us, s.response_us
    local row = { offered_cps = rate, connections = n, attempted = s.attempted, established = s.established,
      completed = s.completed, failed = s.failed, failed_timeout = s.failed_timeout, failed_rst = s.failed_rst,
      failed_bad = s.failed_bad, requests = s.requests, responses = s.responses, retransmits = s.retransmits,
      seconds = secs, cps = s.cps, requests_per_s = s.requests_per_s,
      connect_p50_us = pct(c, "p50"), connect_p99_us = pct(c, "p99"),
      response_p50_us = pct(r, "p50"), response_p90_us = pct(r, "p90"), response_p99_us = pct(r, "p99"),
      response_p999_us = pct(r, "p999"), response_max_us = pct(r, "max"), finished = done }
    rows[#rows + 1] = row
    scenario.progress("http: %8.1f/s offered  %6d connections  %6d completed  %d failed  %8.1f conn/s  %8.1f req/s"
      .. "  response p50 %s p99 %s us", rate, n, s.completed, s.failed, s.cps or 0, s.requests_per_s or 0,
      scenario.cell(r and r.p50, "%.0f"), scenario.cell(r and r.p99, "%.0f"))
  end
  return { rows = rows, stopped = not surge.running() or nil, next_hop_mac = peer_mac }
end

function M.run(opts)
  opts = scenario.defaults(M.name, M, opts)
  local rates = M.plan(opts)
  local id = scenario.port_exists(scenario.port_number(opts.tx, "--tx"), "--tx")
  local port = surge.port(id, { rxq = 1, txq = 1 })
  local o = {}
  for k, v in pairs(opts) do if type(v) ~= "table" then o[k] = v end end
  local tid = surge.launch("surge.scenario.http:task", { rxq = port:rxq(0), txq = port:txq(0), mac = port:info().mac,
    opts = o, rates = rates })
  local ok, r = pcall(surge.wait, tid)
  if not ok then error(dut.reason(r), 0) end
  local results = { scenario = "http", tx = id, src = opts.src, server = opts.server, port = opts.port,
    requests_per_connection = opts.requests, next_hop_mac = r.next_hop_mac, rows = r.rows,
    plot = { title = "HTTP load", x = "offered_cps", y = { "cps", "requests_per_s" }, xlabel = "offered connections/s",
             ylabel = "per second" } }
  if r.stopped then scenario.mark_partial(results, "the run stopped") end
  return scenario.done(M.name, results)
end

function M.report(res)
  local rows = {}
  for _, r in ipairs(res.rows) do
    rows[#rows + 1] = { r.offered_cps, r.completed, r.failed, r.cps, r.requests_per_s, r.connect_p50_us,
      r.response_p50_us, r.response_p90_us, r.response_p99_us, r.response_max_us }
  end
  return "http results (connections/s, requests/s, response times in us)\n"
    .. scenario.table({ "offered_cps", "completed", "failed", "cps", "req_per_s", "connect_p50", "resp_p50",
                        "resp_p90", "resp_p99", "resp_max" }, rows)
end

return M
