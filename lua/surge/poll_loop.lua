-- poll_loop.lua - the loop of an object that polls its own port queues
-- and publishes its counters (a connection engine's engine:run, a host
-- table's hosts:run): poll, and every `every` seconds copy the counters
-- (obj:sync()) and tick(now) (hand out events; true ends the loop), until
-- `seconds` passed (nil: no limit) or the run stops. finish() runs however
-- the loop ended (free the bursts, reset what is open), then a last copy
-- of the counters; then a stop of the run (core.STOPPED) ends it quietly
-- and any other error is raised again. poll and tick are made once per
-- run, not per turn of the loop.
local core = require("surge.core")
local check = require("surge.check")
local surge = require("surge")
local RxQueue, TxQueue = require("surge.port").RxQueue, require("surge.port").TxQueue
local Pool = require("surge.pool").Pool

local M = {}

-- The options such a loop's run{} takes, checked the one way (errors name
-- fn, the key and the caller's line): o against keys (which list the
-- caller's own options too), its rx and tx queues, the pool (nil when o
-- has none and pool_optional says the caller makes its own), the burst
-- size (1..256, 64 when not given) and seconds (nil: no limit). Returns o,
-- rxq, txq, pool, burst, seconds.
function M.options(o, keys, fn, pool_optional)
  o = check.options(o, keys, fn)
  local rxq = check.handle(o.rxq, RxQueue, fn, "rxq", "an rx queue (port:rxq(i))")
  local txq = check.handle(o.txq, TxQueue, fn, "txq", "a tx queue (port:txq(i))")
  local pool = o.pool
  if pool ~= nil or not pool_optional then check.handle(pool, Pool, fn, "pool", "a pool (surge.pool{...})") end
  local nb = check.expect(o.burst, "integer? 1..256", fn, "burst") or 64
  return o, rxq, txq, pool, nb, check.expect(o.seconds, "number? >=0", fn, "seconds")
end

-- obj's counters published (once), then the loop; returns obj:stats().
function M.run(obj, seconds, every, poll, tick, finish)
  if not obj.cells then obj:publish() end
  local hz = tonumber(surge.tsc_hz())
  local deadline = seconds and tonumber(surge.tsc()) + seconds * hz or math.huge
  local next_tick = 0
  local ok, err = pcall(function()
    while surge.running() do
      poll()
      local now = tonumber(surge.tsc())
      if now >= next_tick then
        next_tick = now + every * hz
        obj:sync()
        if tick(now) or now >= deadline then break end
      end
    end
  end)
  finish()
  obj:sync()
  if not ok and err ~= core.STOPPED then error(err, 0) end
  return obj:stats()
end

return M
