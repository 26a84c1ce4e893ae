-- otg/task.lua - the task of one port while OTG traffic runs (launched as
-- "surge.otg.task:port" by otg/traffic.lua): it sends the flows whose tx
-- port this is and counts what the port receives per flow (the tag
-- otg/flows.lua puts at the end of a frame).
--
-- Sending: the port's flows are spread over its TX queues (as many as the
-- device has, up to one a flow); each queue is paced by surge's pacer at
-- the sum of its flows' rates, and send_due keeps any queue from waiting on
-- another's schedule. Flows sharing a queue take turns a burst at a time,
-- the one furthest behind its rate first (sent / rate smallest): over a
-- run each gets its own rate within a burst. When a fixed_packets flow
-- ends, its queue is re-paced at what the others ask.
--
-- Counts go to memory master owns (otg/stats.lua): per flow the frames and
-- bytes sent and whether all are sent (this task alone writes them), per
-- port and flow the frames and bytes received (this port's task alone
-- writes its row). Aligned 8-byte stores: master reads whole values.
local surge = require "surge"
local core = require "surge.core"
local pool = require "surge.pool"
local flows = require "surge.otg.flows"
local stats = require "surge.otg.stats"
local neigh = require "surge.dut.neigh"
local view = require "surge.proto.view"
local eth = require "surge.proto.eth"

local C = core.C
local M = {}

local BURST = 32
-- A round with nothing to send or receive sleeps (the lcore may be shared:
-- floating lcores), longer while nothing comes, up to IDLE_MAX_US: a 1024-frame
-- ring fills in no less than ~1 ms at 1 Mpps
local IDLE_US, IDLE_MAX_US = 20, 200
local DRAIN_ROUNDS = 1024     -- receives at most at a task's end: what its queues still hold

