-- checksum.lua - Internet checksums (RFC 1071) and incremental updates (RFC 1624).
local ffi = require "ffi"
local bit = require "bit"

local band, bnot, rshift = bit.band, bit.bnot, bit.rshift
local M = {}

-- Ones' complement sum of len bytes at p (uint8_t *), folded to 16 bits,
-- starting from `acc` (for pseudo headers).
function M.sum(p, len, acc)
  local s = acc or 0
  local i = 0
  while i + 1 < len do
    s = s + p[i] * 256 + p[i + 1]
    i = i + 2
  end
  if i < len then s = s + p[i] * 256 end
  while s > 0xffff do s = band(s, 0xffff) + rshift(s, 16) end
  return s
end

function M.finish(s)
  return band(bnot(s), 0xffff)
end

-- Rewrites the 16-bit checksum at c (uint8_t *) after a 16-bit word of the
-- covered data changed from old to new: HC' = ~(~HC + ~m + m').
-- zero_means_none: UDP over IPv4, where 0 means "no checksum" and a computed
-- 0 is sent as 0xffff.
function M.update16(c, old, new, zero_means_none)
  local hc = c[0] * 256 + c[1]
  if zero_means_none and hc == 0 then return end
  local s = band(bnot(hc), 0xffff) + band(bnot(old), 0xffff) + new
  s = band(s, 0xffff) + rshift(s, 16)
  s = band(s, 0xffff) + rshift(s, 16)
  local r = band(bnot(s), 0xffff)
  if zero_means_none and r == 0 then r = 0xffff end
  c[0] = rshift(r, 8)
  c[1] = band(r, 0xff)
end

M.uint8p = ffi.typeof("uint8_t *")
return M
