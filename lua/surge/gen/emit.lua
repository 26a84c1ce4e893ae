-- gen/emit.lua - the pieces of generated Lua that surge.flow and surge.size
-- both emit: the chunk's prelude, 16-bit loads and stores, and the RFC 1624
-- checksum updates with their accumulators.
local check = require("surge.check")
local layout = require("surge.gen.layout")

local M = {}

M.prelude = [[
local bit = require("bit")
local ffi = require("ffi")
local band, bor, bxor, lshift, rshift, bswap, tobit = bit.band, bit.bor, bit.bxor, bit.lshift, bit.rshift, bit.bswap, bit.tobit
local floor, type = math.floor, type
local cast, u16p, i32p = ffi.cast, ffi.typeof("uint16_t *"), ffi.typeof("int32_t *")
]] .. check.GEN_PRELUDE .. "\n"

-- Host-order 16-bit words (surge.size's length fields and checksums, whose
-- sums are kept in host order): one 16-bit load or store, swapped.
function M.read16(o) return ("rshift(bswap(cast(u16p, p + %d)[0]), 16)"):format(o) end
function M.write16(o, e) return ("cast(u16p, p + %d)[0] = rshift(bswap(%s), 16)"):format(o, e) end

-- Words as the CPU loads them (surge.flow): one 16-bit load or store each.
-- A ones' complement sum comes out the same in either byte order (RFC 1071
-- 2(B)), so checksums are updated on these raw words and only new field
-- values are swapped into network order.
function M.raw16(o) return ("cast(u16p, p + %d)[0]"):format(o) end
function M.wraw16(o, e) return ("cast(u16p, p + %d)[0] = %s"):format(o, e) end
function M.net16(e) return ("rshift(bswap(%s), 16)"):format(e) end

-- Emits the finalisation of every checksum with pending changes, innermost
-- first; a changed checksum field that an outer checksum covers is one more
-- change for that one. acc[c] is the name of c's accumulator; lines get the code.
-- raw: the accumulators hold raw words (surge.flow), else host-order ones.
function M.finish(lines, checksums, acc, indent, raw)
  local read16, write16 = raw and M.raw16 or M.read16, raw and M.wraw16 or M.write16
  for idx, c in ipairs(checksums) do
    if acc[c] then
      local a = acc[c]
      lines[#lines + 1] = indent .. "do"
      lines[#lines + 1] = indent .. "  local hc = " .. read16(c.at)
      local inner = indent .. "  "
      if c.zero_none then
        lines[#lines + 1] = indent .. "  if hc ~= 0 then"
        inner = indent .. "    "
      end
      -- HC' = ~fold(fold(S)) for S = ~HC + the changes (RFC 1624 eqn. 3),
      -- every step under a bit op: plain 32-bit adds in the trace, no
      -- overflow guards. Where 0 means "no checksum" a computed 0 goes out
      -- as 65535: HC' = ~(S mod 65535) = ~(fold(fold(S) + 1) - 1), without
      -- a branch (checksum.lua's adjust shows why; the accumulators stay far
      -- below 2^31, so the first fold leaves at most 0x1fffd)
      lines[#lines + 1] = inner .. ("local s = bxor(hc, 65535) + %s"):format(a)
      if c.zero_none then
        lines[#lines + 1] = inner .. "s = band(s, 65535) + rshift(s, 16) + 1"
        lines[#lines + 1] = inner .. "local r = bxor(band(s, 65535) + rshift(s, 16) - 1, 65535)"
      else
        lines[#lines + 1] = inner .. "s = band(s, 65535) + rshift(s, 16); s = band(s, 65535) + rshift(s, 16)"
        lines[#lines + 1] = inner .. "local r = bxor(s, 65535)"
      end
      lines[#lines + 1] = inner .. write16(c.at, "r")
      for j = idx + 1, #checksums do
        local outer = checksums[j]
        local par = layout.covers(outer, c.at, 2)
        if par and acc[outer] then
          lines[#lines + 1] = inner .. M.add_term(acc[outer], "bxor(hc, 65535) + r", par)
        elseif par then
          error("surge.flow: internal: outer checksum without accumulator", 0)
        end
      end
      if c.zero_none then lines[#lines + 1] = indent .. "  end" end
      lines[#lines + 1] = indent .. "end"
    end
  end
end

-- acc = acc + term, where term is a sum of 16-bit words at parity par
-- (1: the words sit at odd positions: add them byte-swapped). Under tobit:
-- the sums are far from 2^31, and a value the trace must keep exact (an
-- accumulator is live at the zero-checksum guard) would otherwise be an
-- overflow-checked add next to the plain one the folds use.
function M.add_term(a, term, par)
  if par == 0 then return ("%s = tobit(%s + %s)"):format(a, a, term) end
  return ("do local w = %s; w = band(w, 65535) + rshift(w, 16); w = band(w, 65535) + rshift(w, 16); " ..
          "%s = tobit(%s + bor(rshift(w, 8), lshift(band(w, 255), 8))) end"):format(term, a, a)
end

-- Every checksum that some change may touch needs an accumulator, and so do
-- the outer ones covering its field. Returns acc (checksum -> variable name).
function M.accumulators(checksums, touched, prefix)
  local acc, n = {}, 0
  for idx, c in ipairs(checksums) do
    if touched[c] and not acc[c] then n = n + 1; acc[c] = prefix .. n end
    if acc[c] then
      for j = idx + 1, #checksums do
        local outer = checksums[j]
        if layout.covers(outer, c.at, 2) and not acc[outer] then n = n + 1; acc[outer] = prefix .. n end
      end
    end
  end
  return acc
end

return M
