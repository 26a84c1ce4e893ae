-- A counter's cell that counter:add takes past 2^64 stays at its maximum and
-- the counter says saturated (surge.counter.all, the stats line, results),
-- instead of wrapping to a small count. The sum over lcores past 2^64 is
-- tests/unit/test_counters.c's.
local surge = require("surge")
local counter = require("surge.counter")
local T = {}

local function info(name)
  for _, c in ipairs(counter.all()) do if c.name == name then return c end end
end

function T.a_cell_past_2_64_saturates()
  local c = surge.counter("sat.big")
  for _ = 1, 2047 do c:add(2 ^ 53) end
  assert(c:value() == 2047 * 2 ^ 53, c:value())
  assert(not info("sat.big").saturated)
  c:add(2 ^ 53)                           -- 2^64: a uint64 wraps to 0 here
  assert(c:value() == 2 ^ 64, c:value())  -- UINT64_MAX, as a double
  assert(info("sat.big").saturated == true)
  c:add(1)
  assert(c:value() == 2 ^ 64 and info("sat.big").saturated)
end

return T
