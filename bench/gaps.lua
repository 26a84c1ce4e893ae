-- bench/gaps.lua - one paced TX task for scripts/bench-gaps: sends for
-- --seconds at --rate with --pattern into port 0 (a net_pcap capture there)
-- under the given idle policy, and prints the pacer's own figures.
local surge = require("surge")

function configure(p)
  p:option("--rate", "rate", "50kpps")
  p:option("--pattern", "constant or poisson", "constant")
  p:option("--seconds", "seconds to send", 2, "number")
  p:option("--idle-mode", "busy, pause or sleep", "sleep")
  p:flag("--batch", "surge.idle{ batch = true }: the low-CPU pacer")
  p:option("--catchup", "burst or skip", "burst")
end

function master(args)
  local port = surge.port(0, { txq = 1, rxq = 0 })
  surge.launch("tx", port:txq(0), args)
  local res = surge.wait()[1]
  print(("GAPS pps=%.3f target=%.3f late=%d skipped_s=%.6f catchup=%s sleeps=%d cpu_wait_s=%.3f"):format(res.pps,
    res.target_pps, res.late, res.skipped_s, res.catchup, res.sleeps, res.cpu_wait))
end

local cpu_wait = surge.cpu_wait

function tx(q, args)
  surge.idle{ mode = args.idle_mode, batch = args.batch }
  local t = surge.proto.udp{ dst = "10.0.0.2", size = 60 }
  local burst = surge.pool{ template = t, size = 2047 }:burst(1)
  q:set_rate{ rate = args.rate, pattern = args.pattern, seed = 7, catchup = args.catchup }
  local w0 = cpu_wait()
  local stop = surge.tsc() + args.seconds * surge.tsc_hz()
  while surge.running() and surge.tsc() < stop do
    burst:alloc()
    q:send(burst)
  end
  local r = q:rate_stats()
  r.sleeps = surge.lcore_stats().sleeps
  r.cpu_wait = cpu_wait() - w0
  return r
end
