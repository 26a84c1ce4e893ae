-- scenario/http/tasks.lua - http's task side: one client engine per
-- offered rate on the tx port, driven by the kit's pump
-- (surge.launch("surge.scenario.http.tasks:run")); a row per rate.
local conn = require("surge.conn")
local frames = require("surge.dut.frames")
local json = require("surge.results.json")
local neigh_mod = require("surge.dut.neigh")
local pump = require("surge.scenario.kit.pump")
local scenario = require("surge.scenario")
local surge = require("surge")

local M = {}

-- one client engine's source ports (docs/connections.md)
M.MAX_CONNECTIONS = 64512
local MAX_CONNECTIONS = M.MAX_CONNECTIONS

local function pct(h, k) return h and h[k] or nil end

-- spec: rxq, txq, mac, opts, rates. Returns the rows.
function M.run(spec)
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

return M
