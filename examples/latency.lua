-- latency.lua - load plus latency probes through a loopback.
--
--   surge run examples/latency.lua                       # adds a net_ring loopback itself
--   surge run examples/latency.lua --rate 1mpps --every 100 --seconds 5
--
-- A TX task sends UDP at --rate; every --every-th packet is a probe carrying
-- a sequence number and a TSC timestamp taken as the driver takes it. The
-- master lcore receives on the same (loopback) port, matches the probes and
-- prints min/mean/p50/p90/p99/p99.9/max and lost/duplicated/reordered counts.
local surge = require("surge")

function configure(p)
  p:description("Latency probes under load on a loopback port (net_ring).")
  p:option("--port", "loopback port; default: add a net_ring device", "")
  p:option("--rate", "load rate (probes included)", "1mpps")
  p:option("--every", "one probe per N packets", 100, "integer 1..4294967295")
  p:option("--seconds", "how long to send (0: --duration, or 3 s without one)", 0, "number 0..86400")
  p:option("--size", "frame size in bytes", 64, "integer 14..9600")
end

local PROBE_AT = 42 + 2   -- UDP payload (eth 14 + ip 20 + udp 8), 2 bytes in

function master(args)
  local id = tonumber(args.port)
  if args.port == "" then id = surge.vdev("net_ring_lat0") end
  local port = surge.port(id or args.port, { rxq = 1, txq = 1 })
  local q = port:txq(0)
  q:set_rate(args.rate)
  local task = surge.launch("tx", q, args, port:info().speed_mbps or 0)
  local lat = surge.latency.receiver{ offset = PROBE_AT }
  local burst = surge.pool{ size = 63 }:burst(64)
  local rxq = port:rxq(0)
  surge.idle{ mode = "pause" }             -- the master receives: keep it awake
  while surge.poll() > 0 do
    if rxq:recv(burst) > 0 then lat:scan(burst) end
  end
  local r = surge.wait(task)
  -- what is still in the ring after the sender stopped
  for _ = 1, 1000 do
    if rxq:recv(burst) == 0 then break end
    lat:scan(burst)
  end
  burst:free()
  local s = lat:summary()
  print(("latency: sent %d packets in %.2f s, %s"):format(r.sent, r.seconds, surge.latency.format(s)))
  return s.lost == 0 and 0 or 1
end

function tx(q, args, link_mbps)
  local t = surge.proto.udp{ size = args.size }
  local pool = surge.pool{ template = t, shared = true }   -- the receiver frees into it
  local burst = pool:burst(32)
  local probes = surge.latency.marker{ offset = PROBE_AT, every = args.every }
  local seconds = args.seconds > 0 and args.seconds or surge.duration() or 3
  -- D seconds at R pps are round(R * D) frames: a loop that sends until
  -- the clock passes D sends one more (its last send waits for a departure
  -- at D itself). A sender that fell behind stops 10 ms after D (fewer
  -- sent); a rate without a count (a % of an unknown link) sends for D.
  local pps = require("surge.rate").pps(args.rate, args.size, link_mbps * 1e6)
  local left = pps and math.floor(pps * seconds + 0.5) or math.huge
  local t0 = surge.tsc()
  local stop_at = t0 + (seconds + (pps and 0.01 or 0)) * surge.tsc_hz()
  local sent = 0
  while surge.running() and left > 0 and surge.tsc() < stop_at do
    burst:alloc(math.min(left, burst.cap))
    probes:mark(burst)
    local s = q:send(burst)
    sent, left = sent + s, left - s
  end
  return { sent = sent, seconds = tonumber(surge.tsc() - t0) / surge.tsc_hz() }
end
