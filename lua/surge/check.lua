-- check.lua - the one argument check every wrapper uses before C sees a value.
--
--   local check = require("surge.check")
--   check.expect(n, "integer 1..256", "pool:burst", "n")
--   check.expect(opts, "table?", "surge.port", "opts")
--   check.burst(b, "txq:send")            -- hot paths: one type test
--   check.handle(q, port.TxQueue, "engine:poll", "txq", "a tx queue (port:txq(i))")
--
-- A failed check raises "FN: PARAM: expected WHAT, got VALUE" at the first
-- stack frame outside surge's own modules: the user's file:line, however
-- deep inside surge the check sits. Specs are compiled once and cached:
--   TYPE[|TYPE...][?] [RANGE]   TYPE: nil boolean number integer string table
--                               function burst pointer; "?" also allows nil
--   RANGE: LO..HI | >=LO | >LO  (numbers; "inf" allowed as a bound)
-- Numbers are never NaN; they are finite unless a bound is inf. Every value
-- that crosses into C through a fixed-width integer is range-checked here,
-- never wrapped or clamped by the FFI conversion.
local bit = require("bit")
local ffi = require("ffi")
require("surge.cdef")

local M = {}

-- Frames of surge's modules (and of the code surge.flow/surge.size generate).
function M.is_surge_source(src)
  return src:find("/lua/surge/", 1, true) ~= nil or src:sub(1, 7) == "=surge."
end

-- Raises msg at the user's line: the first Lua frame that is not surge's.
function M.raise(msg)
  local level = 2
  while true do
    local info = debug.getinfo(level, "S")
    if info == nil then error(msg, 0) end
    if info.what ~= "C" and not M.is_surge_source(info.source) then error(msg, level) end
    level = level + 1
  end
end

-- A short, printable description of any value.
function M.show(v)
  local t = type(v)
  if t == "number" then
    if v ~= v then return "nan" end
    if v == math.huge then return "inf" end
    if v == -math.huge then return "-inf" end
    if v == math.floor(v) and math.abs(v) < 2 ^ 63 then return ("%.0f"):format(v) end
    return ("%.17g"):format(v)
  elseif t == "string" then
    return #v > 40 and ("%q..."):format(v:sub(1, 40)) or ("%q"):format(v)
  elseif t == "cdata" then
    local ct = tostring(ffi.typeof(v)):match("^ctype<(.*)>$") or "?"
    if v == nil then return "a NULL " .. ct end
    return "cdata<" .. ct .. ">"
  elseif t == "table" then
    local mt = getmetatable(v)
    if type(mt) == "table" and mt.__handle then return mt.__handle(v) end
    return "a table"
  elseif t == "nil" or t == "boolean" then
    return tostring(v)
  end
  return "a " .. t
end

local burst_t = ffi.typeof("struct surge_burst")

-- A packet's bytes: a uint8_t * (qualifiers aside; char * too) or a byte
-- buffer (ffi.new("uint8_t[?]", n), ffi.new("uint8_t[64]")), never any other
-- cdata: a setter adds byte offsets to it, so 42LL or an int[4] would write
-- anywhere. The first two tests are the hot path (a trace keeps them as one
-- type guard); a fixed-size array goes by its type's name (arithmetic on it
-- would run a struct's own __add, which may return anything).
local u8p, u8v = ffi.typeof("uint8_t *"), ffi.typeof("uint8_t[?]")
function M.byte_array(v)
  local name = tostring(ffi.typeof(v))
  return name:match("^ctype<unsigned char %[%d+%]>$") ~= nil or name:match("^ctype<char %[%d+%]>$") ~= nil
end
function M.is_bytes(v)
  return type(v) == "cdata" and (ffi.istype(u8p, v) or ffi.istype(u8v, v) or M.byte_array(v)) and v ~= nil
end
M.u8p, M.u8v = u8p, u8v
-- what code generated with test_source's tests needs in scope
M.GEN_PRELUDE = "local band = require('bit').band; local istype, u8p, u8v, byte_array = require('ffi').istype, "
  .. "require('surge.check').u8p, require('surge.check').u8v, require('surge.check').byte_array"

local function is_burst(v)
  return ffi.istype(burst_t, v) and v ~= nil
end

local article = {
  ["nil"] = "nil", boolean = "a boolean", number = "a number", integer = "an integer",
  string = "a string", table = "a table", ["function"] = "a function", burst = "a burst",
  pointer = "a pointer",   -- a non-NULL uint8_t * (or uint8_t[?] buffer): a packet's bytes
}

local function bound(s, spec)
  if s == "inf" then return math.huge end
  if s == "-inf" then return -math.huge end
  local v = tonumber(s)
  if v == nil then error("surge.check: bad bound in spec '" .. spec .. "'", 3) end
  return v
end

