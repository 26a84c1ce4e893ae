-- scenario/rfc9693/init.lua - the scenario `rfc9693` (RFC 9693, benchmarking stateful
-- DUTs: firewalls, NATs, conntrack): surge's TCP client on the tx port,
-- surge's TCP server on the rx port, the DUT between them
-- (surge run rfc9693 --tx 0 --rx 1 --gateway A --rx-gateway B
--  --tests capacity,setup-rate,teardown-rate,throughput).
-- The decisions (the search, what passes) are logic.lua's; the trials run
-- in one task, tasks.lua (the task that made the connection engines polls
-- them: engines live on their lcore), which polls the client's port and
-- the server's, answering ARP/NDP on both; this file plans and reports.
local clients = require("surge.scenario.kit.clients")
local logic = require("surge.scenario.rfc9693.logic")
local dut = require("surge.dut")
local scenario = require("surge.scenario")

local M = { name = "rfc9693",
  description = "RFC 9693 stateful DUT: connection table capacity, setup and teardown rates, throughput" }

function M.options(p)
  scenario.dut_options(p)
  p:option("--tests", "comma-separated: " .. table.concat(logic.TESTS, ", "), table.concat(logic.TESTS, ","))
  p:option("--port", "the server's TCP port (on --dst)", 80, "integer 1..65535")
  p:option("--max-connections", "capacity: connections offered and held (the most that get through is the "
    .. "capacity)", 10000, "integer 1.." .. logic.MAX_CONNECTIONS)
  p:option("--open-rate", "capacity and throughput: connections opened per second", 2000, "number 1..10000000")
  p:option("--max-rate", "setup and teardown searches: the top rate, connections/s", 10000, "number 1..10000000")
  p:option("--min-rate", "setup and teardown searches: the bottom rate, connections/s", 10, "number 0.001..10000000")
  p:option("--width", "the searches stop when the bracket is narrower than this, relative (0.005 or 0.5%)", "0.5%")
  p:option("--trial", "seconds of connections a search trial opens", 1, "number 0.01..3600")
  p:option("--max-trials", "trials per search at most", 15, "integer 1..30")
  p:option("--connections", "throughput: connections open at once, each sending requests back to back", 16,
    "integer 1.." .. logic.MAX_CONNECTIONS)
  p:option("--throughput-time", "throughput: seconds measured", 2, "number 0.1..3600")
  p:option("--response-size", "bytes of the body of the server's HTTP response", 64, "integer 0..1000000")
  p:option("--rto", "retransmission timeout, seconds (a refused SYN is sent again this often)", 0.2,
    "number 0.001..60")
  p:option("--retries", "capacity: timeouts before a refused connection gives up", 2, "integer 1..255")
  p:option("--settle", "seconds between trials (late segments, closes, the DUT's timers)", 0.5, "number 0..3600")
  clients.options(p)
  scenario.parse_check(p, M.plan)
end

-- A ratio as given (the kit's one parser: a number, "0.005" or "0.5%"),
-- above 0 and below 1.
local function ratio(v, option)
  local n = scenario.kit.numbers.ratio(v)
  if not n then scenario.refuse(option, "'%s' is not a ratio (0.005 or 0.5%%)", tostring(v)) end
  if n <= 0 or n >= 1 then scenario.refuse(option, "%s must be above 0 and below 1 (100 %%)", tostring(v)) end
  return n
end

-- The server needs a port of its own: its engine takes every TCP segment
-- to its address from the port it polls.
function M.no_rx(o)
  scenario.refuse("--rx", "the server needs a port of its own: give --rx, another port than "
    .. "--tx %s", tostring(o.tx))
end

-- The options checked together, before any port (`surge run rfc9693`
-- refuses them before EAL, exit 2): returns the plan { tests, width,
-- clients (kit/clients.lua's, nil: from --src) }.
function M.plan(o)
  local known = {}
  for _, t in ipairs(logic.TESTS) do known[t] = true end
  local tests = scenario.items(o.tests, "--tests", { what = "test", unique = true, parse = function(w)
    if not known[w] then
      scenario.refuse("--tests", "'%s' is not a test (%s)", tostring(w), table.concat(logic.TESTS, ", "))
    end
    return w
  end })
  if #tests == 0 then scenario.refuse("--tests", "no test given (%s)", table.concat(logic.TESTS, ", ")) end
  local width = ratio(o.width, "--width")
  -- (an --rx left out is refused by run(): the defaults pass through here too)
  local rx = o.rx == nil and "" or tostring(o.rx)
  if rx == tostring(o.tx) then M.no_rx(o) end
  if (o.vlan or 0) ~= 0 then scenario.refuse("--vlan", "the connection engine sends untagged frames only") end
  local searches = false
  for _, t in ipairs(tests) do searches = searches or t == "setup-rate" or t == "teardown-rate" end
  if searches then
    if o.min_rate >= o.max_rate then
      scenario.refuse("--min-rate", "%g connections/s is not below --max-rate %g", o.min_rate, o.max_rate)
    end
    if o.max_rate * o.trial > logic.MAX_CONNECTIONS then
      scenario.refuse("--max-rate", "%g connections/s for %g s (--trial) is %d connections in a trial; one "
        .. "source address holds at most %d", o.max_rate, o.trial, logic.connections(o.max_rate, o.trial),
        logic.MAX_CONNECTIONS)
    end
  end
  local why = logic.check_engines(tests, o.max_trials)
  if why then scenario.refuse("--max-trials", "%s", why) end
  return { tests = tests, width = width, clients = clients.plan(o, scenario.refuse) }
end


function M.run(opts)
  opts = scenario.defaults(M.name, M, opts)
  local plan = M.plan(opts)
  if opts.rx == nil or opts.rx == "" then M.no_rx(opts) end
  local s = scenario.session(opts)
  local mac = s:resolve()
  scenario.progress("rfc9693: client %s on port %d -> server %s:%d on port %d, %s%s", plan.clients and
    ("(%d DHCP clients on %s)"):format(plan.clients.count, plan.clients.subnet) or s.src, s.tx.id, s.dst,
    opts.port, s.rx.id, s:next_hop(),
    s.rx_gateway_mac and (" (rx side: %s at %s)"):format(s.rx_gateway, s.rx_gateway_mac) or "")
  local r = dut.task("surge.scenario.rfc9693.tasks:run", { ifaces = s.ifaces, tx_mac = s.tx_info.mac,
    rx_mac = s.rx_info.mac, gw_mac = mac, src = s.src, dst = s.dst, opts = scenario.plain(opts), width = plan.width,
    tests = plan.tests, clients = plan.clients })
  if r == nil then error("rfc9693: the trials' task ended without results", 0) end
  local results = { scenario = "rfc9693", tx = s.tx.id, rx = s.rx.id, src = s.src, dst = s.dst, port = opts.port,
    dst_mac = mac, tests = plan.tests, rows = r.rows, trials = r.trials, ok = r.ok,
    client_engines = r.client_engines, clients_dhcp = r.clients }
  return scenario.done(M.name, results, r.stopped)
end

function M.report(res)
  local rows = {}
  for _, r in ipairs(res.rows) do
    local note = r.error or (r.reached == false and "not reached: the DUT held all offered")
      or (r.at_top and "the top of the search passed") or (r.converged == false and "not converged") or ""
    rows[#rows + 1] = { r.test, r.value, r.unit, note }
  end
  return ("rfc9693 results (%d trials)\n"):format(#res.trials)
    .. scenario.table({ "test", "value", "unit", "note" }, rows)
end

return M
