-- icmp6.lua - ICMPv6 (RFC 4443): an 8-byte header (type, code, checksum,
-- identifier, sequence number), a ready-made Ethernet/IPv6/ICMPv6 frame,
-- and hot-loop setters that keep the checksum valid.
--
--   local t = surge.proto.icmp6{ src = "2001:db8::1", dst = "2001:db8::2", type = 128, id = 1 }
--   icmp6.set_seq(burst.data[i] + t.l4, n)    -- keeps the ICMPv6 checksum valid
--
--   surge.proto.layer.icmp6{ type = 128, code = 0, id = 0, seq = 0 }   -- for stacks
-- The checksum covers the IPv6 pseudo header (next header 58), the ICMPv6
-- header and what follows, so an ICMPv6 layer needs an IPv6 layer before it.
local cs = require("surge.proto.checksum")
local icmp = require("surge.proto.icmp")
local stack = require("surge.proto.stack")
local ip6 = require("surge.proto.ip6")

local M = { size = 8, UNREACHABLE = 1, TOO_BIG = 2, TIME_EXCEEDED = 3, ECHO_REQUEST = 128,
            ECHO_REPLY = 129, NEIGHBOR_SOLICIT = 135, NEIGHBOR_ADVERT = 136,
            set_id = icmp._raw.set_id, set_seq = icmp._raw.set_seq, set_type = icmp._raw.set_type, id = icmp.id,
            seq = icmp.seq }
stack.setters(M, "icmp6", icmp.setter_specs)

M.fields = icmp.fields
M.checksum = 2            -- offset of the checksum covering pseudo header, header and payload

M.type_names = { [1] = "unreachable", [2] = "packet-too-big", [3] = "time-exceeded",
                 [4] = "parameter-problem", [128] = "echo-request", [129] = "echo-reply",
                 [133] = "router-solicitation", [134] = "router-advertisement",
                 [135] = "neighbor-solicitation", [136] = "neighbor-advertisement" }

local function write(self, p, ctx)
  if not (ctx.ip and ctx.ip.name == "ip6") then
    error("surge.proto.icmp6: needs an IPv6 layer before it (its checksum covers the IPv6 pseudo header)", 0)
  end
  icmp.write(p, self.type, self.code, self.id, self.seq)
end

-- surge.proto.icmp6{...}: a whole Ethernet [/VLAN]/IPv6/ICMPv6 frame; src and
-- dst default to 2001:db8::1 and 2001:db8::2, `id` is the ICMPv6 identifier.
-- The layer's checksum = false leaves it 0 (a deliberately bad checksum).
local frame
M.layer, frame = icmp.family{ name = "icmp6", type = 128, ipproto = 58, write = write, pseudo = true,
                              defaults = { src = "2001:db8::1", dst = "2001:db8::2" } }
setmetatable(M, { __call = frame })

function M.decode(p, len, ctx)
  if len < 8 then return "icmp6 (truncated)", nil, len end
  local n = len
  if ctx.ip and ctx.ip.payload and ctx.ip.payload <= len then n = ctx.ip.payload end
  local ok = "none"
  if ctx.ip and ctx.ip.v4 == false then
    ok = cs.sum(p, n, ctx.ip.pseudo_sum(58, n)) == 0xffff and "ok" or "BAD"
  end
  local text = icmp.describe("icmp6", M.type_names, p, ok)
  if (p[0] == 135 or p[0] == 136) and n >= 24 then
    text = text .. " target " .. ip6.addr_text(p + 8)
  end
  return text, nil, n
end

return M
