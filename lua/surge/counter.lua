-- counter.lua - custom counters and gauges a script keeps.
--
--   local hits = surge.counter("hits")     -- in any task (or master)
--   hits:add(n)                            -- hot path: this lcore's own cell
--   hits:value()                           -- the sum over every lcore
--   local depth = surge.gauge("depth")
--   depth:set(3.5)                         -- this lcore's value; reported: sum of lcores
--
-- Every lcore writes only its own cell (C keeps one cache-aligned slot per
-- lcore), so add() is a load and a store, no atomic; the same name gives the
-- same counter in every task. They show in the stats lines, the summary,
-- --output and the /surge/counters telemetry command.
local ffi = require("ffi")
local bit = require("bit")
local check = require("surge.check")
local core = require("surge.core")

local C, rc_check = core.C, core.check
local SATURATED = 0xffffffffffffffffULL
local M = {}

local class = require("surge.class")
local Counter = class.new("counter", { "id", "name", "cell" })
Counter.__handle = function(c) return ("counter '%s'"):format(c.name) end
local Gauge = class.new("gauge", { "id", "name", "cell" })
Gauge.__handle = function(g) return ("gauge '%s'"):format(g.name) end

local function name_of(name, what)
  if type(name) ~= "string" or name == "" or #name > 63 or name:find("[^%w_%-%.]") then
    check.raise(("surge.%s: name %s must be 1..63 characters of letters, digits, _ - ."):format(what, tostring(name)))
  end
  return name
end

-- A new counter or gauge (cls, kind: C's SURGE_COUNTER or SURGE_GAUGE); its
-- errors name the user's line (check.raise finds it).
local function new(name, what, kind, cls)
  local id = rc_check(C.surge_counter_new(name_of(name, what), kind))
  return setmetatable({ id = id, name = name, cell = false }, cls)
end

function M.counter(name) return new(name, "counter", C.SURGE_COUNTER, Counter) end

-- The lcore's cell is taken at the first write, so an lcore that only reads
-- (master printing a value) is not counted among the writers. add and set
-- are hot paths: their checks (self, and n an integer in 0..2^53, v a
-- finite number) are compiled in by surge.check.hot.
Counter.add = check.hot(function(self, n)
  local cell = self.cell
  if not cell then cell = C.surge_counter_cell(self.id); self.cell = cell end
  local v = cell[0] + (n or 1)
  -- past 2^64 the cell stays at its maximum (the sum says saturated) rather
  -- than wrap to a small count
  if v < cell[0] then v = SATURATED end
  cell[0] = v
end, "counter:add", { { "self", Counter }, { "n", "integer? 0..9007199254740992" } })

local info = ffi.new("struct surge_counter_info")
function Counter:value()
  check.self(self, Counter, "counter:value")
  rc_check(C.surge_counter_get(self.id, info), 2)
  return tonumber(info.total)
end

function M.gauge(name) return new(name, "gauge", C.SURGE_GAUGE, Gauge) end

Gauge.set = check.hot(function(self, v)
  local cell = self.cell
  if not cell then cell = C.surge_gauge_cell(self.id); self.cell = cell end
  cell[0] = v
end, "gauge:set", { { "self", Gauge }, { "v", "number" } })

function Gauge:value()
  check.self(self, Gauge, "gauge:value")
  rc_check(C.surge_counter_get(self.id, info), 2)
  return info.value
end

-- Publishes the fields `keys` of a C stats struct as counters PREFIX.KEY,
-- those in the set `gauges` as gauges: returns the two lists of { key,
-- cell } that M.copy fills. Each cell is made now (written 0), so the
-- summary lists it before the first copy.
function M.publish(prefix, keys, gauges)
  local cells, gcells = {}, {}
  for _, k in ipairs(keys) do
    if gauges[k] then
      local g = M.gauge(prefix .. "." .. k)
      g:set(0)
      gcells[#gcells + 1] = { k, g.cell }
    else
      local c = M.counter(prefix .. "." .. k)
      c:add(0)
      cells[#cells + 1] = { k, c.cell }
    end
  end
  return cells, gcells
end

-- Copies the fields of st into the cells M.publish returned (no allocation).
function M.copy(st, cells, gcells)
  for i = 1, #cells do local c = cells[i] c[2][0] = st[c[1]] end
  for i = 1, #gcells do local c = gcells[i] c[2][0] = tonumber(st[c[1]]) end
end

-- Every counter and gauge: { { name, kind = "counter"|"gauge", value, lcores
-- [, saturated = true] } }; saturated: a gauge's sum went past a double's
-- range and value is +-DBL_MAX (core/control/counters.c), never inf; a
-- counter's went past 2^64 and value is 2^64 (UINT64_MAX as a double).
function M.all()
  local out = {}
  for i = 0, C.surge_counter_count() - 1 do
    rc_check(C.surge_counter_get(i, info), 2)
    out[#out + 1] = { name = ffi.string(info.name), kind = info.kind == C.SURGE_GAUGE and "gauge" or "counter",
                      value = info.kind == C.SURGE_GAUGE and info.value or tonumber(info.total),
                      lcores = info.lcores,
                      saturated = bit.band(info.flags, C.SURGE_COUNTER_SATURATED) ~= 0 or nil }
  end
  return out
end

return M