-- The port's device addresses (otg/devices.lua's entries) as one
-- surge.dut.neigh responder: an interface an address (its ethernet's MAC),
-- on the port's first queues. nil when the port has no device.
local function responder(nb, rxq, txq)
  if nb == nil or #nb.entries == 0 then return nil end
  local ifaces = {}
  for i, e in ipairs(nb.entries) do
    ifaces[i] = { rxq = rxq, txq = txq, mac = e.mac, ip4 = e.kind == 4 and e.addr or nil,
                  ip6 = e.kind == 6 and e.addr or nil, echo = true }
  end
  return { n = neigh.new(ifaces, nb.ctrl_pool), count = #ifaces, v = view.new() }
end

-- Answers the frame at p when it is an ARP request, a neighbour
-- solicitation or an echo request (ICMP, ICMPv6) for one of the port's addresses (each interface of the
-- responder looks at it: they share the port). A compare of the ethertype
-- (and of IPv4's protocol) for any other frame.
local function answer(r, p, len)
  local et = len >= 24 and p[12] * 256 + p[13] or 0
  if et ~= 0x0806 and et ~= 0x86dd and et ~= 0x8100 and (et ~= 0x0800 or p[23] ~= 1) then return end
  local v = r.v
  if not view.parse(v, p, len) then return end
  if r.n:handle(1, p, len, v) then
    for i = 2, r.count do r.n:handle(i, p, len, v) end
  end
end

-- a: { rxq, txq, neigh = { entries, ctrl_pool, block } } - the task of a
-- port with devices between traffic runs: resolves each address's gateway
-- (surge.dut.neigh's resolve: a request every 0.25 s, answering meanwhile),
-- again every RETRY_S for one that did not answer, and answers requests
-- for the addresses until stopped. What it resolved goes to the block.
-- (While resolve waits on one gateway it answers for that address alone:
-- RESOLVE_S short, so an absent gateway holds the others' answers little.)
local RESOLVE_S, RETRY_S = 0.3, 1
function M.neigh(a)
  local nb = a.neigh
  local r = responder(nb, a.rxq, a.txq)
  local block = stats.neigh_view(nb.block)
  local rxb = pool.burst(-1, BURST)
  r.n:set_rx_burst(rxb)
  local hz = surge.tsc_hz()
  local next_try = 0
  local idle = IDLE_US
  while surge.running() do
    local now = tonumber(surge.tsc())
    if now >= next_try then
      for i, e in ipairs(nb.entries) do
        if block[e.k].resolved == 0 and not e.gw_mac and surge.running() then
          local mac = r.n:resolve(i, e.gw, RESOLVE_S)
          if mac then
            local b = eth.mac(mac, "surge otg: resolved")
            for j = 0, 5 do block[e.k].mac[j] = b:byte(j + 1) end
            block[e.k].resolved = 1
          end
        end
      end
      next_try = tonumber(surge.tsc()) + RETRY_S * hz
    end
    local n = a.rxq:recv(rxb)
    for j = 0, n - 1 do answer(r, rxb.data[j], rxb.len[j]) end
    if n > 0 then idle = IDLE_US
    else
      C.surge_sleep_us(idle)
      if idle < IDLE_MAX_US * 10 then idle = idle * 2 end
    end
  end
  rxb:free()
  return true
end

local function pace(g)
  local pps = 0
  for _, x in ipairs(g.flows) do if x.left ~= 0 and x.s.paused == 0 then pps = pps + x.pps end end
  if pps > 0 then g.q:set_rate(("%.6fpps"):format(pps)) end
  g.pps = pps
end

-- The flow of group g to send next (nil: all done): the one furthest
-- behind its rate.
local function pick(g)
  local best, key
  for _, x in ipairs(g.flows) do
    if x.left ~= 0 and x.s.paused == 0 then
      local k = x.s.tx_frames / x.pps
      if best == nil or k < key then best, key = x, k end
    end
  end
  return best
end

-- One send on group g; returns the packets sent.
local function send(g)
  local x = g.cur
  if x == nil or x.burst.n == 0 then
    x = pick(g)
    g.cur = x
    if x == nil then return 0 end
    local left = x.left
    x.burst:alloc((left > 0 and left < BURST) and left or BURST)
    if x.f then x.f:apply(x.burst) end
  end
  local sent = g.q:send_due(x.burst)
  if sent > 0 then
    local s = x.s
    s.tx_frames = s.tx_frames + sent
    s.tx_bytes = s.tx_bytes + sent * x.bytes
    if x.left > 0 then
      x.left = x.left - sent
      if x.left == 0 then
        s.done = 1
        pace(g)
      end
    end
  end
  return sent
end

-- a: { groups = { { txq = q, flows = { spec, ... } } }, rxqs = { rxq, ... }, stats (the
--      block's address), nflows, row (this port's rx row) }; a spec has
--      pps (its rate in frames a second) set by master.
function M.port(a)
  local st = stats.view(a.stats)
  local groups, all = {}, {}
  for gi, g in ipairs(a.groups) do
    local grp = { q = g.txq, flows = {}, cur = nil, pps = 0 }
    for _, spec in ipairs(g.flows) do
      local _, f = flows.build(spec)    -- the template is in spec.pool (master's: otg/traffic.lua)
      local x = { burst = spec.pool:burst(BURST), f = f or false, left = spec.count, s = st.flow[spec.index],
                  bytes = spec.size + flows.FCS, pps = spec.pps }
      grp.flows[#grp.flows + 1] = x
      all[#all + 1] = x
    end
    pace(grp)
    groups[gi] = grp
  end
  local rxqs, nrx = a.rxqs, #a.rxqs
  local resp = responder(a.neigh, rxqs[1], a.groups[1].txq)
  local rxb = pool.burst(-1, BURST)    -- receive only: the mbufs are the port's
  local rx = st.rx + a.row * a.nflows
  local nflows, ng = a.nflows, #groups
  local T0, T1, T2, T3 = flows.TAG:byte(1, 4)
  local FCS = flows.FCS
  -- one receive, counted per flow by the tag; returns the frames
  local function receive_on(rxq)
    local n = rxq:recv(rxb)
    if n > 0 then
      local data, len = rxb.data, rxb.len
      for j = 0, n - 1 do
        local p, l = data[j], len[j]
        if l >= 6 and p[l - 6] == T0 and p[l - 5] == T1 and p[l - 4] == T2 and p[l - 3] == T3 then
          local k = p[l - 2] * 256 + p[l - 1]
          if k < nflows then
            local r = rx[k]
            r.frames = r.frames + 1
            r.bytes = r.bytes + l + FCS
          end
        elseif resp then
          answer(resp, p, l)
        end
      end
    end
    return n
  end
  local function receive()
    local n = receive_on(rxqs[1])
    for q = 2, nrx do n = n + receive_on(rxqs[q]) end
    return n
  end
  st.run.ready[a.row] = 1
  local go, idle, gen = false, IDLE_US, st.run.gen
  while surge.running() do
    local busy = false
    if st.run.gen ~= gen then          -- flows paused or resumed: each queue at what its flows ask now
      gen = st.run.gen
      for i = 1, #groups do pace(groups[i]) end
    end
    if not go then
      go = st.run.go ~= 0
      if not go then ng = 0 else ng = #groups end
    end
    for i = 1, ng do
      if groups[i].pps > 0 and send(groups[i]) > 0 then busy = true end
    end
    if receive() > 0 then busy = true end
    if busy then idle = IDLE_US
    else
      C.surge_sleep_us(idle)
      if idle < IDLE_MAX_US then idle = idle * 2 end
    end
  end
  for _, x in ipairs(all) do x.burst:free() end   -- allocated when the run stopped: never sent
  -- what is still queued to this port (a loopback's own frames) is counted
  -- and goes back to its pool: the next start refills idle pools
  for _ = 1, DRAIN_ROUNDS do if receive() == 0 then break end end
  rxb:free()
  return true
end

return M
