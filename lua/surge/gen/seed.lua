-- gen/seed.lua - the one xorshift32 stream behind flow's random fields and
-- size's shuffled tables: a seed gives the same sequence on every run.
local bit = require("bit")

local M = {}

-- The stream's first state for a seed (never 0, where xorshift stays).
function M.state(seed)
  local x = bit.tobit((seed * 2654435761 + 0x9e3779b9) % 2 ^ 32)
  if x == 0 then x = 0x2545f491 end
  return x
end

-- The generated code's step of the state variable x (shifts 13, 17, 5).
function M.step_source(x)
  return ("%s = bxor(%s, lshift(%s, 13)); %s = bxor(%s, rshift(%s, 17)); %s = bxor(%s, lshift(%s, 5))")
    :format(x, x, x, x, x, x, x, x, x)
end

-- The same stream in Lua: a function n -> the next draw in 0..n-1.
function M.draws(seed)
  local x = M.state(seed)
  return function(n)
    x = bit.bxor(x, bit.lshift(x, 13)); x = bit.bxor(x, bit.rshift(x, 17)); x = bit.bxor(x, bit.lshift(x, 5))
    return math.floor((x + 2147483648) * n / 4294967296)
  end
end

return M
