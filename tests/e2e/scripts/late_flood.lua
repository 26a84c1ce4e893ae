-- late_flood.lua - a port that sends nothing for --delay seconds, then a
-- paced flood at --rate: a generator that starts late, as Pktgen-DPDK does
-- (its command file runs ~1.5 s after its telemetry socket answers), for
-- bench/telemetry-rate.py --from-traffic (test_rate_pktgen_row.sh).
local surge = require("surge")

function configure(p)
  p:option("--delay", "seconds before the first packet", 2, "number >=0")
  p:option("--rate", "the flood's rate", "1Mpps")
end

function master(args)
  local port = surge.port(0)
  port:txq(0):set_rate(args.rate)
  surge.sleep(args.delay)
  surge.launch("tx", port:txq(0))
  return surge.wait()[1] and 0 or 1
end

function tx(q)
  local pool = surge.pool{ template = surge.proto.udp{ size = 60 } }
  local burst = pool:burst(32)
  local cap, sent = burst.cap, 0
  burst:alloc(cap)
  while surge.running() do sent = sent + q:send_alloc(burst, 1, cap) end
  burst:free()
  return sent
end
