-- vxlan.lua - VXLAN (RFC 7348): 8 bytes after a UDP header (port 4789),
-- then the inner Ethernet frame.
--
--   surge.proto.stack{ L.eth{}, L.ip4{}, L.udp{ sport = 49152 }, L.vxlan{ vni = 42 },
--                      L.eth{}, L.ip4{}, L.udp{} }
--   vxlan.set_vni(burst.data[i] + t.off.vxlan, vni)   -- keeps the outer UDP checksum valid
--
-- The preceding udp layer's dport defaults to 4789 (the layer's udpport).
local bit = require("bit")
local cs = require("surge.proto.checksum")
local stack = require("surge.proto.stack")

local band, rshift = bit.band, bit.rshift
local M = { size = 8, PORT = 4789 }

-- The VNI is the top 24 bits of the second word; the outer UDP checksum covers it.
M.fields = { vni = { off = 4, bytes = 4, mask = 0xffffff00 }, flags = { off = 0, bytes = 1 },
             reserved0 = { off = 0, bytes = 4, mask = 0x00ffffff }, reserved1 = { off = 7, bytes = 1 } }

-- Writes the header at p: flags 0x08 (VNI valid), vni.
function M.write(p, vni)
  p[0] = 0x08; p[1], p[2], p[3] = 0, 0, 0
  p[4] = rshift(vni, 16); p[5] = band(rshift(vni, 8), 0xff); p[6] = band(vni, 0xff); p[7] = 0
end

local allowed = { vni = 1 }

local function write(self, p, ctx)
  if not (ctx.prev and ctx.prev.name == "udp") then
    error("surge.proto.vxlan: needs a udp layer right before it", 0)
  end
  if ctx.next and ctx.next.name ~= "eth" then
    error(("surge.proto.vxlan: the next layer must be eth (VXLAN carries Ethernet frames), not %s"):format(
      tostring(ctx.next.name)), 0)
  end
  M.write(p, self.vni)
end

local ints = { { "vni", 0, 0, 0xffffff } }
M.layer = stack.layer_fn(allowed, { name = "vxlan", len = 8, udpport = 4789, write = write }, ints)

-- Hot loop: the VNI of the header at v (uint8_t *). The outer UDP checksum,
-- 2 bytes before the VXLAN header, follows (RFC 1624; 0 stays "none").
function M.set_vni(v, vni)
  local o1, o2 = v[4] * 256 + v[5], v[6] * 256 + v[7]
  v[4] = rshift(vni, 16); v[5] = band(rshift(vni, 8), 0xff); v[6] = band(vni, 0xff)
  cs.update16(v - 2, o1, v[4] * 256 + v[5], true)
  cs.update16(v - 2, o2, v[6] * 256 + v[7], true)
end
stack.setters(M, "vxlan", { set_vni = { "vni", "integer 0..16777215" } })

function M.vni(v) return (v[4] * 256 + v[5]) * 256 + v[6] end

function M.decode(p, len)
  if len < 8 then return "vxlan (truncated)", nil, len end
  local text = ("vxlan vni %d flags 0x%02x"):format(M.vni(p), p[0])
  if band(p[0], 0x08) == 0 then return text .. " (no VNI flag)", nil, 8 end
  return text, { kind = "eth" }, 8
end

stack.readers(M, "vxlan", { "vni" })

return M
