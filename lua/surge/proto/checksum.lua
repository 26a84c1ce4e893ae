-- checksum.lua - Internet checksums (RFC 1071) and incremental updates (RFC 1624).
local ffi = require("ffi")
local bit = require("bit")

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

-- For hot-loop setters (ip4's and ip6's addresses): writes v (32 bits) at
-- p[at] and returns the old and new 16-bit halves, which an L4 checksum
-- (and ip4's header checksum) follows with checksum.update16.
function M.swap32(p, at, v)
  local oh, ol = p[at] * 256 + p[at + 1], p[at + 2] * 256 + p[at + 3]
  local nh, nl = rshift(v, 16), band(v, 0xffff)
  p[at] = rshift(nh, 8); p[at + 1] = band(nh, 0xff); p[at + 2] = rshift(nl, 8); p[at + 3] = band(nl, 0xff)
  return oh, ol, nh, nl
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

-- The hot-loop form. A ones' complement sum comes out the same whichever
-- byte order its words are read in (RFC 1071, section 2(B)), so setters read
-- and write 16-bit words through a uint16_t * as the CPU loads them (network
-- bytes, swapped in the register on little-endian machines) and turn only
-- the new value into that order: one load and one store per word instead
-- of two of each per byte, and no swap of the checksum itself.
local bswap, bxor = bit.bswap, bit.bxor
M.uint16p = ffi.typeof("uint16_t *")

-- A host-order 16-bit value as a uint16_t load of its network bytes reads it.
local function net16(v) return rshift(bswap(v), 16) end
M.net16 = net16

-- Folds the change of up to two covered words (o1 to n1, o2 to n2, all as
-- loaded) into the checksum word w[ck]: HC' = ~(~HC + ~m + m') for each
-- word (RFC 1624, eqn. 3). Five 16-bit terms fit the two folds. Takes the
-- words rather than a precomputed delta on purpose: no arithmetic result is
-- then live in a trace snapshot (the guard on hc is the last exit), so the
-- JIT computes the sum in plain 32-bit adds under the fold's bit ops and
-- keeps no overflow-checked copy of it. A one-word change passes 0xffff, 0
-- for the second word, which folds away as a constant.
--
-- zero_means_none as in update16: 0 is never written, a computed 0 goes out
-- as 0xffff. That is HC' = 0xffff - (S mod 0xffff) for the sum S, and
-- S mod 0xffff = fold(fold(S) + 1) - 1 (the first fold is at most 0x10003,
-- so the second is exact: 0..0xfffe), hence HC' = ~(fold(fold(S) + 1) - 1):
-- 1..0xffff, no branch, and every step under a bit op (no overflow guard,
-- as a negation would need). Otherwise (TCP) HC' is
-- ~fold(fold(S)), 0..0xfffe, as a checksum computed from scratch gives.
local function adjust(w, ck, o1, n1, o2, n2, zero_means_none)
  local hc = w[ck]
  if zero_means_none and hc == 0 then return end
  local s = bxor(hc, 0xffff) + bxor(o1, 0xffff) + n1 + bxor(o2, 0xffff) + n2
  if zero_means_none then
    s = band(s, 0xffff) + rshift(s, 16) + 1
    w[ck] = bxor(band(s, 0xffff) + rshift(s, 16) - 1, 0xffff)
  else
    s = band(s, 0xffff) + rshift(s, 16)
    s = band(s, 0xffff) + rshift(s, 16)
    w[ck] = bxor(s, 0xffff)
  end
end

-- Sets the 16-bit field at byte offset `at` of p (uint8_t *; `at` and `ck`
-- even, so the words line up with the ones the checksum adds) to host value
-- v and adjusts the checksum at byte offset `ck`.
function M.set16(p, at, ck, v, zero_means_none)
  local w = ffi.cast(M.uint16p, p)
  local i = rshift(at, 1)
  local old, new = w[i], net16(v)
  w[i] = new
  adjust(w, rshift(ck, 1), old, new, 0xffff, 0, zero_means_none)
end

-- The same for a 32-bit field (two words); v is 0..2^32-1.
function M.set32(p, at, ck, v, zero_means_none)
  local w = ffi.cast(M.uint16p, p)
  local i = rshift(at, 1)
  local oh, ol = w[i], w[i + 1]
  local nh, nl = net16(rshift(v, 16)), net16(band(v, 0xffff))
  w[i], w[i + 1] = nh, nl
  adjust(w, rshift(ck, 1), oh, nh, ol, nl, zero_means_none)
end

M.uint8p = ffi.typeof("uint8_t *")
-- The public helpers check their arguments (a NULL or non-byte p, a length
-- or word outside its range) at the user's line: one generator, as for the
-- setters (surge.check.hot).
do
  local check = require("surge.check")
  M.sum = check.hot(M.sum, "surge.proto.checksum.sum",
    { { "p", "pointer" }, { "len", "integer 0..2147483647" }, { "acc", "integer? 0..4294967295" } })
  M.update16 = check.hot(M.update16, "surge.proto.checksum.update16", { { "c", "pointer" },
    { "old", "integer 0..65535" }, { "new", "integer 0..65535" }, { "zero_means_none", "boolean?" } })
end

return M
