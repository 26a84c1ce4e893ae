-- surge otg's split of a config over hosts (otg/remote.lua, docs/otg.md
-- "Ports on other hosts"), without SSH: every host's flows at their indexes
-- in the whole config (a flow's tag the same everywhere), rx-only entries
-- and fillers marked in x_surge_part, a flow sent here to other hosts
-- counted on no port here, and the refusals by path.
local json = require("surge.results.json")
local remote = require("surge.otg.remote")

local T = {}

local H = "root@lab2:2222"

local function flow(name, tx, rx, extra)
  local f = { name = name, tx_rx = { choice = "port", port = { tx_name = tx, rx_names = json.array(rx) } },
              metrics = { enable = true } }
  for k, v in pairs(extra or {}) do f[k] = v end
  return f
end

-- the decoded config: p1 here, p2 on H
local function body(flows)
  return json.decode(json.encode({ ports = json.array({ { name = "p1", location = "net_ring0" },
                                                        { name = "p2", location = H .. "/net_ring1" } }),
                                   flows = json.array(flows) }), 64)
end

local function ports_of(f) return f.tx_rx.port.tx_name .. ">" .. table.concat(f.tx_rx.port.rx_names, ",") end

local function has(text, needle)
  assert(text:find(needle, 1, true), ("no '%s' in:\n%s"):format(needle, text))
end

local function refusal(b)
  local ok, e = pcall(remote.split, b)
  assert(not ok and type(e) == "table" and e.status == 400, "accepted")
  return table.concat(e.errors, "\n")
end

function T.flows_at_their_indexes_on_every_host()
  local mine, p = remote.split(body({
    flow("fx", "p1", { "p2" }),          -- 0: across, sent here
    flow("fa", "p1", { "p1" }),          -- 1: here only
    flow("fb", "p2", { "p2" }),          -- 2: there only
    flow("fy", "p2", { "p1" }),          -- 3: across, sent there
    flow("fall", "p1", {}) }))           -- 4: every port of every host
  local here = {}
  for i, f in ipairs(mine.flows) do here[i] = f.name .. " " .. ports_of(f) end
  assert(table.concat(here, "; ") == "fx p1>p1; fa p1>p1; fb p1>p1; fy p1>p1; fall p1>",
    table.concat(here, "; "))
  assert(mine.flows[3].metrics == nil, "a filler measures nothing")
  assert(table.concat(p.part.rx_only, ",") == "2,3" and table.concat(p.part.no_rx, ",") == "0",
    json.encode(p.part))
  local x = p.split.hosts[H].body
  local there = {}
  for i, f in ipairs(x.flows) do there[i] = f.name .. " " .. ports_of(f) end
  assert(table.concat(there, "; ") == "fx p2>p2; fa p2>p2; fb p2>p2; fy p2>p2; fall p2>", table.concat(there, "; "))
  assert(x.ports[1].location == "net_ring1")
  assert(table.concat(x.x_surge_part.rx_only, ",") == "0,1,4" and table.concat(x.x_surge_part.no_rx, ",") == "3",
    json.encode(x.x_surge_part))
  -- the host takes its part off before the model's check
  local hb, hp = remote.split(json.decode(json.encode(x), 64))
  assert(hb.x_surge_part == nil and hp.split == nil and table.concat(hp.part.rx_only, ",") == "0,1,4")
  local info = p.split.by_name.fx
  assert(info.cross and info.tx == "" and info.rx[H][1] == "p2" and info.first_rx == "p2")
  assert(not p.split.by_name.fa.cross and not p.split.by_name.fb.cross and p.split.by_name.fall.cross)
end

function T.fillers_only_below_a_hosts_last_flow()
  local mine, p = remote.split(body({ flow("fx", "p1", { "p2" }), flow("fa", "p1", { "p1" }) }))
  assert(#mine.flows == 2 and #p.split.hosts[H].body.flows == 1, "the other host has nothing after fx")
  mine, p = remote.split(body({ flow("fb", "p2", { "p2" }) }))
  assert(#mine.flows == 0 and #p.split.hosts[H].body.flows == 1 and #p.part.rx_only == 0)
end

function T.refusals()
  local t = refusal(body({ flow("fx", "p1", { "p2" }, { metrics = { enable = true, latency = { enable = true } } }) }))
  has(t, "flows[0].metrics.latency.enable: the flow's tx port is on this host and rx ports on other hosts")
  has(t, "clock common to them")
  t = refusal(body({ flow("fa", "p1", { "p1" }), flow("fx", "p9", { "p2", "p8" }) }))
  has(t, "flows[1].tx_rx.port.tx_name: 'p9' is not a port of this config")
  has(t, "flows[1].tx_rx.port.rx_names[1]: 'p8' is not a port of this config")
  local b = body({ flow("fa", "p1", { "p1" }) })
  b.x_surge_part = { rx_only = { 0 }, no_rx = {} }
  has(refusal(b), "x_surge_part: a host's part of a config names ports on other hosts")
  for _, part in ipairs({ { rx_only = { 3 }, no_rx = {} }, { rx_only = {} }, "x", { rx_only = { 0.5 }, no_rx = {} } }) do
    b = json.decode(json.encode({ ports = { { name = "p1", location = "net_ring0" } },
                                  flows = { flow("fa", "p1", { "p1" }) }, x_surge_part = part }), 64)
    has(refusal(b), "x_surge_part.")
  end
  -- latency on a flow of one host stays allowed
  remote.split(body({ flow("fb", "p2", { "p2" }, { metrics = { enable = true, latency = { enable = true } } }) }))
end

-- The split reads the body before the model's check: any shape of it is
-- split or refused as a 400, never a Lua error (a 500). Deterministic: a
-- valid body with one value replaced by an odd one, 3000 times.
function T.odd_bodies_never_a_lua_error()
  local odd = { 0, 1.5, -1, "", "p2", "x/y", true, false, {}, { "p1" }, { name = "p2" }, json.null }
  math.randomseed(32)
  local function paths(t, pre, out)
    for k, v in pairs(t) do
      out[#out + 1] = { t = t, k = k }
      if type(v) == "table" then paths(v, pre .. "." .. tostring(k), out) end
    end
    return out
  end
  for n = 1, 3000 do
    local b = body({ flow("fx", "p1", { "p2" }), flow("fy", "p2", { "p1", "p2" }), flow("fz", "p2", {}) })
    b.captures = { { name = "c", port_names = { "p2", "p1" } } }
    b.devices = { { name = "d", ethernets = { { name = "e", connection = { port_name = "p1" } } } } }
    local all = paths(b, "", {})
    for _ = 1, 1 + n % 3 do
      local at = all[math.random(#all)]
      at.t[at.k] = odd[math.random(#odd)]
    end
    local ok, e = pcall(remote.split, b)
    assert(ok or (type(e) == "table" and e.status == 400), ("body %d: %s"):format(n, tostring(e)))
  end
end

return T
