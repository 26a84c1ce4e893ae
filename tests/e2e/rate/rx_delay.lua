-- rx_delay.lua - how long received packets wait between the poll that got
-- them and the Lua code after q:recv(): burst.tsc (stamped right after the
-- driver's rx_burst) against surge.tsc() once recv returned. A TX task
-- sends --rate into a net_ring loopback; the RX task receives under
-- --policy (busy, pause, sleep) and prints the delay's quantiles in us:
--   rx_delay: policy sleep bursts 4000 p50 0.1 p99 0.4 max 12.3
local surge = require("surge")

function configure(p)
  p:option("--rate", "TX rate", "2kpps")
  p:option("--policy", "idle mode of the receiving task", "sleep")
  p:option("--seconds", "seconds to send", 2, "number")
end

function master(args)
  local port = surge.port(0, { rxq = 1, txq = 1 })
  local rx = surge.launch("rx", port:rxq(0), args.policy)
  local tx = surge.launch("tx", port:txq(0), args)
  surge.wait(tx)
  surge.wait(rx, 0.2)                           -- the ring drains
  surge.stop()
  print(surge.wait(rx))
end

function tx(q, args)
  local burst = surge.pool{ template = surge.proto.udp{ size = 60 }, shared = true }:burst(1)
  q:set_rate(args.rate)
  local stop = surge.tsc() + args.seconds * surge.tsc_hz()
  while surge.running() and surge.tsc() < stop do burst:alloc(); q:send(burst) end
end

function rx(q, policy)
  surge.idle{ mode = policy }
  local burst = surge.pool{ size = 63 }:burst(32)
  local d, n = {}, 0
  local us = 1e6 / surge.tsc_hz()
  while surge.running() do
    if q:recv(burst) > 0 then
      local now = surge.tsc()                     -- first thing after recv
      n = n + 1
      d[n] = tonumber(now - burst.tsc) * us
    end
  end
  burst:free()
  table.sort(d)
  local function q_(f) return n > 0 and d[math.max(1, math.ceil(n * f))] or -1 end
  return ("rx_delay: policy %s bursts %d p50 %.2f p99 %.2f max %.2f"):format(policy, n, q_(0.5), q_(0.99), q_(1))
end
