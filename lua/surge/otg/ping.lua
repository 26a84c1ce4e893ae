-- otg/ping.lua - the task of one port for a /control/action ping
-- (otg/action.lua launches it as "surge.otg.ping:task" between traffic
-- runs, in place of the port's neighbour task): its device addresses send
-- ICMP or ICMPv6 echo requests and it waits for the replies, answering ARP,
-- neighbour solicitations and echo requests for the port's addresses
-- meanwhile (as otg/task.lua's tasks do: a peer answering an echo may ask
-- for the device's MAC first).
--
-- A request's destination MAC: the gateway's (configured, or resolved by
-- the neighbour task) for an address off the device's subnet, else the
-- address's own, resolved here (ARP, solicitation: all the port's at once,
-- at most RESOLVE_S).
-- One echo request each, as the model says; a reply is the echo reply from
-- the destination to the device's address with this action's identifier and
-- the request's sequence number. The requests of a port are sent together
-- and wait together: at most WAIT_S after the last was sent. A port with
-- devices and no request has a task too, answering until stopped.
local ffi = require("ffi")
local surge = require("surge")
local pool = require("surge.pool")
local cs = require("surge.proto.checksum")
local eth = require("surge.proto.eth")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")
local stack = require("surge.proto.stack")
local view = require("surge.proto.view")
local neigh = require("surge.dut.neigh")
local task = require("surge.otg.task")
local stats = require("surge.otg.stats")

local M = {}

M.RESOLVE_S = 1
-- The model asks 300 ms; surge waits longer so that a reply is not lost to
-- a loaded host's scheduling (a ping that fails takes that long).
M.WAIT_S = 1
local PAYLOAD = 32      -- the echo's data bytes: "surge ping" repeated
local BURST = 32

-- Writes the echo request of req (its entry en) at p; returns its length.
local function write_echo(p, en, req, ident, mac)
  local six = en.kind == 6
  eth.write(p, eth.mac(en.mac, "surge otg ping", 1), mac, six and 0x86dd or 0x0800)
  local icmp = p + (six and 54 or 34)
  icmp[0], icmp[1] = six and 128 or 8, 0
  stack.put16(icmp + 2, 0)
  stack.put16(icmp + 4, ident)
  stack.put16(icmp + 6, req.seq)
  local text = "surge ping"
  for k = 0, PAYLOAD - 1 do icmp[8 + k] = text:byte(k % #text + 1) end
  local n = 8 + PAYLOAD
  if six then
    ip6.write(p + 14, ip6.addr(en.addr, "surge otg ping", 1), ip6.addr(req.dst, "surge otg ping", 1), 58, n, 64)
    stack.put16(icmp + 2, cs.finish(cs.sum(icmp, n, cs.sum(p + 22, 32) + 58 + n)))
  else
    ip4.write(p + 14, ip4.addr(en.addr, "surge otg ping", 1), ip4.addr(req.dst, "surge otg ping", 1), 1, 20 + n, 64)
    stack.put16(icmp + 2, cs.finish(cs.sum(icmp, n)))
  end
  return 14 + (six and 40 or 20) + n
end

M.write_echo = write_echo     -- (tests/lua/test_fuzz_parsers.lua makes its seeds with it)

-- The request (of by_seq: sequence number -> request) the frame at p of len
-- bytes (parsed into v) answers, or nil: an echo reply with this action's
-- identifier ident and the request's sequence number, from its destination
-- to its device's address. The bytes are the network's: every read is
-- bounded by len (tests/lua/test_fuzz_parsers.lua feeds it mutated frames).
function M.reply(p, len, v, ident, by_seq)
  local six = v.ethertype == view.ETH_IP6
  if not (six or v.ethertype == view.ETH_IP4) or v.l4 < 0 or len < v.l4 + 8 then return nil end
  if v.proto ~= (six and 58 or 1) or p[v.l4] ~= (six and 129 or 0) then return nil end
  if stack.get16(p + v.l4 + 4) ~= ident then return nil end
  local req = by_seq[stack.get16(p + v.l4 + 6)]
  if not req or req.six ~= six then return nil end
  local l3 = v.l3
  if six then
    if len < l3 + 40 or ffi.string(p + l3 + 8, 16) ~= req.dst_b or ffi.string(p + l3 + 24, 16) ~= req.src_b then
      return nil
    end
  elseif len < l3 + 20 or stack.get32(p + l3 + 12) ~= req.dst_b or stack.get32(p + l3 + 16) ~= req.src_b then
    return nil
  end
  return req
end

-- a: { rxq, txq, neigh (otg/traffic.lua's neigh argument of the port), ident,
--      reqs = { { i (the entry's index in neigh.entries), dst (text), on_link, seq } } }
-- Returns the seqs of the requests a reply came for.
function M.task(a)
  local nb = a.neigh
  local r = task.responder(nb, a.rxq, a.txq)
  local rxb = pool.burst(-1, BURST)
  local block = stats.neigh_view(nb.block)
  local got, by_seq, macs = {}, {}, {}
  local txb = nb.ctrl_pool:burst(1)
  local hz = surge.tsc_hz()
  -- every MAC first (a reply to an echo sent before would be taken for none), and those not known
  -- yet all at once: a request each 0.25 s, at most RESOLVE_S for all
  local pending = {}
  for _, req in ipairs(a.reqs) do
    local en = nb.entries[req.i]
    -- the MAC to send to: the destination's on the subnet, else the gateway's
    local hop = req.on_link and req.dst or en.gw
    req.mac = not req.on_link and (en.gw_mac and eth.mac(en.gw_mac, "surge otg ping", 1)
      or (block[en.k].resolved ~= 0 and ffi.string(block[en.k].mac, 6)))
    req.key = req.i .. "/" .. hop
    if not req.mac and macs[req.key] == nil then
      macs[req.key] = false
      local six = en.kind == 6
      pending[#pending + 1] = { key = req.key, i = req.i, t4 = not six and ip4.addr(hop, "surge otg ping", 1) or nil,
                                t6 = six and ip6.addr(hop, "surge otg ping", 1) or nil }
    end
  end
  local v, unknown = r.v, #pending
  local deadline, next_ask = tonumber(surge.tsc()) + M.RESOLVE_S * hz, 0
  while unknown > 0 and surge.running() and tonumber(surge.tsc()) < deadline do
    if tonumber(surge.tsc()) >= next_ask then
      for _, q in ipairs(pending) do if not macs[q.key] then r.n:ask(q.i, q.t4, q.t6) end end
      next_ask = tonumber(surge.tsc()) + hz / 4
    end
    local n = a.rxq:recv(rxb)
    for j = 0, n - 1 do
      local p, len = rxb.data[j], rxb.len[j]
      local mine = false
      if view.parse(v, p, len) then
        for _, q in ipairs(pending) do
          local mac = not macs[q.key] and neigh.answer(p, len, v, q.t4, q.t6)
          if mac then macs[q.key], unknown, mine = eth.mac(mac, "surge otg ping", 1), unknown - 1, true end
        end
      end
      if not mine then task.answer(r, p, len) end
    end
    if n == 0 then surge.sleep(0.001) end
  end
  for _, req in ipairs(a.reqs) do req.mac = req.mac or macs[req.key] end
  for _, req in ipairs(a.reqs) do
    local en = nb.entries[req.i]
    if req.mac and surge.running() and txb:alloc(1) == 1 then
      txb.len[0] = write_echo(txb.data[0], en, req, a.ident, req.mac)
      if a.txq:send(txb) == 1 then
        req.six = en.kind == 6
        if req.six then
          req.src_b, req.dst_b = ip6.addr(en.addr, "surge otg ping", 1), ip6.addr(req.dst, "surge otg ping", 1)
        else
          req.src_b, req.dst_b = ip4.addr(en.addr, "surge otg ping", 1), ip4.addr(req.dst, "surge otg ping", 1)
        end
        by_seq[req.seq] = req
      end
    end
  end
  txb:free()
  local left = 0
  for _ in pairs(by_seq) do left = left + 1 end
  deadline = tonumber(surge.tsc()) + M.WAIT_S * hz
  -- a port with no request answers until stopped: a ping's destination may be one of its devices
  local serve = #a.reqs == 0
  while surge.running() and (serve or (left > 0 and tonumber(surge.tsc()) < deadline)) do
    local n = a.rxq:recv(rxb)
    for j = 0, n - 1 do
      local p, len = rxb.data[j], rxb.len[j]
      local req = view.parse(v, p, len) and M.reply(p, len, v, a.ident, by_seq)
      if req then
        by_seq[req.seq], left = nil, left - 1
        got[#got + 1] = req.seq
      else
        task.answer(r, p, len)
      end
    end
    if n == 0 then surge.sleep(0.001) end
  end
  rxb:free()
  return got
end

return M
