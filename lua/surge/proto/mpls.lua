-- mpls.lua - MPLS label stack entry (RFC 3032): 4 bytes, ethertype 0x8847.
--
--   surge.proto.stack{ L.eth{}, L.mpls{ label = 100 }, L.mpls{ label = 200, tc = 5 },
--                      L.ip4{}, L.udp{} }
--
-- label 0..1048575, tc 0..7, ttl (default 64); s (bottom of stack) is set
-- when the next layer is not mpls (s = 0 or 1 overrides it). After the
-- bottom entry comes IPv4 or IPv6: the decoder guesses from the version
-- nibble. MPLS has no checksum.
local bit = require("bit")
local stack = require("surge.proto.stack")

local band, rshift = bit.band, bit.rshift
local M = { size = 4 }

M.fields = { label = { off = 0, bytes = 4, mask = 0xfffff000 }, tc = { off = 0, bytes = 4, mask = 0x00000e00 },
             ttl = { off = 3, bytes = 1 }, s = { off = 2, bytes = 2, mask = 0x0100 } }

-- Writes one label stack entry at p.
function M.write(p, label, tc, s, ttl)
  stack.put32(p, label * 4096 + tc * 512 + s * 256 + ttl)
end

local allowed = { label = 1, tc = 1, ttl = 1, s = 1 }

local function write(self, p, ctx)
  local s = self.s
  if s == nil then s = (ctx.next and ctx.next.name == "mpls") and 0 or 1 end
  M.write(p, self.label, self.tc, s, self.ttl)
end

local ints = { { "label", 0, 0, 1048575 }, { "tc", 0, 0, 7 }, { "ttl", 64, 0, 255 }, { "s", nil, 0, 1 } }
M.layer = stack.layer_fn(allowed, { name = "mpls", len = 4, ethertype = 0x8847, write = write }, ints)

-- Hot loop on m (uint8_t * to the entry): tc, s and ttl are kept.
function M.set_label(m, v)
  m[0] = band(rshift(v, 12), 0xff)
  m[1] = band(rshift(v, 4), 0xff)
  m[2] = band(v, 15) * 16 + m[2] % 16
end

function M.set_ttl(m, v) m[3] = v end
stack.setters(M, "mpls", { set_label = "integer 0..1048575", set_ttl = "integer 0..255" })
function M.label(m) return rshift(stack.get32(m), 12) end

function M.decode(p, len)
  if len < 4 then return "mpls (truncated)", nil, len end
  local w = stack.get32(p)
  local s = band(rshift(w, 8), 1)
  local text = ("mpls label %d tc %d s %d ttl %d"):format(rshift(w, 12), band(rshift(w, 9), 7), s, band(w, 0xff))
  if s == 0 then return text, { kind = "mpls" }, 4 end
  local v = len > 4 and rshift(p[4], 4)
  return text, v == 4 and { kind = "ip4" } or v == 6 and { kind = "ip6" } or nil, 4
end

stack.readers(M, "mpls", { "label" })

return M
