-- compare.lua - a script that runs two scenarios from Lua and compares them:
-- RFC 2544 throughput at 64 and 1518 bytes, then the latency at half of the
-- smaller throughput from load-latency.
--
--   surge run --vdev net_ring0 examples/scenarios/compare.lua --max-rate 20kpps
local surge = require("surge")

function configure(p)
  p:description("RFC 2544 throughput, then load-latency at half of it, from one script.")
  p:option("--port", "port (a loopback, or tx = rx through a DUT)", 0, "integer")
  p:option("--max-rate", "top of the throughput search", "20kpps")
end

function master(args)
  local rfc2544 = require("surge.scenario.rfc2544")
  local t = rfc2544.run{ tx = args.port, sizes = "64,1518", tests = "throughput", max_rate = args.max_rate,
                         trial = 0.2, settle = 0.05 }
  local small = math.min(t.sizes[1].throughput.pps, t.sizes[2].throughput.pps)
  local ll = require("surge.scenario.load_latency").run{ tx = args.port, rates = tostring(math.floor(small / 2)),
                                                        trial = 0.3, settle = 0.05 }
  local p = ll.points[1]
  print(("compare: throughput 64 B %d pps, 1518 B %d pps; at %d pps: loss %.3f %%, p99 latency %.1f us"):format(
    t.sizes[1].throughput.pps, t.sizes[2].throughput.pps, p.rate_pps, p.loss_pct, p.latency.p99_ns / 1e3))
  surge.wait()
  return p.loss_pct == 0 and 0 or 1
end
