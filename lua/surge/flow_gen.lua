-- flow_gen.lua - the code generator behind surge.flow and surge.size: where a
-- template's layers and checksums lie, and the per-packet Lua that rewrites
-- fields and folds their checksum changes, loaded with loadstring and
-- compiled by LuaJIT's trace compiler (docs/flows.md, "How it works").
-- surge.flow turns a definition into fields and specs and calls compile();
-- surge.size emits its own loop with the same helpers (M.G).
local ffi = require "ffi"
local bit = require "bit"
local arg = require "surge.check"

local M = {}

local FRAME_END = math.huge
local aliases = { qinq = "vlan" }   -- modules whose fields are another's

local function num(v) return ("%.0f"):format(v) end

-------------------------------------------------------------------------------
-- Template layout: layers with their modules, and the checksums in the frame.

local function module_of(name)
  local ok, mod = pcall(require, "surge.proto." .. name)
  if not ok or type(mod) ~= "table" then return nil end
  if mod.fields == nil and aliases[name] then
    local ok2, alt = pcall(require, "surge.proto." .. aliases[name])
    if ok2 and type(alt) == "table" and alt.fields then
      return setmetatable({ fields = alt.fields }, { __index = mod })
    end
  end
  return mod
end

local function has_pseudo(mod)
  if not mod or not mod.fields then return false end
  for _, f in pairs(mod.fields) do if f.pseudo then return true end end
  return false
end

