-- counters.lua - two tasks count what they send in one custom counter and
-- set a gauge; master hands a table to the results ("demo"). Each task
-- returns its own count so the test can compare the counter's sum.
--   surge run --lcores '(0-2)@(0-1)' counters.lua --count 100000
local surge = require("surge")

function configure(p)
  p:option("--count", "packets per task", 100000, "integer")
end

function master(args)
  local port = surge.port(0, { txq = 2 })
  surge.launch("tx", port:txq(0), args.count, 1.5)
  surge.launch("tx", port:txq(1), args.count, 2.5)
  local r = surge.wait()
  local sent = surge.counter("sent")
  print(("counters: tasks %d %d counter %d gauge %g"):format(r[1], r[2], sent:value(), surge.gauge("level"):value()))
  surge.results.add("demo", { sent = { r[1], r[2] }, note = "from master" })
  return 0
end

function tx(q, count, level)
  local sent = surge.counter("sent")
  local bursts = surge.counter("bursts")
  surge.gauge("level"):set(level)
  local burst = surge.pool{ template = surge.proto.udp{} }:burst(32)
  local n = 0
  while surge.running() and n < count do
    burst:alloc(math.min(32, count - n))
    local k = q:send(burst)
    n = n + k
    sent:add(k)
    bursts:add()
  end
  surge.sleep(0.3)   -- a stats line or two sees the final counts
  return n
end
