-- flow.lua - many flows from one template: header fields that vary per packet.
--
--   local flow = require("surge.flow")
--   local f = flow{ template = t,                       -- from surge.proto
--                   fields = { ["ip4.src"] = { range = { "10.0.0.0", "10.0.255.255" } },
--                              ["udp.sport"] = { range = { 1000, 1015 } } },   -- 1M flows
--                   combine = "product" }               -- or "zip", "cycle"
--   f:apply(burst)     -- writes the next flows into burst.data[0..n-1]
--   f:next(p)          -- one packet at p (uint8_t *)
--   f:count()          -- packets before the sequence repeats (math.huge with random fields)
--   f:frames(n)        -- the first n frames as strings (surge show)
--   f:reset()
--
-- A field is LAYER.FIELD (the first layer of that name) or LAYER#K.FIELD (the
-- K-th, e.g. "ip4#2.src" for the inner header of a tunnel), one of the
-- `fields` a protocol module declares. A spec is a fixed value, or one of
--   { range = { FROM, TO }, step = S }     FROM, FROM+S, ... up to TO
--   { random = { LO, HI }, seed = N }      uniform, the same sequence for a seed
--   { list = { v1, v2, ... } }             these values in turn
--   { seq = { v1, v2, ... } }              the same: an explicit sequence, in order
-- Values are numbers, IPv4 addresses ("10.0.0.1") or MAC addresses.
--
-- The definition is compiled into Lua source by surge.gen.flow
-- (flow:source() shows it): each packet reads the old value of every field,
-- writes the new one and keeps every checksum covering it valid with one
-- RFC 1624 update per checksum and packet. No table lookups, closures or
-- allocation per packet: the loop in apply() compiles to one LuaJIT trace of
-- integer code.
local ffi = require("ffi")
local bit = require("bit")
local check = require("surge.check")
local generator = require("surge.gen.flow")

local M = {}

local function fail(fmt, ...) error(("surge.flow: " .. fmt):format(...), 0) end

local function num(v) return ("%.0f"):format(v) end

-------------------------------------------------------------------------------
-- Field specs.

local MAC_RE = "^(%x%x)[:-](%x%x)[:-](%x%x)[:-](%x%x)[:-](%x%x)[:-](%x%x)$"

