-- size.lua - frame sizes per packet: fixed, uniform, weighted, IMIX.
--
--   local size = require "surge.size"
--   local sz = size.new("imix")                       -- 60/566/1514 bytes, 7:4:1
--   local t  = sz:template(surge.proto.udp{ ... })    -- the template grown to the largest size
--   local pool = surge.pool{ template = t }
--   ... burst:alloc(); flow:apply(burst); sz:apply(burst) ...
--
-- Sizes are frame lengths WITHOUT the 4-byte FCS, like burst.len[i] and
-- --size everywhere in surge: "imix" is 60/566/1514 here, 64/570/1518 on the
-- wire with the FCS.
--
-- Specs: N (fixed); "imix"; { uniform = { LO, HI }, seed = S };
-- { weighted = { {SIZE, WEIGHT}, ... }, seed = S } or the bare list of pairs;
-- { seq = { s1, s2, ... } } (these sizes in this order).
--
-- The spec becomes a table of sizes, built once: blocks of W entries (W = the
-- sum of integer weights, or every size once for uniform), each block holding
-- the exact proportions in a shuffled order (fixed seed: the same table every
-- run). A packet costs one table read and a counter.
--
-- Headers carry lengths: sz:apply(burst) with a bound template (sz:template(t)
-- or sz:apply(burst, t)) also rewrites the IPv4 total length, the IPv6 payload
-- length and the UDP length of every such layer, and keeps the IPv4 header
-- and L4 checksums valid with incremental updates (the payload bytes the
-- frame loses or gains are accounted from a table of partial sums).
local ffi = require "ffi"
local bit = require "bit"
local gen = require "surge.flow_gen"
local arg = require "surge.check"

local M = {}

local DEFAULT_MAX = 1514   -- a standard Ethernet frame without FCS
local DEFAULT_MIN = 60
local BLOCKS_TO = 1024     -- the table holds whole blocks, at least this many entries

M.IMIX = { { 60, 7 }, { 566, 4 }, { 1514, 1 } }

local function fail(fmt, ...) error(("surge.size: " .. fmt):format(...), 0) end

-- Length fields a frame size changes: layer name -> { offset in the layer, value = size - layer offset - minus }
local LENGTH_FIELDS = { ip4 = { 2, 0 }, ip6 = { 4, 40 }, udp = { 4, 0 } }
M.LENGTH_FIELDS = LENGTH_FIELDS

-------------------------------------------------------------------------------
-- The table of sizes.

local function rng(seed)
  local x = bit.tobit((seed * 2654435761 + 0x9e3779b9) % 2 ^ 32)
  if x == 0 then x = 0x2545f491 end
  return function(n)   -- 0..n-1
    x = bit.bxor(x, bit.lshift(x, 13)); x = bit.bxor(x, bit.rshift(x, 17)); x = bit.bxor(x, bit.lshift(x, 5))
    return math.floor((x + 2147483648) * n / 4294967296)
  end
end

-- block: a list of sizes with the exact proportions; returns the table (Lua
-- list) of whole blocks, each shuffled.
local function blocks(block, seed, shuffle)
  local W = #block
  local nb = math.max(1, math.ceil(BLOCKS_TO / W))
  local r = rng(seed)
  local out = {}
  for b = 1, nb do
    local blk = {}
    for i = 1, W do blk[i] = block[i] end
    if shuffle then
      for i = W, 2, -1 do
        local j = r(i) + 1
        blk[i], blk[j] = blk[j], blk[i]
      end
    end
    for i = 1, W do out[(b - 1) * W + i] = blk[i] end
  end
  return out
end

local function check_int(v, what)
  if type(v) ~= "number" or v ~= math.floor(v) then fail("%s = %s is not a whole number", what, tostring(v)) end
  return v
end

