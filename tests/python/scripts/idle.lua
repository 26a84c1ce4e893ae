-- idle.lua - an instance that only serves its control socket until stopped
-- (the Python tests run scenarios and tasks through it).
local surge = require "surge"

function master()
  while surge.running() do surge.sleep(0.1) end
end
