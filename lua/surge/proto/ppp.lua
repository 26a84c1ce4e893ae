-- ppp.lua - PPP in HDLC-like framing (RFC 1662): address 0xff, control
-- 0x03, then the 16-bit protocol (0x0021 IPv4, 0x0057 IPv6, 0x0281 MPLS).
-- As a layer after eth it takes ethertype 0x880b (PPP), after gre the same
-- protocol type.
--
--   surge.proto.stack{ L.eth{}, L.ppp{}, L.ip4{}, L.udp{} }
local stack = require("surge.proto.stack")

local M = { size = 4, ETHERTYPE = 0x880b }

M.fields = { address = { off = 0, bytes = 1 }, control = { off = 1, bytes = 1 }, proto = { off = 2, bytes = 2 } }

-- PPP protocol numbers of the layers that may follow, by their ethertype
M.BY_ETHERTYPE = { [0x0800] = 0x0021, [0x86dd] = 0x0057, [0x8847] = 0x0281 }
local by_proto = { [0x0021] = "ip4", [0x0057] = "ip6", [0x0281] = "mpls" }

local allowed = { proto = 1 }

local function write(self, p, ctx)
  local proto = self.proto or (ctx.next and M.BY_ETHERTYPE[ctx.next.ethertype])
  if not proto then error("surge.proto.ppp: no proto given and the next layer is not IPv4, IPv6 or MPLS", 0) end
  p[0], p[1] = 0xff, 0x03
  stack.put16(p + 2, proto)
end

local ints = { { "proto", nil, 0, 0xffff } }
M.layer = stack.layer_fn(allowed, { name = "ppp", len = 4, ethertype = 0x880b, write = write }, ints)

function M.decode(p, len)
  if len < 4 then return "ppp (truncated)", nil, len end
  local proto = stack.get16(p + 2)
  return ("ppp addr 0x%02x ctrl 0x%02x proto 0x%04x"):format(p[0], p[1], proto), { kind = by_proto[proto] }, 4
end

return M