-- Weighted pairs -> one exact block. Integer weights keep their exact ratio
-- (sum up to 65536); other weights are scaled to a block of 10000.
local function weighted_block(pairs_, what)
  if type(pairs_) ~= "table" or #pairs_ == 0 then fail("%s needs { {SIZE, WEIGHT}, ... }", what) end
  local total, ints = 0, true
  for i, p in ipairs(pairs_) do
    if type(p) ~= "table" or type(p[1]) ~= "number" or type(p[2]) ~= "number" or p[3] ~= nil then
      fail("%s[%d]: give { SIZE, WEIGHT }", what, i)
    end
    check_int(p[1], "size")
    if p[2] < 0 or p[2] ~= p[2] or p[2] == math.huge then fail("%s[%d]: weight %s must be 0 or more", what, i, tostring(p[2])) end
    if p[2] ~= math.floor(p[2]) then ints = false end
    total = total + p[2]
  end
  if total <= 0 then fail("%s: the weights add up to 0", what) end
  local counts = {}
  if ints and total <= 65536 then
    -- divide by the common divisor: 70:40:10 is a block of 12
    local function gcd(a, b) while b ~= 0 do a, b = b, a % b end return a end
    local g = 0
    for _, p in ipairs(pairs_) do g = gcd(p[2], g) end
    for i, p in ipairs(pairs_) do counts[i] = p[2] / g end
  else
    -- largest remainder to a block of 10000
    local N, sum, rem = 10000, 0, {}
    for i, p in ipairs(pairs_) do
      local exact = p[2] / total * N
      counts[i] = math.floor(exact)
      sum = sum + counts[i]
      rem[#rem + 1] = { i = i, r = exact - counts[i] }
    end
    table.sort(rem, function(a, b) if a.r ~= b.r then return a.r > b.r end return a.i < b.i end)
    for k = 1, N - sum do counts[rem[k].i] = counts[rem[k].i] + 1 end
  end
  local block = {}
  for i, p in ipairs(pairs_) do
    for _ = 1, counts[i] do block[#block + 1] = p[1] end
  end
  return block
end

local spec_keys = { uniform = 1, weighted = 1, seq = 1, seed = 1 }

-- spec -> Lua list of sizes (the table), and a description.
local function table_of(spec)
  if type(spec) == "number" then
    check_int(spec, "size")
    return { spec }, ("%d bytes"):format(spec)
  end
  if spec == "imix" then
    return blocks(weighted_block(M.IMIX, "imix"), 1, true), "imix 60/566/1514 bytes 7:4:1 (64/570/1518 with FCS)"
  end
  if type(spec) ~= "table" then
    fail("spec %s: give a size, \"imix\", { uniform = {LO, HI} }, { weighted = { {SIZE, WEIGHT}, ... } } " ..
         "or { seq = { ... } }", tostring(spec))
  end
  if #spec > 0 then   -- a bare weights table
    return blocks(weighted_block(spec, "weights"), 1, true), "weighted"
  end
  for k in pairs(spec) do
    if not spec_keys[k] then fail("unknown key '%s' (uniform, weighted, seq, seed)", tostring(k)) end
  end
  local seed = spec.seed or 1
  check_int(seed, "seed")
  if spec.uniform ~= nil then
    if spec.weighted ~= nil or spec.seq ~= nil then fail("give one of uniform, weighted, seq") end
    local u = spec.uniform
    if type(u) ~= "table" or type(u[1]) ~= "number" or type(u[2]) ~= "number" or u[3] ~= nil then
      fail("uniform needs { LO, HI }")
    end
    local lo, hi = check_int(u[1], "uniform low"), check_int(u[2], "uniform high")
    if lo > hi then fail("uniform = { %d, %d }: low is above high", lo, hi) end
    if hi - lo + 1 > 65536 then fail("uniform = { %d, %d }: too wide", lo, hi) end
    local block = {}
    for s = lo, hi do block[#block + 1] = s end
    return blocks(block, seed, true), ("uniform %d..%d"):format(lo, hi)
  elseif spec.weighted ~= nil then
    if spec.seq ~= nil then fail("give one of uniform, weighted, seq") end
    return blocks(weighted_block(spec.weighted, "weighted"), seed, true), "weighted"
  elseif spec.seq ~= nil then
    if spec.seed ~= nil then fail("seed goes with uniform or weighted") end
    local l = spec.seq
    if type(l) ~= "table" or #l == 0 then fail("seq needs a list of sizes") end
    local out = {}
    for i, s in ipairs(l) do
      if type(s) ~= "number" then fail("seq[%d] = %s is not a size", i, tostring(s)) end
      out[i] = check_int(s, "size")
    end
    return out, "sequence"
  end
  fail("give one of uniform, weighted, seq")
end

-------------------------------------------------------------------------------
-- Header rewriting for a template's layout.

-- The generated per-packet code: L (new size), p (packet); reads the old size
-- from the first length field.
local function compile(sz, t)
  local plan = gen.plan(t, "surge.size")
  local G = gen.G
  local lens = {}
  for _, l in ipairs(plan.layers) do
    local lf = LENGTH_FIELDS[l.name]
    if lf then lens[#lens + 1] = { at = l.off + lf[1], sub = l.off + lf[2], name = l.name } end
  end
  local hdr = plan.hdr
  if sz.min < hdr then
    fail("sizes from %d bytes, but the template's headers take %d", sz.min, hdr)
  end
  if t.size < sz.largest then
    fail("sizes reach %d bytes but the template has %d: make the pool from sz:template(t), " ..
         "or build the template with size = %d", sz.largest, t.size, sz.largest)
  end
  -- payload sums: per L4 checksum, the ones' complement sum of bytes [hdr, L)
  -- in that checksum's words, for every L up to the template size
  local bytes = ffi.cast("const uint8_t *", t.bytes)
  local sums = {}
  local touched, terms = {}, {}
  for _, c in ipairs(plan.checksums) do
    terms[c] = {}
    local nlen = 0
    for _, lf in ipairs(lens) do
      local par = gen.covers(c, lf.at, 2)
      if par then
        if par ~= 0 then fail("internal: length field at an odd position") end
        nlen = nlen + 1
      end
    end
    if c.pseudo_len then nlen = nlen + 1 end
    if nlen > 0 then terms[c].nlen = nlen; touched[c] = true end
    if c.kind == "l4" then
      local base = c.ranges[1][3]
      local arr = ffi.new("uint16_t[?]", t.size + 1)
      local s = 0
      for L = 0, t.size do
        if L > hdr then
          local o = L - 1
          s = s + ((o - base) % 2 == 0 and bytes[o] * 256 or bytes[o])
          if s > 0xffff then s = s % 0xffff; if s == 0 then s = 0xffff end end
        end
        arr[L] = s
      end
      sums[#sums + 1] = arr
      terms[c].sums = "P" .. #sums
      touched[c] = true
    end
  end
  local acc = G.accumulators(plan.checksums, touched, "c")
  local B = {}
  local function emit(s) B[#B + 1] = "      " .. s end
  -- Rewritten whether or not the size changed: with oL == L every term is
  -- 65535, ones' complement zero, and the checksums keep their bytes (none
  -- holds 0xffff, which only a "no checksum" rule writes, and that rule
  -- maps the sum back to it). A test for oL ~= L would be a branch the
  -- trace cannot predict, its side exit taken for about half the packets
  -- of a random mix. The sums under tobit, as in surge.flow.
  if #lens > 0 then
    local first = lens[1]
    emit(("local oL = %s + %d"):format(G.read16(first.at), first.sub))
    emit("local dl = tobit(65535 - oL + L)")
    for _, lf in ipairs(lens) do
      emit(G.write16(lf.at, ("(L - %d)"):format(lf.sub)))
    end
    for _, c in ipairs(plan.checksums) do
      if acc[c] then
        local parts = {}
        if terms[c].nlen then parts[#parts + 1] = terms[c].nlen == 1 and "dl" or ("%d * dl"):format(terms[c].nlen) end
        if terms[c].sums then parts[#parts + 1] = ("65535 - %s[oL] + %s[L]"):format(terms[c].sums, terms[c].sums) end
        emit(("local %s = tobit(%s)"):format(acc[c], #parts > 0 and table.concat(parts, " + ") or "0"))
      end
    end
    G.finish(B, plan.checksums, acc, "      ")
  end
  local rewrite = table.concat(B, "\n")
  local src = G.prelude .. [[
local T, N, P, bad_p = ...
]]
  for i = 1, #sums do src = src .. ("local P%d = P[%d]\n"):format(i, i) end
  src = src .. ([[
local s_k = 0
local function apply(self, burst)
  local n_ = burst.n
  -- burst.data[i] and burst.len[i] each time: a local holding burst.data
  -- is a cdata reference the trace cannot always sink (one allocation a burst).
  -- The position as its value at the burst's first packet plus the loop
  -- index, and the loop only up to the table's end, the wrap after it: as
  -- surge.flow keeps its counters (integer code, no test in the loop).
  local k0 = s_k
  local i0 = 0
  while i0 < n_ do
    local last = n_ - 1
    if %d - k0 < last then last = %d - k0 end
    for i = i0, last do
      local L = T[tobit(k0) + i]
      burst.len[i] = L
      do
        local p = burst.data[i]
%s
      end
    end
    if k0 + last == %d then k0 = -1 - last end
    i0 = last + 1
  end
  s_k = k0 + n_
  return n_
end
local function next1(self, p)
  if not (%s) then bad_p(p) end
  local L = T[s_k]
  s_k = s_k + 1
  if s_k == N then s_k = 0 end
  do
%s
  end
  return L
end
return { apply = apply, next = next1, get = function() return s_k end, set = function(k) s_k = k end }
]]):format(sz.n - 1, sz.n - 1, rewrite, sz.n - 1, arg.test_source("p", "pointer"), rewrite)
  local chunk, err = loadstring(src, "=surge.size")
  if not chunk then error("surge.size: internal: generated code does not load: " .. err .. "\n" .. src, 0) end
  local fns = chunk(sz._t, sz.n, sums, function(p) arg.expect(p, "pointer", "size:next", "p") end)
  fns.sums = sums
  fns.source = src
  return fns
end

-------------------------------------------------------------------------------
-- The size object.

local Size = {}
Size.__index = Size

local opt_keys = { min = 1, max = 1, pool = 1, template = 1 }

local bind, fns_for   -- defined below; build() uses them

local function build(spec, opts)
  opts = opts or {}
  if type(opts) ~= "table" then fail("options must be a table: { min = 60, max = 1514, pool = P, template = T }") end
  for k in pairs(opts) do
    if not opt_keys[k] then fail("unknown option '%s' (min, max, pool, template)", tostring(k)) end
  end
  local list, what = table_of(spec)
  local min = opts.min or DEFAULT_MIN
  check_int(min, "min")
  if min < 14 then fail("min = %d: a frame holds at least the 14-byte Ethernet header", min) end
  local max, why = opts.max, ("max = %s"):format(tostring(opts.max))
  if max == nil then max, why = DEFAULT_MAX, "a standard Ethernet frame without FCS; give { max = N } for jumbo frames" end
  check_int(max, "max")
  if opts.pool ~= nil then
    if getmetatable(opts.pool) ~= require("surge.pool").Pool then
      fail("pool: expected a pool (surge.pool{...}), got %s", arg.show(opts.pool))
    end
    local room = opts.pool:info().data_room
    if max > room or opts.max == nil then max, why = room, "the pool's data room" end
    if opts.max ~= nil and opts.max > room then
      fail("max = %d is above the pool's data room (%d bytes)", opts.max, room)
    end
  end
  local hdr = 0
  if opts.template ~= nil then
    local plan = gen.plan(opts.template, "surge.size")
    hdr = plan.hdr
    if hdr > min then min = hdr end
  end
  local counts, largest, smallest = {}, 0, math.huge
  for _, s in ipairs(list) do
    counts[s] = (counts[s] or 0) + 1
    if s > largest then largest = s end
    if s < smallest then smallest = s end
  end
  if largest > max then
    fail("size %d bytes is above the limit %d (%s)", largest, max, why)
  end
  if smallest < min then
    fail("size %d bytes is below the minimum %d (%s)", smallest, min,
      hdr >= min and hdr > DEFAULT_MIN and "the template's headers" or "give { min = N } for shorter frames")
  end
  local n = #list
  local self = setmetatable({ n = n, _t = ffi.new("uint16_t[?]", n, list), list = list, counts = counts,
                              largest = largest, min = smallest, what = what, applied = 0, _bound = {} }, Size)
  self._plain = compile(self, { bytes = "", layers = {}, size = largest })   -- lengths only
  self._fns = self._plain
  if opts.template ~= nil then bind(self, opts.template) end
  return self
end

function M.new(spec, opts)
  local ok, s = pcall(build, spec, opts)
  if not ok then arg.raise(s) end
  return s
end
setmetatable(M, { __call = function(_, spec, opts)   -- surge.size(spec, opts) = surge.size.new(...)
  local ok, s = pcall(build, spec, opts)
  if not ok then arg.raise(s) end
  return s
end })

-- The fns compiled for template t (cached per template table); errors at level 0.
function fns_for(self, t)
  local f = self._bound[t]
  if f == nil then
    f = compile(self, t)
    f.set(self._fns.get())
    self._bound[t] = f
  end
  return f
end

-- Grows t to the largest size (zero payload), rewrites its lengths and
-- checksums, binds it; errors at level 0.
function bind(self, t)
  local plan = gen.plan(t, "surge.size")
  if self.min < plan.hdr then
    fail("size %d bytes is below the template's %d bytes of headers", self.min, plan.hdr)
  end
  local out = t
  if t.size < self.largest then
    local buf = ffi.new("uint8_t[?]", self.largest)
    ffi.copy(buf, t.bytes, t.size)
    out = { bytes = ffi.string(buf, self.largest), size = self.largest, layers = t.layers, off = t.off,
            l3 = t.l3, l4 = t.l4 }
    -- a one-entry table of the largest size: next() reads the old length
    -- (t.size) from the headers and rewrites them for the new one
    local one = { n = 1, largest = self.largest, min = self.min, _t = ffi.new("uint16_t[1]", self.largest) }
    compile(one, out).next(nil, buf)
    out.bytes = ffi.string(buf, self.largest)
  end
  self._fns = fns_for(self, out)
  self._template = out
  return out
end

-- A template for the pool: t grown (zero payload) to the largest size, its
-- length fields and checksums rewritten; a template already as large is
-- returned as it is. Either way sz:apply(burst) rewrites headers for it from
-- now on. sz:template() returns the bound template.
function Size:template(t)
  if t == nil then return self._template end
  local ok, r = pcall(bind, self, t)
  if not ok then arg.raise(r) end
  return r
end

-- Sets burst.len[i] for the burst's packets (and rewrites the headers of the
-- bound template, or of t); returns burst.n.
function Size:apply(burst, t)
  arg.burst(burst, "size:apply")
  local f = self._fns
  if t ~= nil and t ~= self._template then
    local ok, r = pcall(fns_for, self, t)
    if not ok then arg.raise(r) end
    r.set(f.get())            -- one position, whichever template
    f, self._fns, self._template = r, r, t
  end
  local n = f.apply(self, burst)
  self.applied = self.applied + n
  return n
end

-- One packet at p: returns its size (headers rewritten when a template is bound).
function Size:next(p)
  arg.self(self, Size, "size:next")
  self.applied = self.applied + 1
  return self._fns.next(self, p)
end

function Size:reset()
  self._fns.set(0)
  self.applied = 0
end

-- The first n frames (of the bound template, with flow f applied first when
-- given) as strings; the position is kept.
function Size:frames(n, f)
  local t = self._template
  if not t then arg.raise("surge.size: frames() needs a template: sz:template(t) first") end
  n = n or 4
  local k, applied = self._fns.get(), self.applied
  local fs = f and f:state()
  if f then f:reset() end
  self._fns.set(0)
  local buf = ffi.new("uint8_t[?]", t.size)
  local out = {}
  for i = 1, n do
    ffi.copy(buf, t.bytes, t.size)
    if f then f:next(buf) end
    local L = self._fns.next(self, buf)
    out[i] = ffi.string(buf, L)
  end
  self._fns.set(k)
  self.applied = applied
  if f then f:restore(fs) end
  return out
end

-- (made once: a closure made in each call would stop a trace reaching it)
local function by_size(a, b) return a[1] < b[1] end

-- The sizes of the first `packets` packets (default: those applied since the
-- last reset) as a sorted list of { size, count }.
function Size:histogram(packets)
  packets = packets or self.applied
  local full, rem = math.floor(packets / self.n), packets % self.n
  local h = {}
  for s, c in pairs(self.counts) do h[s] = c * full end
  for i = 1, rem do h[self.list[i]] = h[self.list[i]] + 1 end
  local out = {}
  for s, c in pairs(h) do out[#out + 1] = { s, c } end
  table.sort(out, by_size)
  return out
end

-- The mean size over the table (bytes without FCS).
function Size:mean()
  local sum = 0
  for _, s in ipairs(self.list) do sum = sum + s end
  return sum / self.n
end

function Size:source() return self._fns.source end

return M
