-- idle.lua - an instance that only serves its control socket until stopped
-- (the Python tests run scenarios and tasks through it).
local surge = require("surge")

function master()
  while surge.running() do surge.sleep(0.1) end
end

-- A task that ends by itself after `seconds` (the waits' tests).
function nap(seconds)
  local t0 = surge.tsc()
  while tonumber(surge.tsc() - t0) / surge.tsc_hz() < seconds do surge.sleep(0.01) end
  return "napped"
end
