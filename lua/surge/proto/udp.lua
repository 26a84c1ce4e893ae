-- udp.lua - UDP: a layer, a ready-made Ethernet/IPv4/UDP frame, and hot-loop
-- setters that keep the checksum valid.
--
--   local t = surge.proto.udp{ src = "10.0.0.1", dst = "10.0.0.2", sport = 1024,
--                              dport = 5000, size = 60, vlan = 100 }
--   t.bytes   -- the frame, checksums valid;   t.l3, t.l4 -- header offsets
--   udp.set_sport(burst.data[i] + t.l4, port) -- keeps the UDP checksum valid
--
--   surge.proto.layer.udp{ sport = 1024, dport = 5000, checksum = true }  -- for stacks
local cs = require("surge.proto.checksum")
local stack = require("surge.proto.stack")
local flat = require("surge.proto.flat")

local M = { size = 8 }

M.fields = { sport = { off = 0, bytes = 2 }, dport = { off = 2, bytes = 2 }, len = { off = 4, bytes = 2 } }
M.checksum = 6            -- offset of the checksum covering header, payload and pseudo header
M.checksum_zero_none = true

local allowed = { sport = 1, dport = 1, checksum = 1 }

local function write(self, p, ctx)
  local dport = self.dport or (ctx.next and ctx.next.udpport) or 1024
  stack.put16(p, self.sport)
  stack.put16(p + 2, dport)
  stack.put16(p + 4, ctx.size - ctx.off)
  p[6], p[7] = 0, 0
end

local function finish(self, p, ctx)
  local len = ctx.size - ctx.off
  if not self.checksum or not ctx.ip then return end
  local c = cs.finish(cs.sum(p, len, ctx.ip:pseudo_sum(17, len)))
  if c == 0 then c = 0xffff end
  stack.put16(p + 6, c)
end

-- checksum = false leaves it 0 ("none", allowed over IPv4 only).
local ints = { { "sport", 1024, 0, 65535 }, { "dport", nil, 0, 65535 } }

function M.layer(o)
  local t
  t, o = stack.layer_of(o, allowed, { name = "udp", len = 8, ipproto = 17, write = write, finish = finish }, ints)
  t.checksum = o.checksum ~= false
  return t
end

-- surge.proto.udp{...}: a whole Ethernet [/VLAN]/IPv4|IPv6/UDP frame from flat fields.
local function frame(_, o)
  local l = flat.frame("udp", o, { sport = 1024, dport = 1024 }, M.layer, 3)
  return l
end
setmetatable(M, { __call = frame })

-- Hot-loop setters on u (uint8_t * to the UDP header): keep the checksum
-- valid (16-bit loads and stores, checksum.set16).
local set16 = cs.set16
function M.set_sport(u, v) set16(u, 0, 6, v, true) end
function M.set_dport(u, v) set16(u, 2, 6, v, true) end
stack.setters(M, "udp", { set_sport = "integer 0..65535", set_dport = "integer 0..65535" })

function M.sport(u) return u[0] * 256 + u[1] end
function M.dport(u) return u[2] * 256 + u[3] end

function M.decode(p, len, ctx)
  if len < 8 then return "udp (truncated)", nil, len end
  local ulen, c = stack.get16(p + 4), stack.get16(p + 6)
  local status = "none"
  if c == 0 and ctx.ip and ctx.ip.v4 == false then
    status = "BAD (0 over IPv6)"
  elseif c ~= 0 and ctx.ip and ulen <= len then
    status = cs.sum(p, ulen, ctx.ip.pseudo_sum(17, ulen)) == 0xffff and "ok" or "BAD"
  end
  local dport = stack.get16(p + 2)
  return ("udp %d > %d len %d csum %s"):format(stack.get16(p), dport, ulen, status),
         { udpport = dport }, 8
end

stack.readers(M, "udp", { "sport", "dport" })

return M
