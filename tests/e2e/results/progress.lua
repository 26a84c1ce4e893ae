-- progress.lua - a paced send of --count packets with surge.progress.watch,
-- and a master loop that draws surge.progress(done, total) itself (--own 1).
--   surge run progress.lua --count 300000 --rate 200kpps
local surge = require("surge")

function configure(p)
  p:option("--count", "packets to send", 300000, "integer")
  p:option("--rate", "pacing", "200kpps")
  p:option("--own", "1: master calls surge.progress itself", 0, "integer")
end

function master(args)
  local port = surge.port(0, { txq = 1 })
  local q = port:txq(0)
  q:set_rate(args.rate)
  surge.launch("tx", q, args.count)
  if args.own == 1 then
    while surge.poll() > 0 do
      surge.progress(q:stats().packets, args.count, "own")
      surge.sleep(0.01)
    end
    surge.progress(q:stats().packets, args.count, "own")
  else
    surge.progress.watch("sent", args.count, function() return q:stats().packets end)
  end
  return surge.wait()[1] == args.count and 0 or 1
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
