-- phases.lua - a run in two phases (as a scenario's trials are): a task
-- sends --count packets, master waits for it, pauses, and launches another.
--   surge run phases.lua --count 200000
local surge = require("surge")

function configure(p)
  p:option("--count", "packets per phase", 200000, "integer")
end

function master(args)
  local port = surge.port(0, { txq = 1 })
  local q = port:txq(0)
  q:set_rate("400kpps")
  local total = 0
  for phase = 1, 2 do
    surge.launch("tx", q, args.count)
    total = total + surge.wait()[1]
    if phase == 1 then surge.sleep(0.3) end
  end
  print(("phases: sent %d"):format(total))
  return 0
end

function tx(q, count)
  local burst = surge.pool{ template = surge.proto.udp{} }:burst(32)
  local n = 0
  while surge.running() and n < count do
    burst:alloc(math.min(32, count - n))
    n = n + q:send(burst)
  end
  return n
end