-- IPv6 text for a 4-byte field holding the low 32 bits of an address (ip6
-- src/dst): the value is those bits; the rest must match the template's.
local function ip6_low32(f, v)
  local ok, ip6 = pcall(require, "surge.proto.ip6")
  local b = ok and ip6.parse and ip6.parse(v)
  if not b then fail("%s = '%s' is not a number or an address", f.name, v) end
  if f.bytes ~= 4 or f.mask or not f.pseudo or f.layer ~= "ip6" then
    fail("%s = '%s': an IPv6 address fits the low 32 bits of ip6.src or ip6.dst only", f.name, v)
  end
  local high = f.template:sub(f.off - 12 + 1, f.off)
  if b:sub(1, 12) ~= high then
    local hex = {}
    for i = 1, 12, 2 do hex[#hex + 1] = ("%x"):format(high:byte(i) * 256 + high:byte(i + 1)) end
    fail("%s = '%s': only the low 32 bits vary; the template's address starts %s", f.name, v,
      table.concat(hex, ":"))
  end
  return ((b:byte(13) * 256 + b:byte(14)) * 256 + b:byte(15)) * 256 + b:byte(16)
end

-- A value for field f (name for messages) as a number, checked against its range.
local function value(f, v)
  local x = v
  if type(v) == "string" then
    local a, b, c, d = v:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
    if a then
      a, b, c, d = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
      if f.bytes ~= 4 or f.mask or a > 255 or b > 255 or c > 255 or d > 255 then
        fail("%s = '%s': not an IPv4 address for a %d-byte field", f.name, v, f.bytes)
      end
      x = ((a * 256 + b) * 256 + c) * 256 + d
    elseif v:match(MAC_RE) then
      if f.bytes ~= 6 or f.mask then fail("%s = '%s': a MAC address needs a 6-byte field", f.name, v) end
      x = 0
      for h in v:gmatch("%x%x") do x = x * 256 + tonumber(h, 16) end
    elseif v:find(":", 1, true) then
      x = ip6_low32(f, v)
    else
      x = tonumber(v)
      if x == nil then
        fail("%s = '%s' is not a number%s", f.name, v,
          f.bytes == 4 and " or an address" or f.bytes == 6 and " or a MAC address" or "")
      end
    end
  elseif type(v) ~= "number" then
    fail("%s: value %s is not a number or an address", f.name, tostring(v))
  end
  if x ~= math.floor(x) or x < 0 or x > f.max then
    fail("%s = %s outside 0..%s", f.name, tostring(v), num(f.max))
  end
  return x
end

local spec_keys = { range = 1, step = 1, random = 1, seed = 1, list = 1, seq = 1 }

local function parse_spec(f, s)
  if type(s) ~= "table" then
    return { kind = "fixed", value = value(f, s), count = 1 }
  end
  for k in pairs(s) do
    if not spec_keys[k] then
      fail("%s: unknown key '%s' (range, step, random, seed, list, seq)", f.name, tostring(k))
    end
  end
  local kinds = {}
  for _, k in ipairs({ "range", "random", "list", "seq" }) do if s[k] ~= nil then kinds[#kinds + 1] = k end end
  if #kinds ~= 1 then
    fail("%s: give one of range, random, list or seq (got %s)", f.name,
      #kinds == 0 and "none" or table.concat(kinds, ", "))
  end
  local kind = kinds[1]
  if s.step ~= nil and kind ~= "range" then fail("%s: step goes with range", f.name) end
  if s.seed ~= nil and kind ~= "random" then fail("%s: seed goes with random", f.name) end
  if kind == "range" or kind == "random" then
    local r = s[kind]
    if type(r) ~= "table" or r[1] == nil or r[2] == nil or r[3] ~= nil then
      fail("%s: %s needs { from, to }", f.name, kind)
    end
    local lo, hi = value(f, r[1]), value(f, r[2])
    if kind == "random" then
      if lo > hi then fail("%s: random = { %s, %s }: low is above high", f.name, tostring(r[1]), tostring(r[2])) end
      local seed = s.seed or 1
      if type(seed) ~= "number" or seed ~= math.floor(seed) or seed < 0 or seed > 2 ^ 32 - 1 then
        fail("%s: seed = %s must be an integer in 0..4294967295", f.name, tostring(seed))
      end
      return { kind = "random", lo = lo, span = hi - lo + 1, seed = seed, count = math.huge }
    end
    local step = s.step or (lo <= hi and 1 or -1)
    if type(step) ~= "number" or step ~= math.floor(step) then
      fail("%s: step = %s must be an integer", f.name, tostring(step))
    end
    if step == 0 then fail("%s: step 0 never moves", f.name) end
    if (hi - lo) * step < 0 then
      fail("%s: range from %s to %s with step %d is empty", f.name, tostring(r[1]), tostring(r[2]), step)
    end
    return { kind = "range", from = lo, step = step, count = math.floor((hi - lo) / step) + 1 }
  end
  local l = s[kind]
  if type(l) ~= "table" then fail("%s: %s needs a table of values", f.name, kind) end
  if #l == 0 then fail("%s: %s is empty", f.name, kind) end
  -- a nil in the middle ({ 1, nil, 3 }) would silently end the list
  if table.maxn(l) ~= #l then fail("%s: %s has a hole (a nil value) before its end", f.name, kind) end
  local vals = {}
  for i, v in ipairs(l) do vals[i] = value(f, v) end
  return { kind = "list", values = vals, count = #vals }
end

-------------------------------------------------------------------------------
-- Fields of the template.

local function find_field(plan, name)
  local lname, nth, fname = name:match("^([%w_]+)#?(%d*)%.([%w_]+)$")
  if not lname then fail("'%s': a field is LAYER.FIELD or LAYER#N.FIELD, e.g. \"ip4.src\"", name) end
  nth = nth == "" and 1 or tonumber(nth)
  local seen, names = 0, {}
  for _, l in ipairs(plan.layers) do
    names[#names + 1] = l.name
    if l.name == lname then
      seen = seen + 1
      if seen == nth then
        local defs = l.mod and l.mod.fields
        if not defs then fail("'%s': layer %s has no fields a flow can vary", name, lname) end
        local d = defs[fname]
        if not d then
          local list = {}
          for k in pairs(defs) do list[#list + 1] = k end
          table.sort(list)
          fail("'%s': %s has no field '%s' (%s)", name, lname, fname, table.concat(list, ", "))
        end
        local f = { name = name, off = l.off + d.off, bytes = d.bytes, mask = d.mask, pseudo = d.pseudo,
                    layer = lname, template = plan.bytes }
        if f.bytes ~= 1 and f.bytes ~= 2 and f.bytes ~= 4 and f.bytes ~= 6 then
          fail("'%s': %d-byte fields are not supported (1, 2, 4 or 6 bytes)", name, f.bytes)
        end
        if f.mask then
          if f.bytes ~= 2 and f.bytes ~= 4 then fail("'%s': masks are supported on 2- and 4-byte fields only", name) end
          local shift = 0
          while bit.band(f.mask, bit.lshift(1, shift)) == 0 do shift = shift + 1 end
          f.shift = shift
          f.max = bit.rshift(f.mask, shift)
        else
          f.max = 2 ^ (8 * f.bytes) - 1
        end
        return f
      end
    end
  end
  if seen == 0 then
    fail("'%s': the template has no %s layer (it has %s)", name, lname, table.concat(names, ", "))
  end
  fail("'%s': the template has %d %s layer%s", name, seen, lname, seen == 1 and "" or "s")
end

-------------------------------------------------------------------------------
-- The flow object.

-- apply and next: the generated functions, set on each flow
local Flow = require("surge.class").new("flow", { "template", "fields", "combine", "_count", "_fns", "_source",
                                                  "plan", "apply", "next" })

local def_keys = { template = 1, fields = 1, combine = 1 }

-- offset -> bits of that byte a field writes
local function byte_masks(f)
  local out, m = {}, f.mask or (2 ^ (8 * f.bytes) - 1)
  for i = f.bytes - 1, 0, -1 do
    out[f.off + i] = m % 256
    m = math.floor(m / 256)
  end
  return out
end

-- The least common multiple, capped at 2^52 (a period longer than any run).
local function lcm(a, b)
  local x, y = a, b
  while y ~= 0 do x, y = y, x % y end
  return math.min(a / x * b, 2 ^ 52)
end

local function build(def)
  if type(def) ~= "table" then fail("give a table: surge.flow{ template = T, fields = { ... } }") end
  for k in pairs(def) do
    if not def_keys[k] then fail("unknown key '%s' (template, fields, combine)", tostring(k)) end
  end
  local t = def.template
  if t == nil then fail("template = T missing (a template from surge.proto)") end
  local ok, plan = pcall(generator.plan, t)
  if not ok then error(plan, 0) end
  local combine = def.combine or "product"
  if combine ~= "product" and combine ~= "zip" and combine ~= "cycle" then
    fail("combine = '%s': product, zip or cycle", tostring(combine))
  end
  if type(def.fields) ~= "table" then fail("fields = { [\"ip4.src\"] = SPEC, ... } missing") end
  -- a list { {name, spec}, ... } keeps its order; a map goes in frame order
  local fields, given = {}, {}
  if #def.fields > 0 then
    for i, e in ipairs(def.fields) do
      if type(e) ~= "table" or type(e[1]) ~= "string" or e[2] == nil then
        fail("fields[%d]: a list of fields holds { \"layer.field\", SPEC } pairs", i)
      end
      given[#given + 1] = { e[1], e[2] }
    end
  else
    for k, v in pairs(def.fields) do
      if type(k) ~= "string" then fail("fields: key %s is not a field name like \"ip4.src\"", tostring(k)) end
      given[#given + 1] = { k, v }
    end
  end
  if #given == 0 then fail("fields is empty: name at least one field, e.g. [\"udp.sport\"] = { range = { 1, 100 } }") end
  for _, g in ipairs(given) do
    local f = find_field(plan, g[1])
    f.spec = parse_spec(f, g[2])
    fields[#fields + 1] = f
  end
  if #def.fields == 0 then
    table.sort(fields, function(a, b) if a.off ~= b.off then return a.off < b.off end return a.name < b.name end)
  end
  for i = 1, #fields do
    for j = i + 1, #fields do
      local a, b = fields[i], fields[j]
      if a.name == b.name then fail("field %s given twice", a.name) end
      local ma, mb = byte_masks(a), byte_masks(b)
      for off, m in pairs(ma) do
        if mb[off] and bit.band(m, mb[off]) ~= 0 then fail("fields %s and %s overlap", a.name, b.name) end
      end
    end
    if fields[i].off + fields[i].bytes > t.size then
      fail("%s: beyond the %d-byte template", fields[i].name, t.size)
    end
  end
  local count
  if combine == "product" then
    count = 1
    for _, f in ipairs(fields) do count = count * f.spec.count end
  else
    count = 1
    for _, f in ipairs(fields) do if f.spec.count > count then count = f.spec.count end end
    local random = false
    for _, f in ipairs(fields) do if f.spec.kind == "random" then random = true end end
    if random then count = math.huge end
  end
  local period = 1
  for _, f in ipairs(fields) do
    if f.spec.count < math.huge then
      if combine == "product" then period = period * f.spec.count
      elseif combine == "cycle" then period = lcm(period, f.spec.count)
      elseif f.spec.count > period then period = f.spec.count end
    end
  end
  if combine == "cycle" then
    -- every field on its own cycle (OTG's patterns): the zip loop with the
    -- least common multiple as its period, so each field wraps at its own
    -- count and all meet again at the period
    if count < math.huge then count = period end
    combine = "zip"
  end
  local fns, text = generator.compile(fields, plan, combine, period)
  local self = setmetatable({ template = t, fields = fields, combine = combine, _count = count,
                              _fns = fns, _source = text, plan = plan }, Flow)
  -- the generated functions are the methods: flow:apply(burst), flow:next(p)
  local apply = fns.apply
  self.apply = function(f, burst)     -- made once per flow; the JIT inlines it
    check.burst(burst, "flow:apply")
    return apply(f, burst)
  end
  self.next = fns.next
  return self
end

function M.new(def)
  local ok, f = pcall(build, def)
  if not ok then check.raise(f) end
  return f
end
setmetatable(M, { __call = function(_, def)
  local ok, f = pcall(build, def)
  if not ok then check.raise(f) end
  return f
end })

-- Packets after which the sequence repeats: the number of distinct flows
-- (when lists hold no duplicates); math.huge when a field is random.
function Flow:count() return self._count end

function Flow:reset() self._fns.reset() end

-- The generated source, for the curious and for debugging.
function Flow:source() return self._source end

-- The state (where the sequence is) as a plain table, and back.
function Flow:state() return self._fns.get() end
function Flow:restore(s)
  check.self(self, Flow, "flow:restore")
  check.expect(s, "table", "flow:restore", "state")
  local specs = self._fns.state_specs
  if #s ~= #specs then
    check.raise(("flow:restore: state: expected the %d values flow:state() gave, got %d"):format(#specs, #s))
  end
  for i, spec in ipairs(specs) do check.expect(s[i], spec, "flow:restore", ("state[%d]"):format(i)) end
  self._fns.set(s)
end

-- The first n frames of the sequence as strings (the position is kept).
function Flow:frames(n)
  n = n or 4
  local t = self.template
  local saved = self._fns.get()
  self._fns.reset()
  local buf = ffi.new("uint8_t[?]", t.size)
  local out = {}
  for i = 1, n do
    ffi.copy(buf, t.bytes, t.size)
    self.next(self, buf)
    out[i] = ffi.string(buf, t.size)
  end
  self._fns.set(saved)
  return out
end

-- One line per field: name, offset, width, spec.
function Flow:describe()
  local out = {}
  for _, f in ipairs(self.fields) do
    local s = f.spec
    local what = s.kind == "fixed" and num(s.value)
      or s.kind == "range" and ("%s + %s*k, %s values"):format(num(s.from), num(s.step), num(s.count))
      or s.kind == "random" and ("random %s..%s seed %d"):format(num(s.lo), num(s.lo + s.span - 1), s.seed)
      or ("%d listed values"):format(s.count)
    out[#out + 1] = ("%s @%d (%d bytes): %s"):format(f.name, f.off, f.bytes, what)
  end
  return table.concat(out, "\n")
end

return M
