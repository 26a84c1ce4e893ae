-- fleet_tx.lua - the instance script of the Python tests (tests/python/).
-- With --fleet it waits for the controller's start time (surge.fleet);
-- --fail-after S makes its task raise S seconds after it started.
local surge = require "surge"

function configure(p)
  p:option("--rate", "offered rate", "20kpps")
  p:option("--fail-after", "seconds; then the task raises (0: never)", 0, "number 0..3600")
  p:flag("--fleet", "wait for the fleet's common start time")
end

function tx(q, rate, fail_after)
  local pool = surge.pool{ template = surge.proto.udp{ size = 60 }, shared = true }
  local burst = pool:burst(32)
  q:set_rate(rate)
  local t0 = surge.tsc()
  while surge.running() do
    burst:alloc(32)
    q:send(burst)
    if fail_after > 0 and tonumber(surge.tsc() - t0) / surge.tsc_hz() > fail_after then
      error("the test's own failure after " .. fail_after .. " s")
    end
  end
  return "sent"
end

-- Receives on q until stopped; returns the packets seen.
function rx(q)
  local pool = surge.pool{ size = 4096 }
  local burst = pool:burst(32)
  local n = 0
  while surge.running() do n = n + q:recv(burst) end
  burst:free()
  return n
end

function master(args)
  if args.fleet then require("surge.fleet").wait_start(120) end
  surge.launch("tx", surge.port(0):txq(0), args.rate, args.fail_after)
  surge.wait()
end
