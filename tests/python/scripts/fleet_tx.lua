-- fleet_tx.lua - the instance script of the Python tests (tests/python/).
-- With --fleet it waits for the controller's start time (surge.fleet);
-- --fail-after S makes its task raise S seconds after it started.
local surge = require("surge")

function configure(p)
  p:option("--rate", "offered rate", "20kpps")
  p:option("--fail-after", "seconds; then the task raises (0: never)", 0, "number 0..3600")
  p:flag("--fleet", "wait for the fleet's common start time")
end

function tx(q, rate, fail_after, start)
  local pool = surge.pool{ template = surge.proto.udp{ size = 60 }, shared = true }
  local burst = pool:burst(32)
  q:set_rate(rate)
  local fleet = require("surge.fleet")
  if start then fleet.sleep_until(start) end
  local t0 = surge.tsc()
  -- the wall-clock time of the first send (its first packet goes at once; the
  -- pacer spreads the rest of the burst): the tests compare the instances'
  -- (a gauge: in their results and on /surge/counters)
  local first = surge.gauge("first_tx_unix")
  burst:alloc(32)
  local t_first = fleet.now()
  q:send(burst)
  first:set(t_first)
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
  local start = args.fleet and require("surge.fleet").wait_start(120) or nil
  surge.launch("tx", surge.port(0):txq(0), args.rate, args.fail_after, start)
  surge.wait()
end
