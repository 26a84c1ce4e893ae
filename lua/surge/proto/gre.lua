-- gre.lua - GRE (RFC 2784, key from RFC 2890): 4 bytes, 8 with a key.
--
--   surge.proto.stack{ L.eth{}, L.ip4{}, L.gre{}, L.ip4{ src = "192.168.0.1" }, L.udp{} }
--   surge.proto.stack{ L.eth{}, L.ip4{}, L.gre{ key = 7 }, L.eth{}, L.ip4{}, L.udp{} }
--
-- The protocol type is the next layer's ethertype (0x0800 IPv4, 0x86dd IPv6,
-- 0x8847 MPLS) or 0x6558 (transparent Ethernet bridging) before an eth
-- layer; proto = N overrides it. GRE is IP protocol 47. The layers write no
-- GRE checksum; the decoder verifies one when a frame has it.
local bit = require("bit")
local cs = require("surge.proto.checksum")
local stack = require("surge.proto.stack")

local band = bit.band
local M = { size = 4, PROTO_TEB = 0x6558, F_CSUM = 0x8000, F_ROUTING = 0x4000, F_KEY = 0x2000, F_SEQ = 0x1000 }

-- The key of a layer made with key = N (no checksum before it).
M.fields = { key = { off = 4, bytes = 4 },
             -- the flag word and protocol (OTG's checksum_present, reserved0, version, protocol)
             c = { off = 0, bytes = 2, mask = 0x8000 }, reserved0 = { off = 0, bytes = 2, mask = 0x7ff8 },
             version = { off = 0, bytes = 2, mask = 0x0007 }, proto = { off = 2, bytes = 2 } }

-- Writes the header at p: key is a number or nil (no key).
function M.write(p, proto, key)
  stack.put16(p, key and 0x2000 or 0)
  stack.put16(p + 2, proto)
  if key then stack.put32(p + 4, key) end
end

local allowed = { key = 1, proto = 1 }

local function write(self, p, ctx)
  local n = ctx.next
  local proto = self.proto or (n and (n.name == "eth" and 0x6558 or n.ethertype))
  if not proto then error("surge.proto.gre: no proto given and the next layer has no ethertype", 0) end
  M.write(p, proto, self.key)
end

local ints = { { "key", nil, 0, 0xffffffff }, { "proto", nil, 0, 0xffff } }

function M.layer(o)
  local t = stack.layer_of(o, allowed, { name = "gre", len = 4, ipproto = 47, write = write }, ints)
  if t.key then t.len = 8 end   -- the key is there (flag K)
  return t
end

-- Hot loop: the key of the header at g (uint8_t *), which must have one.
-- A checksum before the key (C bit) is kept valid.
function M.set_key(g, v)
  local at = g[0] >= 0x80 and 8 or 4
  local oh, ol = g[at] * 256 + g[at + 1], g[at + 2] * 256 + g[at + 3]
  stack.put32(g + at, v)
  if at == 8 then
    cs.update16(g + 4, oh, g[at] * 256 + g[at + 1])
    cs.update16(g + 4, ol, g[at + 2] * 256 + g[at + 3])
  end
end
stack.setters(M, "gre", { set_key = "integer 0..4294967295" })

function M.key(g) return stack.get32(g + (g[0] >= 0x80 and 8 or 4)) end

function M.decode(p, len, ctx)
  if len < 4 then return "gre (truncated)", nil, len end
  local flags, proto = stack.get16(p), stack.get16(p + 2)
  local ver = band(flags, 7)
  local hlen = 4
  local text = ("gre proto 0x%04x"):format(proto)
  if band(flags, 0xc000) ~= 0 then hlen = hlen + 4 end      -- checksum and offset
  if band(flags, 0x2000) ~= 0 then
    if len >= hlen + 4 then text = text .. (" key %d"):format(stack.get32(p + hlen)) end
    hlen = hlen + 4
  end
  if band(flags, 0x1000) ~= 0 then
    if len >= hlen + 4 then text = text .. (" seq %d"):format(stack.get32(p + hlen)) end
    hlen = hlen + 4
  end
  if band(flags, 0x8000) ~= 0 then
    local n = len
    if ctx.ip and ctx.ip.payload and ctx.ip.payload <= len then n = ctx.ip.payload end
    text = text .. " csum " .. (n >= hlen and cs.sum(p, n) == 0xffff and "ok" or "BAD")
  end
  if ver ~= 0 then return text .. (" version %d"):format(ver), nil, math.min(hlen, len) end
  if band(flags, 0x4000) ~= 0 then return text .. " routing", nil, math.min(hlen, len) end
  if hlen > len then return text .. " (truncated)", nil, len end
  return text, { ethertype = proto }, hlen
end

stack.readers(M, "gre", { "key" })

return M