-- plan(t): { layers = { {name, off, len, mod} }, checksums = { ... }, hdr = header bytes }
-- A checksum: { at = offset of its 16-bit field, zero_none, kind = "header"|"l4",
--   ranges = { { from, to, base } }: bytes it covers (to exclusive, FRAME_END for
--   the end of the frame), base: where its 16-bit words start (parity),
--   pseudo_len = true when the pseudo header holds the L4 length (frame end - l4off),
--   l4off }
function M.plan(t, who)
  who = who or "surge.flow"
  if type(t) ~= "table" or type(t.bytes) ~= "string" or type(t.layers) ~= "table" then
    error(who .. ": template must come from surge.proto (a table with bytes and layers)", 0)
  end
  local layers, checksums, hdr = {}, {}, 0
  for i, l in ipairs(t.layers) do
    layers[i] = { name = l.name, off = l.off, len = l.len, mod = module_of(l.name) }
    hdr = math.max(hdr, l.off + l.len)
  end
  for i, l in ipairs(layers) do
    local mod = l.mod
    if mod and mod.header_checksum then
      checksums[#checksums + 1] = { at = l.off + mod.header_checksum, zero_none = false, kind = "header",
                                    name = l.name, ranges = { { l.off, l.off + l.len, l.off } } }
    end
    if mod and mod.checksum then
      local c = { at = l.off + mod.checksum, zero_none = mod.checksum_zero_none and true or false,
                  kind = "l4", name = l.name, l4off = l.off, ranges = { { l.off, FRAME_END, l.off } } }
      local ip = layers[i - 1]
      -- the pseudo header of the IP layer right before (not for ICMPv4, which has none)
      if ip and has_pseudo(ip.mod) and mod.pseudo_header ~= false and l.name ~= "icmp" then
        for _, f in pairs(ip.mod.fields) do
          if f.pseudo then c.ranges[#c.ranges + 1] = { ip.off + f.off, ip.off + f.off + f.bytes, ip.off } end
        end
        c.pseudo_len = true
      end
      checksums[#checksums + 1] = c
    end
  end
  -- innermost (highest offset) first: an outer checksum may cover an inner one's field
  table.sort(checksums, function(a, b) return a.at > b.at end)
  return { layers = layers, checksums = checksums, hdr = hdr, size = t.size, bytes = t.bytes }
end

-- Parity (0: the first byte is a high byte) of bytes [off, off+n) in a
-- checksum's words, or nil when the checksum does not cover them.
function M.covers(c, off, n)
  if off == c.at then return nil end
  for _, r in ipairs(c.ranges) do
    if off >= r[1] and off + n <= r[2] then return (off - r[3]) % 2 end
  end
  return nil
end

-------------------------------------------------------------------------------
-- Code generation helpers shared with surge.size.

local G = {}
M.G = G

G.prelude = [[
local bit = require "bit"
local ffi = require "ffi"
local band, bor, bxor, lshift, rshift, bswap, tobit = bit.band, bit.bor, bit.bxor, bit.lshift, bit.rshift, bit.bswap, bit.tobit
local floor, type = math.floor, type
local cast, u16p, i32p = ffi.cast, ffi.typeof("uint16_t *"), ffi.typeof("int32_t *")
]] .. arg.GEN_PRELUDE .. "\n"

-- Host-order 16-bit words (surge.size's length fields and checksums, whose
-- sums are kept in host order): one 16-bit load or store, swapped.
function G.read16(o) return ("rshift(bswap(cast(u16p, p + %d)[0]), 16)"):format(o) end
function G.write16(o, e) return ("cast(u16p, p + %d)[0] = rshift(bswap(%s), 16)"):format(o, e) end

-- Words as the CPU loads them (surge.flow): one 16-bit load or store each.
-- A ones' complement sum comes out the same in either byte order (RFC 1071
-- 2(B)), so checksums are updated on these raw words and only new field
-- values are swapped into network order.
function G.raw16(o) return ("cast(u16p, p + %d)[0]"):format(o) end
function G.wraw16(o, e) return ("cast(u16p, p + %d)[0] = %s"):format(o, e) end
function G.net16(e) return ("rshift(bswap(%s), 16)"):format(e) end

-- Emits the finalisation of every checksum with pending changes, innermost
-- first; a changed checksum field that an outer checksum covers is one more
-- change for that one. acc[c] is the name of c's accumulator; lines get the code.
-- raw: the accumulators hold raw words (surge.flow), else host-order ones.
function G.finish(lines, checksums, acc, indent, raw)
  local read16, write16 = raw and G.raw16 or G.read16, raw and G.wraw16 or G.write16
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
        local par = M.covers(outer, c.at, 2)
        if par and acc[outer] then
          lines[#lines + 1] = inner .. G.add_term(acc[outer], "bxor(hc, 65535) + r", par)
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
function G.add_term(a, term, par)
  if par == 0 then return ("%s = tobit(%s + %s)"):format(a, a, term) end
  return ("do local w = %s; w = band(w, 65535) + rshift(w, 16); w = band(w, 65535) + rshift(w, 16); " ..
          "%s = tobit(%s + bor(rshift(w, 8), lshift(band(w, 255), 8))) end"):format(term, a, a)
end

-- Every checksum that some change may touch needs an accumulator, and so do
-- the outer ones covering its field. Returns acc (checksum -> variable name).
function G.accumulators(checksums, touched, prefix)
  local acc, n = {}, 0
  for idx, c in ipairs(checksums) do
    if touched[c] and not acc[c] then n = n + 1; acc[c] = prefix .. n end
    if acc[c] then
      for j = idx + 1, #checksums do
        local outer = checksums[j]
        if M.covers(outer, c.at, 2) and not acc[outer] then n = n + 1; acc[outer] = prefix .. n end
      end
    end
  end
  return acc
end

-------------------------------------------------------------------------------
-- Compilation.

-- The counted fields (more than one value, not random) and which counters
-- move with the packet index i: in a product only the first (it varies
-- fastest; the others move when it wraps), in a zip all of them and n.
local function counters(fields, combine, count)
  local cnt, moves = {}, {}        -- moves: variable -> how many values it takes
  for j, f in ipairs(fields) do if f.spec.count > 1 and f.spec.count < math.huge then cnt[#cnt + 1] = j end end
  if combine == "product" then
    if cnt[1] then moves["d" .. cnt[1]] = fields[cnt[1]].spec.count end
  elseif #cnt > 0 then
    for _, j in ipairs(cnt) do moves["d" .. j] = fields[j].spec.count end
    moves.n = count
  end
  return cnt, moves
end

-- Code for one packet at p, the i-th of its burst: values, writes,
-- checksums. Returns a list of lines. State variables: d<j> (digits), x<j>
-- (random state), n (zip).
--
-- A counter that moves with every packet is kept as its value at i = 0 of
-- the burst (d), the packet's value being k = d + i, and the loop runs only
-- up to the packet where the next counter wraps (apply: `last`); the wrap
-- (advance) sets d back so that the next packet's k is 0, and the loop goes
-- on from there. Why: in a LuaJIT trace a variable carried from one
-- iteration to the next is a double (counters kept as "d = d + 1" cost
-- float adds, compares and conversions on every packet), while the loop
-- index is an integer and tobit(d) is invariant inside the loop. And a
-- wrap tested inside the loop is a branch the trace may record on its rare
-- side (when the trace is recorded in a wrapping iteration, the common path
-- becomes the side exit). So the loop body holds integer code and no test
-- of the counters. A counter of more than 2^31 values skips the tobit.
local function body(fields, plan, moves)
  local L = {}
  local function emit(s) L[#L + 1] = "    " .. s end
  for j, f in ipairs(fields) do
    local s = f.spec
    if s.kind == "range" or s.kind == "list" then
      local d = "d" .. j
      local int = s.count - 1 <= 2147483647 and ("tobit(%s)"):format(d) or d
      emit(("local k%d = %s%s"):format(j, int, moves[d] and " + i" or ""))
    end
  end
  local touched, cover = {}, {}
  for j, f in ipairs(fields) do
    cover[j] = {}
    for _, c in ipairs(plan.checksums) do
      local par = M.covers(c, f.off, f.bytes)
      if par then cover[j][#cover[j] + 1] = { c = c, par = par }; touched[c] = true end
    end
  end
  local acc = G.accumulators(plan.checksums, touched, "c")
  for _, c in ipairs(plan.checksums) do if acc[c] then emit(("local %s = 0"):format(acc[c])) end end
  for j, f in ipairs(fields) do
    local s, v = f.spec, "v" .. j
    emit(("-- %s: %s"):format(f.name, s.kind))
    -- each field in its own block: its old and new words are dead by the
    -- checksum's zero test, so the trace need not keep them for that exit
    emit("do")
    if s.kind == "fixed" then
      emit(("local %s = %s"):format(v, num(s.value)))
    elseif s.kind == "range" and f.bytes <= 4 then
      -- as an int32 bit pattern (what the stores and bswap take): integer
      -- adds in the trace, even for values above 2^31 (addresses)
      local from = bit.tobit(s.from)
      if s.step == 1 then emit(("local %s = tobit(%d + k%d)"):format(v, from, j))
      else emit(("local %s = tobit(%d + k%d * %s)"):format(v, from, j, num(s.step))) end
    elseif s.kind == "range" then
      if s.step == 1 then emit(("local %s = %s + k%d"):format(v, num(s.from), j))
      else emit(("local %s = %s + k%d * %s"):format(v, num(s.from), j, num(s.step))) end
    elseif s.kind == "list" then
      emit(("local %s = A%d[k%d]"):format(v, j, j))
    elseif s.kind == "random" then
      local x = "x" .. j
      local step = ("%s = bxor(%s, lshift(%s, 13)); %s = bxor(%s, rshift(%s, 17)); %s = bxor(%s, lshift(%s, 5))")
        :format(x, x, x, x, x, x, x, x, x)
      emit(step)
      if s.span <= 2 ^ 32 then
        emit(("local %s = %s + floor((%s + 2147483648) * %s * 2.3283064365386963e-10)"):format(
          v, num(s.lo), x, num(s.span)))
      else
        emit(("local u%d = %s + 2147483648"):format(j, x))
        emit(step)
        emit(("local %s = %s + floor((u%d * 1048576 + floor((%s + 2147483648) / 4096)) * %s * 2.220446049250313e-16)")
          :format(v, num(s.lo), j, x, num(s.span)))
      end
    end
    -- old words, new words, write; e<j>: sum of (65535 - old) + new over
    -- the words, all as raw loads (G.raw16): the first byte of a word is
    -- the low byte of its raw value
    local o, e = f.off, "e" .. j
    local r16, w16, n16 = G.raw16, G.wraw16, G.net16
    if f.bytes == 1 then
      emit(("local o%d = p[%d]; p[%d] = %s"):format(j, o, o, v))
      emit(("local %s = tobit(65535 - o%d + %s)"):format(e, j, v))            -- as the first byte of a word
      f.low_term = ("65535 - o%d * 256 + %s * 256"):format(j, v)              -- as the second byte
    elseif f.bytes == 2 and f.mask then
      emit(("local o%d = %s"):format(j, r16(o)))
      emit(("local n%d = %s"):format(j, n16(("bor(band(%s, %d), lshift(%s, %d))"):format(
        n16("o" .. j), bit.band(bit.bnot(f.mask), 0xffff), v, f.shift))))
      emit(w16(o, "n" .. j))
      emit(("local %s = tobit(65535 - o%d + n%d)"):format(e, j, j))
    elseif f.bytes == 2 then
      emit(("local o%d, n%d = %s, %s"):format(j, j, r16(o), n16(v)))
      emit(w16(o, "n" .. j))
      emit(("local %s = tobit(65535 - o%d + n%d)"):format(e, j, j))
    elseif f.bytes == 4 then
      -- one 32-bit load and store; its halves are the two raw words
      emit(("local o%d = cast(i32p, p + %d)[0]"):format(j, o))
      if f.mask then
        emit(("local n%d = bswap(bor(band(bswap(o%d), %d), lshift(%s, %d)))"):format(
          j, j, bit.bnot(f.mask), v, f.shift))
      else
        emit(("local n%d = bswap(%s)"):format(j, v))
      end
      emit(("cast(i32p, p + %d)[0] = n%d"):format(o, j))
      emit(("local %s = tobit(131070 - band(o%d, 65535) - rshift(o%d, 16) + band(n%d, 65535) + rshift(n%d, 16))")
        :format(e, j, j, j, j))
    else -- 6 bytes
      emit(("local o%da, o%db, o%dc = %s, %s, %s"):format(j, j, j, r16(o), r16(o + 2), r16(o + 4)))
      emit(("local n%da = floor(%s / 4294967296)"):format(j, v))
      emit(("local n%dl = %s - n%da * 4294967296"):format(j, v, j))
      emit(("local n%db, n%dc = %s, %s"):format(j, j, n16(("rshift(n%dl, 16)"):format(j)),
        n16(("band(n%dl, 65535)"):format(j))))
      emit(("n%da = %s"):format(j, n16("n" .. j .. "a")))
      emit(w16(o, ("n%da"):format(j)) .. "; " .. w16(o + 2, ("n%db"):format(j)) .. "; " ..
           w16(o + 4, ("n%dc"):format(j)))
      emit(("local %s = tobit(196605 - o%da - o%db - o%dc + n%da + n%db + n%dc)"):format(e, j, j, j, j, j, j))
    end
    for _, cv in ipairs(cover[j]) do
      if f.bytes == 1 and cv.par == 1 then
        emit(("%s = tobit(%s + %s)"):format(acc[cv.c], acc[cv.c], f.low_term))
      else
        emit(G.add_term(acc[cv.c], e, cv.par))
      end
    end
    emit("end")
  end
  G.finish(L, plan.checksums, acc, "    ", true)
  return L
end

-- The last packet of the loop that starts at i0: the burst's last, or the
-- one where a moving counter takes its last value (its k is d + i).
local function run_end(moves)
  local L = { "local last = n_ - 1" }
  local vars = {}
  for v in pairs(moves) do vars[#vars + 1] = v end
  table.sort(vars)
  for _, v in ipairs(vars) do
    if moves[v] < math.huge then
      local top = num(moves[v] - 1)
      L[#L + 1] = ("if %s - %s < last then last = %s - %s end"):format(top, v, top, v)
    end
  end
  return L
end

-- The wraps after packet `at`: a counter at its last value goes back so that
-- packet at + 1 gets 0; in a product the next counter moves (an odometer),
-- in a zip the period counter n restarts every field.
local function advance(fields, combine, count, cnt)
  local L = {}
  local function emit(s) L[#L + 1] = s end
  if combine == "product" and #cnt > 0 then
    local j1 = cnt[1]
    emit(("if d%d + at == %s then"):format(j1, num(fields[j1].spec.count - 1)))
    emit(("  d%d = -1 - at"):format(j1))
    local close = {}
    for k = 2, #cnt do
      local j, pad = cnt[k], ("  "):rep(k - 1)
      emit(pad .. ("d%d = d%d + 1"):format(j, j))
      if k < #cnt then
        emit(pad .. ("if d%d == %s then"):format(j, num(fields[j].spec.count)))
        emit(pad .. ("  d%d = 0"):format(j))
        close[#close + 1] = pad .. "end"
      else
        emit(pad .. ("if d%d == %s then d%d = 0 end"):format(j, num(fields[j].spec.count), j))
      end
    end
    for k = #close, 1, -1 do emit(close[k]) end
    emit("end")
  elseif #cnt > 0 then
    for _, j in ipairs(cnt) do
      if fields[j].spec.count ~= count then   -- one as long as the period wraps with n below
        emit(("if d%d + at == %s then d%d = -1 - at end"):format(j, num(fields[j].spec.count - 1), j))
      end
    end
    if count < math.huge then
      local resets = { "n = -1 - at" }
      for _, j in ipairs(cnt) do resets[#resets + 1] = ("d%d = -1 - at"):format(j) end
      emit(("if n + at == %s then %s end"):format(num(count - 1), table.concat(resets, "; ")))
    end
  end
  return L
end

function M.compile(fields, plan, combine, count)
  local state, init, specs = {}, {}, {}   -- specs: what restore() accepts for each
  for j, f in ipairs(fields) do
    local s = f.spec
    if s.kind == "range" or s.kind == "list" then
      state[#state + 1] = "d" .. j; init[#init + 1] = "0"
      specs[#state] = ("integer 0..%s"):format(num(s.count - 1))
    elseif s.kind == "random" then
      -- xorshift32 from the seed (never 0)
      local x = bit.tobit((s.seed * 2654435761 + 0x9e3779b9) % 2 ^ 32)
      if x == 0 then x = 0x2545f491 end
      s.x0 = x
      state[#state + 1] = "x" .. j; init[#init + 1] = tostring(x)
      specs[#state] = "integer -2147483648..2147483647"
    end
  end
  if combine == "zip" then
    state[#state + 1] = "n"; init[#init + 1] = "0"
    specs[#state] = ("integer 0..%s"):format(num(math.max(count - 1, 0)))
  end
  local S = {}
  for i, v in ipairs(state) do S[i] = "s_" .. v end
  local names, snames, inits = table.concat(state, ", "), table.concat(S, ", "), table.concat(init, ", ")
  local src = { G.prelude, "local A, bad_p = ..." }
  for j, f in ipairs(fields) do
    if f.spec.kind == "list" then src[#src + 1] = ("local A%d = A[%d]"):format(j, j) end
  end
  local cnt, moves = counters(fields, combine, count)
  local b = table.concat(body(fields, plan, moves), "\n")
  if #state > 0 then
    src[#src + 1] = ("local %s = %s"):format(snames, inits)
  end
  local function lines(list, indent) return indent .. table.concat(list, "\n" .. indent) end
  local adv = advance(fields, combine, count, cnt)
  -- the wraps after packet `at` (the source of an index), "" with no counter
  local function wraps_after(at)
    if #adv == 0 then return "" end
    return ("    local at = %s\n%s"):format(at, lines(adv, "    "))
  end
  local load_state = #state > 0 and ("    local %s = %s"):format(names, snames) or ""
  -- the counters that move with i are kept as their value at i = 0 (see body)
  local function save(after)
    if #state == 0 then return "" end
    local out = {}
    for i, v in ipairs(state) do out[i] = moves[v] and ("%s + %s"):format(v, after) or v end
    return ("    %s = %s"):format(snames, table.concat(out, ", "))
  end
  src[#src + 1] = "local function reset()"
  if #state > 0 then src[#src + 1] = ("  %s = %s"):format(snames, inits) end
  src[#src + 1] = "end"
  src[#src + 1] = ("local function get() return { %s } end"):format(snames)
  src[#src + 1] = "local function set(t)"
  for i, s in ipairs(S) do src[#src + 1] = ("  %s = t[%d]"):format(s, i) end
  src[#src + 1] = "end"
  src[#src + 1] = "local function apply(self, burst)"
  src[#src + 1] = "  local n_ = burst.n"
  -- burst.data[i] each time rather than a local for burst.data: a
  -- reference to the array is a cdata the trace cannot always sink, one
  -- allocation a burst
  src[#src + 1] = "  do"
  src[#src + 1] = load_state
  src[#src + 1] = "  local i0 = 0"
  src[#src + 1] = "  while i0 < n_ do"
  src[#src + 1] = lines(run_end(moves), "    ")
  src[#src + 1] = "  for i = i0, last do"
  src[#src + 1] = "    local p = burst.data[i]"
  src[#src + 1] = b
  src[#src + 1] = "  end"
  src[#src + 1] = wraps_after("last")
  src[#src + 1] = "    i0 = last + 1"
  src[#src + 1] = "  end"
  src[#src + 1] = save("n_")
  src[#src + 1] = "  end"
  src[#src + 1] = "  return n_"
  src[#src + 1] = "end"
  src[#src + 1] = "local function next1(self, p)"
  src[#src + 1] = ("  if not (%s) then bad_p(p, self) end"):format(arg.test_source("p", "pointer"))
  src[#src + 1] = "  do"
  src[#src + 1] = load_state
  src[#src + 1] = "  do"
  src[#src + 1] = "    local i = 0"
  src[#src + 1] = b
  src[#src + 1] = "  end"
  src[#src + 1] = wraps_after("0")
  src[#src + 1] = save("1")
  src[#src + 1] = "  end"
  src[#src + 1] = "  return p"
  src[#src + 1] = "end"
  src[#src + 1] = "return { apply = apply, next = next1, reset = reset, get = get, set = set }"
  local text = table.concat(src, "\n")
  local chunk, err = loadstring(text, "=surge.flow")
  if not chunk then error("surge.flow: internal: generated code does not load: " .. err .. "\n" .. text, 0) end
  local arrays = {}
  for j, f in ipairs(fields) do
    if f.spec.kind == "list" then
      -- up to 4 bytes as int32 bit patterns (an integer load in the trace)
      local vals = f.spec.values
      if f.bytes <= 4 then
        vals = {}
        for i, x in ipairs(f.spec.values) do vals[i] = bit.tobit(x) end
      end
      arrays[j] = ffi.new(f.bytes <= 4 and "int32_t[?]" or "double[?]", #vals, vals)
    end
  end
  local fns = chunk(arrays, function(p, self)
    -- f.next(p): p came as self, and p is nil
    if type(self) ~= "table" or rawget(self, "_fns") == nil then
      arg.raise(("flow:next: expected a flow as self, got %s (call it with ':')"):format(arg.show(self)))
    end
    arg.expect(p, "pointer", "flow:next", "p")
  end)
  fns.arrays = arrays   -- keep the lists alive
  fns.state_specs = specs
  return fns, text
end
return M
