-- scenario/kit/pump.lua - the one loop that drives connection engines
-- (surge.conn clients and servers) in a scenario's task: each round polls
-- every engine on its queues, hands what is not TCP (ARP/NDP) to the
-- neighbour responder, and once a millisecond runs tick (a server's sync)
-- and checks the deadline and done(). http drives one client, rfc9693 a
-- client and a server. Allocates nothing per round.
local surge = require("surge")
local view = require("surge.proto.view")

local M = {}

-- A pump over engines = { { engine, rxq, txq, neigh = the responder's
-- interface index, hosts (optional: a surge.hosts table on that port, which
-- takes its frames, ARP for its addresses, before the responder) }, ... }
-- (an entry's engine may be set later, nil: not polled), with the
-- responder neigh, bursts rx and tx, tick (optional).
function M.new(o)
  return { engines = o.engines, neigh = o.neigh, rx = o.rx, tx = o.tx, tick = o.tick, v = view.new(),
           hz = tonumber(surge.tsc_hz()) }
end

local function drain(p, x)
  local rx, v, neigh = p.rx, p.v, p.neigh
  local n = x.engine:poll(x.rxq, x.txq, rx, p.tx)
  if x.hosts then n = x.hosts:take(x.txq, rx, p.tx) end   -- every turn: its timers fire in it
  for i = 0, n - 1 do
    local pkt, len = rx.data[i], rx.len[i]
    if view.parse(v, pkt, len) then neigh:handle(x.neigh, pkt, len, v) end
  end
  if n > 0 then rx:free() end
end

-- Runs pump p until the TSC reaches until_tsc (false), done() says true
-- (true; done nil: never) or the run stops (false).
function M.run(p, until_tsc, done)
  local engines = p.engines
  local next_check = 0
  while surge.running() do
    for i = 1, #engines do
      if engines[i].engine then drain(p, engines[i]) end
    end
    local now = tonumber(surge.tsc())
    if now >= next_check then
      next_check = now + p.hz / 1000
      if p.tick then p.tick() end
      if now >= until_tsc then return false end
      if done and done() then return true end
    end
  end
  return false
end

return M
