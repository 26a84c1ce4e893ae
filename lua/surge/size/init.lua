-- size/init.lua (surge.size) - frame sizes per packet: fixed, uniform, weighted, IMIX.
--
--   local size = require("surge.size")
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
-- The spec becomes a table of sizes, built once (size/distribution.lua); a
-- packet costs one table read and a counter (gen/size.lua generates the loop).
--
-- Headers carry lengths: sz:apply(burst) with a bound template (sz:template(t)
-- or sz:apply(burst, t)) also rewrites the IPv4 total length, the IPv6 payload
-- length and the UDP length of every such layer, and keeps the IPv4 header
-- and L4 checksums valid with incremental updates (the payload bytes the
-- frame loses or gains are accounted from a table of partial sums).
local ffi = require("ffi")
local check = require("surge.check")
local generator = require("surge.gen.size")
local distribution = require("surge.size.distribution")
local pool = require("surge.pool")

local M = {}

local DEFAULT_MAX = 1514   -- a standard Ethernet frame without FCS
local DEFAULT_MIN = 60

M.IMIX = distribution.IMIX
M.LENGTH_FIELDS = generator.LENGTH_FIELDS

local fail, whole, compile = distribution.fail, distribution.whole, generator.compile

-------------------------------------------------------------------------------
-- The size object.

local Size = require("surge.class").new("size", { "n", "_t", "list", "counts", "largest", "min", "what",
                                                  "applied", "_bound", "_plain", "_fns", "_template" })

local opt_keys = { min = 1, max = 1, pool = 1, template = 1 }

local bind, fns_for   -- defined below; build() uses them

local function build(spec, opts)
  opts = opts or {}
  if type(opts) ~= "table" then fail("options must be a table: { min = 60, max = 1514, pool = P, template = T }") end
  for k in pairs(opts) do
    if not opt_keys[k] then fail("unknown option '%s' (min, max, pool, template)", tostring(k)) end
  end
  local list, what = distribution.table_of(spec)
  local min = opts.min or DEFAULT_MIN
  whole(min, "min")
  if min < 14 then fail("min = %d: a frame holds at least the 14-byte Ethernet header", min) end
  local max, why = opts.max, ("max = %s"):format(tostring(opts.max))
  if max == nil then max, why = DEFAULT_MAX, "a standard Ethernet frame without FCS; give { max = N } for jumbo frames" end
  whole(max, "max")
  if opts.pool ~= nil then
    if getmetatable(opts.pool) ~= pool.Pool then
      fail("pool: expected a pool (surge.pool{...}), got %s", check.show(opts.pool))
    end
    local room = opts.pool:info().data_room
    if max > room or opts.max == nil then max, why = room, "the pool's data room" end
    if opts.max ~= nil and opts.max > room then
      fail("max = %d is above the pool's data room (%d bytes)", opts.max, room)
    end
  end
  local hdr = 0
  if opts.template ~= nil then
    local plan = generator.plan(opts.template, "surge.size")
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
  if not ok then check.raise(s) end
  return s
end
setmetatable(M, { __call = function(_, spec, opts)   -- surge.size(spec, opts) = surge.size.new(...)
  local ok, s = pcall(build, spec, opts)
  if not ok then check.raise(s) end
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
  local plan = generator.plan(t, "surge.size")
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
  if not ok then check.raise(r) end
  return r
end

-- Sets burst.len[i] for the burst's packets (and rewrites the headers of the
-- bound template, or of t); returns burst.n.
function Size:apply(burst, t)
  check.burst(burst, "size:apply")
  local f = self._fns
  if t ~= nil and t ~= self._template then
    local ok, r = pcall(fns_for, self, t)
    if not ok then check.raise(r) end
    r.set(f.get())            -- one position, whichever template
    f, self._fns, self._template = r, r, t
  end
  local n = f.apply(self, burst)
  self.applied = self.applied + n
  return n
end

-- One packet at p: returns its size (headers rewritten when a template is bound).
function Size:next(p)
  check.self(self, Size, "size:next")
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
  if not t then check.raise("surge.size: frames() needs a template: sz:template(t) first") end
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
