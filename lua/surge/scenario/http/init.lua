-- scenario/http/init.lua - the scenario `http`: HTTP/1.1 load against a real server from
-- surge's connection engine (docs/connections.md), one trial per offered
-- connection rate: the connections/s, requests/s and response-time
-- percentiles the server gave at each
-- (surge run http --tx 0 --src 10.1.0.2 --server 10.1.0.1 --rates 500,1000,2000).
-- Every trial runs in one task, tasks.lua (engines live on the lcore that
-- polls them); this file plans the rates and reports.
local frames = require("surge.dut.frames")
local dut = require("surge.dut")
local scenario = require("surge.scenario")
local surge = require("surge")
local tasks = require("surge.scenario.http.tasks")

local M = { name = "http",
  description = "HTTP/1.1 load on new TCP connections against a server: CPS, requests/s, response times per rate" }

local MAX_CONNECTIONS = tasks.MAX_CONNECTIONS   -- one client engine's source ports (docs/connections.md)

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


function M.run(opts)
  opts = scenario.defaults(M.name, M, opts)
  local rates = M.plan(opts)
  local id = scenario.port_exists(scenario.port_number(opts.tx, "--tx"), "--tx")
  local port = surge.port(id, { rxq = 1, txq = 1 })
  local r = dut.task("surge.scenario.http.tasks:run", { rxq = port:rxq(0), txq = port:txq(0), mac = port:info().mac,
    opts = scenario.plain(opts), rates = rates })
  local results = { scenario = "http", tx = id, src = opts.src, server = opts.server, port = opts.port,
    requests_per_connection = opts.requests, next_hop_mac = r.next_hop_mac, rows = r.rows,
    plot = { title = "HTTP load", x = "offered_cps", y = { "cps", "requests_per_s" }, xlabel = "offered connections/s",
             ylabel = "per second" } }
  return scenario.done(M.name, results, r.stopped)
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
