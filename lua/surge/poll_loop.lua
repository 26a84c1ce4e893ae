-- poll_loop.lua - the loop of an engine that polls its own port queues
-- (a connection engine's engine:run, a host table's hosts:run): poll, and
-- every `every` seconds tick(now) (copy the counters, hand out events;
-- true ends the loop), until `seconds` passed (nil: no limit) or the run
-- stops. finish() runs however the loop ended (free the bursts, reset what
-- is open, a last copy of the counters); then a stop of the run
-- (core.STOPPED) ends it quietly and any other error is raised again.
-- poll and tick are made once per run, not per turn of the loop.
local core = require "surge.core"
local surge = require "surge"

local M = {}

function M.run(seconds, every, poll, tick, finish)
  local hz = tonumber(surge.tsc_hz())
  local deadline = seconds and tonumber(surge.tsc()) + seconds * hz or math.huge
  local next_tick = 0
  local ok, err = pcall(function()
    while surge.running() do
      poll()
      local now = tonumber(surge.tsc())
      if now >= next_tick then
        next_tick = now + every * hz
        if tick(now) or now >= deadline then break end
      end
    end
  end)
  finish()
  if not ok and err ~= core.STOPPED then error(err, 0) end
end

return M
