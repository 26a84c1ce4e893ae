-- gen/flow.lua - surge.flow's generator: the per-packet Lua that rewrites
-- a flow's fields and folds their checksum changes, loaded with loadstring
-- and compiled by LuaJIT's trace compiler (docs/flows.md, "How it works").
-- surge.flow turns a definition into fields and specs and calls compile().
local ffi = require("ffi")
local bit = require("bit")
local check = require("surge.check")
local gen = require("surge.gen")
local layout, emit, loop, seed = gen.layout, gen.emit, gen.loop, gen.seed

local M = {}

-- The template's layout compile() takes (surge.gen.layout's plan).
M.plan = layout.plan

local function num(v) return ("%.0f"):format(v) end

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
-- A counter that moves with every packet is k = d + i, its value at i = 0
-- of the run plus the loop index (gen/loop.lua says why); the wrap
-- (advance) sets d back so that the next packet's k is 0. A counter of
-- more than 2^31 values skips the tobit.
local function body(fields, plan, moves)
  local L = {}
  local function put(s) L[#L + 1] = "    " .. s end
  for j, f in ipairs(fields) do
    local s = f.spec
    if s.kind == "range" or s.kind == "list" then
      local d = "d" .. j
      local int = s.count - 1 <= 2147483647 and ("tobit(%s)"):format(d) or d
      put(("local k%d = %s%s"):format(j, int, moves[d] and " + i" or ""))
    end
  end
  local touched, cover = {}, {}
  for j, f in ipairs(fields) do
    cover[j] = {}
    for _, c in ipairs(plan.checksums) do
      local par = layout.covers(c, f.off, f.bytes)
      if par then cover[j][#cover[j] + 1] = { c = c, par = par }; touched[c] = true end
    end
  end
  local acc = emit.accumulators(plan.checksums, touched, "c")
  for _, c in ipairs(plan.checksums) do if acc[c] then put(("local %s = 0"):format(acc[c])) end end
  for j, f in ipairs(fields) do
    local s, v = f.spec, "v" .. j
    put(("-- %s: %s"):format(f.name, s.kind))
    -- each field in its own block: its old and new words are dead by the
    -- checksum's zero test, so the trace need not keep them for that exit
    put("do")
    if s.kind == "fixed" then
      put(("local %s = %s"):format(v, num(s.value)))
    elseif s.kind == "range" and f.bytes <= 4 then
      -- as an int32 bit pattern (what the stores and bswap take): integer
      -- adds in the trace, even for values above 2^31 (addresses)
      local from = bit.tobit(s.from)
      if s.step == 1 then put(("local %s = tobit(%d + k%d)"):format(v, from, j))
      else put(("local %s = tobit(%d + k%d * %s)"):format(v, from, j, num(s.step))) end
    elseif s.kind == "range" then
      if s.step == 1 then put(("local %s = %s + k%d"):format(v, num(s.from), j))
      else put(("local %s = %s + k%d * %s"):format(v, num(s.from), j, num(s.step))) end
    elseif s.kind == "list" then
      put(("local %s = A%d[k%d]"):format(v, j, j))
    elseif s.kind == "random" then
      local x = "x" .. j
      local step = seed.step_source(x)
      put(step)
      if s.span <= 2 ^ 32 then
        put(("local %s = %s + floor((%s + 2147483648) * %s * 2.3283064365386963e-10)"):format(
          v, num(s.lo), x, num(s.span)))
      else
        put(("local u%d = %s + 2147483648"):format(j, x))
        put(step)
        put(("local %s = %s + floor((u%d * 1048576 + floor((%s + 2147483648) / 4096)) * %s * 2.220446049250313e-16)")
          :format(v, num(s.lo), j, x, num(s.span)))
      end
    end
    -- old words, new words, write; e<j>: sum of (65535 - old) + new over
    -- the words, all as raw loads (emit.raw16): the first byte of a word is
    -- the low byte of its raw value
    local o, e = f.off, "e" .. j
    local r16, w16, n16 = emit.raw16, emit.wraw16, emit.net16
    if f.bytes == 1 then
      put(("local o%d = p[%d]; p[%d] = %s"):format(j, o, o, v))
      put(("local %s = tobit(65535 - o%d + %s)"):format(e, j, v))            -- as the first byte of a word
      f.low_term = ("65535 - o%d * 256 + %s * 256"):format(j, v)              -- as the second byte
    elseif f.bytes == 2 and f.mask then
      put(("local o%d = %s"):format(j, r16(o)))
      put(("local n%d = %s"):format(j, n16(("bor(band(%s, %d), lshift(%s, %d))"):format(
        n16("o" .. j), bit.band(bit.bnot(f.mask), 0xffff), v, f.shift))))
      put(w16(o, "n" .. j))
      put(("local %s = tobit(65535 - o%d + n%d)"):format(e, j, j))
    elseif f.bytes == 2 then
      put(("local o%d, n%d = %s, %s"):format(j, j, r16(o), n16(v)))
      put(w16(o, "n" .. j))
      put(("local %s = tobit(65535 - o%d + n%d)"):format(e, j, j))
    elseif f.bytes == 4 then
      -- one 32-bit load and store; its halves are the two raw words
      put(("local o%d = cast(i32p, p + %d)[0]"):format(j, o))
      if f.mask then
        put(("local n%d = bswap(bor(band(bswap(o%d), %d), lshift(%s, %d)))"):format(
          j, j, bit.bnot(f.mask), v, f.shift))
      else
        put(("local n%d = bswap(%s)"):format(j, v))
      end
      put(("cast(i32p, p + %d)[0] = n%d"):format(o, j))
      put(("local %s = tobit(131070 - band(o%d, 65535) - rshift(o%d, 16) + band(n%d, 65535) + rshift(n%d, 16))")
        :format(e, j, j, j, j))
    else -- 6 bytes
      put(("local o%da, o%db, o%dc = %s, %s, %s"):format(j, j, j, r16(o), r16(o + 2), r16(o + 4)))
      put(("local n%da = floor(%s / 4294967296)"):format(j, v))
      put(("local n%dl = %s - n%da * 4294967296"):format(j, v, j))
      put(("local n%db, n%dc = %s, %s"):format(j, j, n16(("rshift(n%dl, 16)"):format(j)),
        n16(("band(n%dl, 65535)"):format(j))))
      put(("n%da = %s"):format(j, n16("n" .. j .. "a")))
      put(w16(o, ("n%da"):format(j)) .. "; " .. w16(o + 2, ("n%db"):format(j)) .. "; " ..
           w16(o + 4, ("n%dc"):format(j)))
      put(("local %s = tobit(196605 - o%da - o%db - o%dc + n%da + n%db + n%dc)"):format(e, j, j, j, j, j, j))
    end
    for _, cv in ipairs(cover[j]) do
      if f.bytes == 1 and cv.par == 1 then
        put(("%s = tobit(%s + %s)"):format(acc[cv.c], acc[cv.c], f.low_term))
      else
        put(emit.add_term(acc[cv.c], e, cv.par))
      end
    end
    put("end")
  end
  emit.finish(L, plan.checksums, acc, "    ", true)
  return L
end

-- The wraps after packet `at`: a counter at its last value goes back so that
-- packet at + 1 gets 0; in a product the next counter moves (an odometer),
-- in a zip the period counter n restarts every field.
local function advance(fields, combine, count, cnt)
  local L = {}
  local function put(s) L[#L + 1] = s end
  if combine == "product" and #cnt > 0 then
    local j1 = cnt[1]
    put(("if d%d + at == %s then"):format(j1, num(fields[j1].spec.count - 1)))
    put(("  d%d = -1 - at"):format(j1))
    local close = {}
    for k = 2, #cnt do
      local j, pad = cnt[k], ("  "):rep(k - 1)
      put(pad .. ("d%d = d%d + 1"):format(j, j))
      if k < #cnt then
        put(pad .. ("if d%d == %s then"):format(j, num(fields[j].spec.count)))
        put(pad .. ("  d%d = 0"):format(j))
        close[#close + 1] = pad .. "end"
      else
        put(pad .. ("if d%d == %s then d%d = 0 end"):format(j, num(fields[j].spec.count), j))
      end
    end
    for k = #close, 1, -1 do put(close[k]) end
    put("end")
  elseif #cnt > 0 then
    for _, j in ipairs(cnt) do
      if fields[j].spec.count ~= count then   -- one as long as the period wraps with n below
        put(("if d%d + at == %s then d%d = -1 - at end"):format(j, num(fields[j].spec.count - 1), j))
      end
    end
    if count < math.huge then
      local resets = { "n = -1 - at" }
      for _, j in ipairs(cnt) do resets[#resets + 1] = ("d%d = -1 - at"):format(j) end
      put(("if n + at == %s then %s end"):format(num(count - 1), table.concat(resets, "; ")))
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
      local x = seed.state(s.seed)
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
  local snames, inits = table.concat(S, ", "), table.concat(init, ", ")
  local src = { emit.prelude, "local A, bad_p = ..." }
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
  src[#src + 1] = "local function reset()"
  if #state > 0 then src[#src + 1] = ("  %s = %s"):format(snames, inits) end
  src[#src + 1] = "end"
  src[#src + 1] = ("local function get() return { %s } end"):format(snames)
  src[#src + 1] = "local function set(t)"
  for i, s in ipairs(S) do src[#src + 1] = ("  %s = t[%d]"):format(s, i) end
  src[#src + 1] = "end"
  src[#src + 1] = loop.apply{ names = state, slots = S, moves = moves, wraps = wraps_after("last"),
                              packet = "    local p = burst.data[i]\n" .. b }
  src[#src + 1] = "local function next1(self, p)"
  src[#src + 1] = loop.pointer_test("p, self")
  src[#src + 1] = "  do"
  src[#src + 1] = loop.load(state, S)
  src[#src + 1] = "  do"
  src[#src + 1] = "    local i = 0"
  src[#src + 1] = b
  src[#src + 1] = "  end"
  src[#src + 1] = wraps_after("0")
  src[#src + 1] = loop.save(state, S, moves, "1")
  src[#src + 1] = "  end"
  src[#src + 1] = "  return p"
  src[#src + 1] = "end"
  src[#src + 1] = "return { apply = apply, next = next1, reset = reset, get = get, set = set }"
  local text = table.concat(src, "\n")
  local chunk = loop.chunk(text, "surge.flow")
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
      check.raise(("flow:next: expected a flow as self, got %s (call it with ':')"):format(check.show(self)))
    end
    check.expect(p, "pointer", "flow:next", "p")
  end)
  fns.arrays = arrays   -- keep the lists alive
  fns.state_specs = specs
  return fns, text
end

return M