-- Compiles a spec into { test = function(v) -> bool, what = "an integer in 0..65535" }.
local function compile(spec)
  local types, range = spec:match("^([%w|?]+)%s*(.*)$")
  if not types then error("surge.check: bad spec '" .. spec .. "'", 3) end
  local optional = types:sub(-1) == "?"
  if optional then types = types:sub(1, -2) end
  local allow, names = {}, {}
  for name in types:gmatch("[^|]+") do
    if not article[name] then error("surge.check: unknown type '" .. name .. "' in spec '" .. spec .. "'", 3) end
    allow[name] = true
    names[#names + 1] = article[name]
  end
  local lo, hi, lo_open = -math.huge, math.huge, false
  if range ~= "" then
    local a, b = range:match("^(%-?[%w.]+)%.%.(%-?[%w.]+)$")
    if a then lo, hi = bound(a, spec), bound(b, spec)
    elseif range:match("^>=") then lo = bound(range:sub(3), spec)
    elseif range:match("^>") then lo, lo_open = bound(range:sub(2), spec), true
    else error("surge.check: bad range in spec '" .. spec .. "'", 3) end
  end
  local finite = not range:find("inf", 1, true)   -- inf only where a bound says so
  local rtext = range:find("..", 1, true) and (" in " .. range) or (range ~= "" and " " .. range:gsub("^(>=?)", "%1 ")) or ""
  for i, n in ipairs(names) do   -- the range applies to the numeric types
    if n == "a number" or n == "an integer" then names[i] = n .. rtext end
  end
  local what = table.concat(names, " or ")
  local function number_ok(v, integer)
    if v ~= v then return false end
    if integer and (v ~= math.floor(v) or v == math.huge or v == -math.huge) then return false end
    if finite and (v == math.huge or v == -math.huge) then return false end
    if lo_open then return v > lo and v <= hi end
    return v >= lo and v <= hi
  end
  local test = function(v)
    local t = type(v)
    if t == "nil" then return optional or allow["nil"] == true end   -- (a NULL cdata is not nil here)
    if t == "number" then
      if allow.integer and number_ok(v, true) then return true end
      return allow.number == true and number_ok(v, false)
    end
    if t == "cdata" then
      return (allow.pointer == true and M.is_bytes(v))
        or (allow.burst == true and is_burst(v))
    end
    return allow[t] == true
  end
  return { test = test, what = what, allow = allow, optional = optional, lo = lo, hi = hi, lo_open = lo_open,
           finite = finite }
end

local cache = {}   -- spec text -> compiled check

-- The compiled spec: { test = function(v) -> boolean, what = "an integer in 1..256" }.
function M.spec(spec)
  local c = cache[spec]
  if c == nil then c = compile(spec); cache[spec] = c end
  return c
end

-- Checks value against spec; raises at the user's line naming fn and param.
-- Returns the value, so `x = check.expect(x, ...)` reads naturally.
function M.expect(value, spec, fn, param)
  local c = cache[spec]
  if c == nil then c = compile(spec); cache[spec] = c end
  if not c.test(value) then
    M.raise(("%s: %s: expected %s, got %s"):format(fn, param, c.what, M.show(value)))
  end
  return value
end

-- Like expect for field `key` of an options table; nil yields default.
function M.field(opts, key, spec, fn, default)
  local v = M.expect(opts[key], spec, fn, key)
  if v == nil then return default end
  return v
end

-- opts must be nil or a table whose keys are all in `known` (a set); returns
-- opts or an empty table.
function M.options(opts, known, fn)
  if opts == nil then return {} end
  M.expect(opts, "table", fn, "opts")
  for k in pairs(opts) do
    if not known[k] then
      local names = {}
      for n in pairs(known) do names[#names + 1] = n end
      table.sort(names)
      M.raise(("%s: unknown option '%s' (%s)"):format(fn, tostring(k), table.concat(names, ", ")))
    end
  end
  return opts
end

-- The hot-path check for a burst argument: one type test, compiled away by
-- the JIT when the type is right. param names the argument where a
-- function takes more than one burst ("engine:poll: rx: expected a burst").
function M.burst(b, fn, param)
  if not is_burst(b) then
    M.raise(("%s: %sexpected a burst, got %s"):format(fn, param and param .. ": " or "", M.show(b)))
  end
  return b
end

-- A handle argument (a queue, a pool, an engine: a table whose metatable is
-- its class, surge.class): v must have the metatable mt, else "FN: PARAM:
-- expected WHAT, got VALUE" at the user's line, as expect says it. One
-- compare, so a hot path can afford it.
function M.handle(v, mt, fn, param, what)
  if getmetatable(v) ~= mt then M.raise(("%s: %s: expected %s, got %s"):format(fn, param, what, M.show(v))) end
  return v
end

-- Hot-path number check with bounds known only at run time (a burst's
-- capacity): v must be a number in lo..hi (an integer when integer is
-- true). Returns v.
function M.number(v, lo, hi, integer, fn, param)
  if type(v) ~= "number" or not (v >= lo and v <= hi) or (integer and v ~= math.floor(v)) then
    M.raise(("%s: %s: expected %s in %s..%s, got %s"):format(fn, param, integer and "an integer" or "a number",
      M.show(lo), M.show(hi), M.show(v)))
  end
  return v
end

-- Hot paths: argument checks compiled into the function. check.hot(fn,
-- name, params) returns fn wrapped in a function that first tests each
-- argument (params: { {PARAM, SPEC}, ... } in order; SPEC a spec of a single
-- type, number, integer or pointer, or a metatable: a method's self) and
-- then tail-calls fn. The tests are type tests and plain compares (NaN fails
-- them), guards a trace keeps for almost nothing; a failure calls a separate
-- function that raises the usual message at the user's line, so the trace
-- holds no error path. check.test_source(var, spec) is the expression alone,
-- for code generated elsewhere (surge.flow, surge.size).
local function lit(v)
  if v == math.huge then return "(1/0)" end
  if v == -math.huge then return "(-1/0)" end
  return ("%.17g"):format(v)
end

function M.test_source(var, spec)
  local c = M.spec(spec)
  local kinds = {}
  for k in pairs(c.allow) do kinds[#kinds + 1] = k end
  if #kinds ~= 1 or c.allow["nil"] then error("surge.check: test_source takes one type, not '" .. spec .. "'", 2) end
  local k, e = kinds[1], nil
  if k == "pointer" then
    -- M.is_bytes inline; the generated code starts with M.GEN_PRELUDE
    e = ("type(%s) == \"cdata\" and (istype(u8p, %s) or istype(u8v, %s) or byte_array(%s)) and %s ~= nil"):format(
      var, var, var, var, var)
  elseif k == "integer" and c.lo == 0 and not c.lo_open and c.hi >= 1 and c.hi < 2 ^ 31
      and bit.band(c.hi, c.hi + 1) == 0 then
    -- 0..2^n-1 (a header field): one masked compare. tobit turns 1.5, NaN,
    -- the infinities and anything outside the field into another value, and
    -- the setter's own store converts v the same way: one conversion in a
    -- trace, the check costs a compare
    e = ("type(%s) == \"number\" and band(%s, %s) == %s"):format(var, var, lit(c.hi), var)
  elseif k == "number" or k == "integer" then
    local lo, hi = c.lo, c.hi
    if c.finite or k == "integer" then   -- NaN and the infinities fail a finite bound
      if lo == -math.huge then lo = -1.7976931348623157e308 end
      if hi == math.huge then hi = 1.7976931348623157e308 end
    end
    e = ("type(%s) == \"number\" and %s %s %s and %s <= %s"):format(var, var, c.lo_open and ">" or ">=", lit(lo),
      var, lit(hi))
    if k == "integer" then e = e .. (" and %s == floor(%s)"):format(var, var) end
  elseif k == "burst" then
    error("surge.check: test_source: use check.burst for bursts", 2)
  else
    e = ("type(%s) == %q"):format(var, k)
  end
  if c.optional then e = ("%s == nil or (%s)"):format(var, e) end
  return e
end

function M.hot(fn, name, params)
  local args, tests, fails = {}, {}, {}
  for i, pr in ipairs(params) do
    local a = "a" .. i
    args[i] = a
    local spec = pr[2]
    if type(spec) == "table" then
      tests[i] = ("  if getmetatable(%s) ~= MT%d then fail(%d, %s) end"):format(a, i, i, a)
    else
      tests[i] = ("  if not (%s) then fail(%d, %s) end"):format(M.test_source(a, spec), i, a)
    end
    fails[i] = spec
  end
  local list = table.concat(args, ", ")
  local src = { "local fn, fail, floor, MT = ...", "local type, getmetatable = type, getmetatable", M.GEN_PRELUDE }
  for i, pr in ipairs(params) do
    if type(pr[2]) == "table" then src[#src + 1] = ("local MT%d = MT[%d]"):format(i, i) end
  end
  src[#src + 1] = ("return function(%s)"):format(list)
  for _, t in ipairs(tests) do src[#src + 1] = t end
  src[#src + 1] = ("  return fn(%s)"):format(list)
  src[#src + 1] = "end"
  local chunk = assert(loadstring(table.concat(src, "\n"), "=surge.check.hot"))
  local function fail(i, v)   -- out of line: only a failed test comes here
    local spec = fails[i]
    if type(spec) == "table" then M.self(v, spec, name) end
    M.expect(v, spec, name, params[i][1])
    M.raise(("%s: %s: refused %s"):format(name, params[i][1], M.show(v)))   -- (the tests agree with expect)
  end
  local mts = {}
  for i, pr in ipairs(params) do if type(pr[2]) == "table" then mts[i] = pr[2] end end
  return chunk(fn, fail, math.floor, mts)
end

-- Methods called with a dot instead of a colon (q.send(b)) get the wrong
-- self: say so instead of handing C a nil.
function M.self(obj, mt, fn)
  if getmetatable(obj) ~= mt then
    M.raise(("%s: expected %s as self, got %s (call it with ':')"):format(fn, fn:match("^[^:.]+"), M.show(obj)))
  end
  return obj
end

return M
