-- neigh.lua - ARP (IPv4) and neighbour discovery (IPv6) against a device
-- under test: resolve its MAC for a next hop, and answer its requests for
-- surge's own addresses. Runs inside a task (the lcore that owns the port's
-- queues); surge.dut launches it for you.
--
--   local n = neigh.new{ { rxq = rxq, txq = txq, mac = "02:..", ip4 = "10.0.0.2",
--                          ip6 = "2001:db8::2" } }, ctrl_pool)
--   local mac, err = n:resolve(1, "10.0.0.1", 2)      -- iface 1, 2 s timeout
--   n:handle(1, p, len, v)    -- in an RX loop, for frames that are not test traffic
--
-- handle() looks at the ethertype (and for IPv6 the ICMPv6 type) first, so
-- the responder costs a compare per frame that is not ARP or ICMPv6, and
-- nothing when nothing arrives.
local ffi = require("ffi")
local surge = require("surge")
local check = require("surge.check")
local addrs = require("surge.proto.addrs")
local arp = require("surge.proto.arp")
local cs = require("surge.proto.checksum")
local eth = require("surge.proto.eth")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")
local stack = require("surge.proto.stack")
local view = require("surge.proto.view")

local M = {}
local N = require("surge.class").new("dut responder", { "ifaces", "burst", "answered", "scratch", "rx_burst" })

local BCAST = "\255\255\255\255\255\255"
local SCRATCH = 1536           -- the largest frame built (an echo reply: up to a 1500-byte packet)
local ZERO_MAC = "\0\0\0\0\0\0"

-- An interface's addresses (one, a range "A-B" or a list: surge.proto.addrs):
-- the first (the one resolve asks from) and the set answered for.
local function addr_set(spec, what, six)
  if spec == nil then return nil, nil end
  local list, v6 = addrs.list(spec, what)
  if v6 ~= six then check.raise(("%s: %s is not an IPv%d address"):format(what, tostring(list[1]), six and 6 or 4)) end
  local set = {}
  for _, a in ipairs(list) do set[a] = true end
  return list[1], set
end

-- ifaces: list of { rxq, txq, mac, ip4?, ip6?, vlan?, echo? } (rxq/txq queue
-- handles; mac text; ip4/ip6: one address, a range "A-B" or a list, all
-- answered for, the first asked from; vlan: the id requests go out with;
-- echo: true to answer ICMP and ICMPv6 echo requests to the addresses too,
-- as a host does); pool: a pool handle the control frames are sent from.
function M.new(ifaces, pool)
  local self = setmetatable({ ifaces = {}, burst = pool:burst(1), answered = 0,
                              scratch = ffi.new("uint8_t[?]", SCRATCH) }, N)
  for i, f in ipairs(ifaces) do
    local a4, set4 = addr_set(f.ip4, "surge.dut: ip4", false)
    local a6, set6 = addr_set(f.ip6, "surge.dut: ip6", true)
    self.ifaces[i] = { rxq = f.rxq, txq = f.txq, mac = eth.mac(f.mac, "surge.dut: mac", 2), vlan = f.vlan,
                       mac_text = f.mac, ip4 = a4, ip6 = a6, ip4_set = set4, ip6_set = set6,
                       echo = f.echo == true }
  end
  return self
end

-- Sends the frame the builder writes (build returns its length), with an
-- 802.1Q tag holding `tci` after the MACs when tci is given (answers carry
-- the tag of the request they answer).
local function send(self, f, tci, build, a, b, c, d, e)
  local burst = self.burst
  if burst:alloc(1) ~= 1 then return false end
  local out, tmp = burst.data[0], self.scratch
  local len = build(tmp, f, a, b, c, d, e)
  if tci then
    ffi.copy(out, tmp, 12)
    stack.put16(out + 12, 0x8100)
    stack.put16(out + 14, tci)
    ffi.copy(out + 16, tmp + 12, len - 12)
    len = len + 4
  else
    ffi.copy(out, tmp, len)
  end
  burst.len[0] = len
  return f.txq:send(burst) == 1
end

-- spa: the sender address (a reply's: the address asked for, one of several)
local function write_arp(p, f, op, tha_mac, tpa, dst_mac, spa)
  ffi.fill(p, 60, 0)
  eth.write(p, f.mac, dst_mac, 0x0806)
  arp.write(p + 14, op, f.mac, spa or f.ip4 or 0, tha_mac, tpa)
  return 60
end

-- ICMPv6 neighbour solicitation (135) or advertisement (136) with a link-layer
-- address option (1 = source, 2 = target), checksum over the pseudo header.
local function write_nd(p, f, typ, target, dst_ip, dst_mac)
  ffi.fill(p, 86, 0)
  eth.write(p, f.mac, dst_mac, 0x86dd)
  -- an advertisement comes from the address it answers for (one of several)
  ip6.write(p + 14, typ == 136 and target or f.ip6, dst_ip, 58, 32, 255)
  local icmp = p + 54
  icmp[0] = typ
  if typ == 136 then icmp[4] = 0x60 end          -- solicited, override
  ffi.copy(icmp + 8, target, 16)
  icmp[24] = typ == 135 and 1 or 2
  icmp[25] = 1
  ffi.copy(icmp + 26, f.mac, 6)
  local acc = cs.sum(p + 22, 32) + 58 + 32       -- pseudo header: addresses, next header, length
  stack.put16(icmp + 2, cs.finish(cs.sum(icmp, 32, acc)))
  return 86
end

-- An echo reply to the request at p (IPv4 or IPv6 at l3, ICMP at l4, tot
-- bytes of IP packet): the packet copied back with the addresses swapped,
-- the type made a reply, the checksums anew.
local function write_echo(out, f, p, l3, l4, tot, six)
  eth.write(out, f.mac, ffi.string(p + 6, 6), six and 0x86dd or 0x0800)
  local ip, n = out + 14, 14 + tot
  ffi.copy(ip, p + l3, tot)
  local icmp = ip + (l4 - l3)
  if six then
    ffi.copy(ip + 8, p + l3 + 24, 16)
    ffi.copy(ip + 24, p + l3 + 8, 16)
    ip[7] = 64
    icmp[0], icmp[2], icmp[3] = 129, 0, 0
    local plen = tot - 40
    stack.put16(icmp + 2, cs.finish(cs.sum(icmp, plen, cs.sum(ip + 8, 32) + 58 + plen)))
  else
    ffi.copy(ip + 12, p + l3 + 16, 4)
    ffi.copy(ip + 16, p + l3 + 12, 4)
    ip[8], ip[10], ip[11] = 64, 0, 0
    stack.put16(ip + 10, cs.finish(cs.sum(ip, l4 - l3)))
    icmp[0], icmp[2], icmp[3] = 0, 0, 0
    stack.put16(icmp + 2, cs.finish(cs.sum(icmp, tot - (l4 - l3))))
  end
  if n < 60 then ffi.fill(out + n, 60 - n, 0) n = 60 end
  return n
end

-- Answers an echo request at p to one of iface f's addresses (f.echo).
local function echo(self, f, tci, p, len, v)
  local six = v.ethertype == view.ETH_IP6
  if v.l4 < 0 or p[v.l4] ~= (six and 128 or 8) or eth.unicast_problem(p + 6) then return end
  local tot = six and 40 + stack.get16(p + v.l3 + 4) or stack.get16(p + v.l3 + 2)
  if v.l3 + tot > len or 14 + tot > SCRATCH or v.l4 + 8 > v.l3 + tot then return end
  if six then
    if not (f.ip6_set and f.ip6_set[ffi.string(p + v.l3 + 24, 16)]) then return end
  elseif not (f.ip4_set and f.ip4_set[stack.get32(p + v.l3 + 16)]) then return end
  if send(self, f, tci, write_echo, p, v.l3, v.l4, tot, six) then self.answered = self.answered + 1 end
end

local function solicited_node(addr)
  local ip = "\255\2" .. ("\0"):rep(9) .. "\1\255" .. addr:sub(14, 16)
  return ip, "\51\51\255" .. addr:sub(14, 16)
end

local function same16(p, s)
  for k = 0, 15 do if p[k] ~= s:byte(k + 1) then return false end end
  return true
end

-- Answers an ARP request or neighbour solicitation for iface i's addresses
-- (and an echo request, with echo); returns true when the frame was one
-- (answered or not).
function N:handle(i, p, len, v)
  local et = v.ethertype
  if et == view.ETH_IP4 and v.proto == 1 and self.ifaces[i].echo then
    echo(self, self.ifaces[i], v.tci >= 0 and stack.get16(p + v.tci) or nil, p, len, v)
    return true
  end
  if et ~= view.ETH_ARP and et ~= view.ETH_IP6 then return false end
  local tci = v.tci >= 0 and stack.get16(p + v.tci) or nil
  if et == view.ETH_ARP then
    local f = self.ifaces[i]
    local a = p + v.l3
    -- (a sender MAC that is no host's, eth.unicast_problem, gets no answer:
    -- it would go to every host or none)
    if len >= v.l3 + 28 and f.ip4 and stack.get16(a + 6) == 1 and f.ip4_set[stack.get32(a + 24)]
       and not eth.unicast_problem(a + 8) then
      local sha = ffi.string(a + 8, 6)
      if send(self, f, tci, write_arp, 2, sha, stack.get32(a + 14), sha, stack.get32(a + 24)) then self.answered = self.answered + 1 end
    end
    return true
  elseif et == view.ETH_IP6 and v.proto == 58 and v.l4 >= 0 and len >= v.l4 + 24 and p[v.l4] == 135 then
    local f = self.ifaces[i]
    local target = f.ip6 and ffi.string(p + v.l4 + 8, 16)
    if target and f.ip6_set[target] and not eth.unicast_problem(p + 6) then
      local src_ip = ffi.string(p + v.l3 + 8, 16)
      local src_mac = ffi.string(p + 6, 6)
      if send(self, f, tci, write_nd, 136, target, src_ip, src_mac) then self.answered = self.answered + 1 end
    end
    return true
  elseif et == view.ETH_IP6 and v.proto == 58 and self.ifaces[i].echo then
    echo(self, self.ifaces[i], tci, p, len, v)
    return true
  end
  return false
end

-- Where the frame at p answers for target (ARP reply / neighbour
-- advertisement), the address of the MAC it gives (a pointer into p), or nil.
local function answer_for(p, len, v, target4, target6)
  if target4 and v.ethertype == view.ETH_ARP and len >= v.l3 + 28 then
    local a = p + v.l3
    if stack.get16(a + 6) == 2 and stack.get32(a + 14) == target4 then return a + 8 end
  elseif target6 and v.ethertype == view.ETH_IP6 and v.proto == 58 and v.l4 >= 0 and len >= v.l4 + 24
         and p[v.l4] == 136 and same16(p + v.l4 + 8, target6) then
    local o = v.l4 + 24
    while o + 8 <= len and p[o + 1] > 0 do          -- options: type, length in 8-byte units
      if p[o] == 2 then return p + o + 2 end
      o = o + p[o + 1] * 8
    end
    return p + 6                                     -- no option: the sender's MAC
  end
  return nil
end

-- Sends one request on iface i for the IPv4 address t4 (a number: an ARP
-- request) or the IPv6 address t6 (16 bytes: a neighbour solicitation).
-- With M.answer, a caller resolving several addresses at once does what
-- resolve() does for one (otg/ping.lua).
function N:ask(i, t4, t6)
  local f = self.ifaces[i]
  if t4 then return f.ip4 ~= nil and send(self, f, f.vlan, write_arp, 1, ZERO_MAC, t4, BCAST) end
  if not f.ip6 then return false end
  local ip, mac = solicited_node(t6)
  return send(self, f, f.vlan, write_nd, 135, t6, ip, mac)
end

-- The MAC (text) the frame at p of len bytes (parsed into v) gives for t4
-- or t6 (as ask takes them): an ARP reply or neighbour advertisement for
-- it with a host's MAC; else nil.
function M.answer(p, len, v, t4, t6)
  local at = answer_for(p, len, v, t4, t6)
  if at and not eth.unicast_problem(at) then return eth.mac_text(at) end
  return nil
end

-- Resolves `addr` (IPv4 or IPv6 text) on iface i: a request every 0.25 s
-- until an answer or `timeout` seconds. Answers requests meanwhile (for
-- every interface on iface i's RX queue).
-- Returns the MAC text, or nil and a one-line reason.
function N:resolve(i, addr, timeout)
  local f = self.ifaces[i]
  local t4, t6
  if tostring(addr):find(":", 1, true) then
    t6 = ip6.addr(addr, "surge.dut: resolve", 2)
    if not f.ip6 then return nil, ("port %s: no IPv6 address of surge's own to ask from"):format(f.txq.port) end
  else
    t4 = ip4.addr(addr, "surge.dut: resolve", 2)
    if not f.ip4 then return nil, ("port %s: no IPv4 address of surge's own to ask from"):format(f.txq.port) end
  end
  local rx = self.rx_burst
  local v = view.new()
  local hz = surge.tsc_hz()
  local now = tonumber(surge.tsc())
  local deadline, next_ask = now + timeout * hz, now
  local ignored                                      -- the answer refused, said once
  while surge.running() do
    now = tonumber(surge.tsc())
    if now >= deadline then break end
    if now >= next_ask then
      self:ask(i, t4, t6)
      next_ask = now + hz / 4
    end
    local n = f.rxq:recv(rx)
    for k = 0, n - 1 do
      local p, len = rx.data[k], rx.len[k]
      if view.parse(v, p, len) then
        local at = answer_for(p, len, v, t4, t6)
        local bad = at and eth.unicast_problem(at)
        if at and not bad then
          local mac = eth.mac_text(at)
          rx:free()
          return mac
        elseif bad and not ignored then
          -- said once; the wait goes on for an answer a host can be
          ignored = ("%s for %s carries the %s MAC %s, ignored"):format(t4 and "ARP reply" or
            "neighbour advertisement", addr, bad, eth.mac_text(at))
          io.stderr:write(("port %s: %s\n"):format(f.txq.port, ignored))
          io.stderr:flush()
        end
        -- every interface on this queue answers meanwhile (several
        -- addresses on one port, one of them the gateway asked for)
        if self:handle(i, p, len, v) then
          for j, g in ipairs(self.ifaces) do if j ~= i and g.rxq == f.rxq then self:handle(j, p, len, v) end end
        end
      end
    end
    if n == 0 then surge.sleep(0.001) end
  end
  rx:free()
  if not surge.running() then return nil, "stopped" end
  if ignored then
    return nil, ("port %s: no usable %s reply from %s within %g s (the %s)"):format(f.txq.port,
      t4 and "ARP" or "neighbour advertisement", addr, timeout, ignored)
  end
  return nil, ("port %s: no %s reply from %s within %g s (is the device under test up, and %s on "
    .. "its subnet?)"):format(f.txq.port, t4 and "ARP" or "neighbour advertisement", addr, timeout,
    t4 and ip4.addr_text(f.ip4) or ip6.addr_text(f.ip6))
end

-- The burst resolve() receives into (the caller gives it: pools are scarce).
function N:set_rx_burst(b) self.rx_burst = b return self end

return M
