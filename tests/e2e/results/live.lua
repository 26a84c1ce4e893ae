-- live.lua - a paced sender with latency probes, custom counters and a
-- gauge on a net_ring loopback, for reading a running surge from outside
-- (DPDK telemetry, the Prometheus endpoint). --send-for S: the task stops
-- sending S seconds in and the run goes on quiet to its end, so that what
-- was last read from outside is the run's final count.
--   surge run --vdev net_ring_live0 --lcores "(0-1)@(0-1)" --duration 5 live.lua
--   ... live.lua --rate 20kpps --rx-name rx.seen --tx-name tx-sent --gauge queue.depth
local surge = require("surge")

local PROBE_AT = 44

function configure(p)
  p:option("--rate", "the sender's rate", "50kpps")
  p:option("--rx-name", "master's counter of frames received", "rx_seen")
  p:option("--tx-name", "the task's counter of frames sent", "tx_sent")
  p:option("--gauge", "a gauge of master's set to 42.5 (none: no gauge)", "")
  p:option("--send-for", "seconds the task sends (0: the whole run), then stays idle to the end", 0,
    "number 0..1e6")
end

function master(args)
  local port = surge.port(0, { rxq = 1, txq = 1 })
  local q = port:txq(0)
  q:set_rate(args.rate)
  surge.launch("tx", q, args.tx_name, args.send_for)
  local lat = surge.latency.receiver{ offset = PROBE_AT }
  local burst = surge.pool{ size = 63 }:burst(64)
  local rxq = port:rxq(0)
  local seen = surge.counter(args.rx_name)
  if args.gauge ~= "" then surge.gauge(args.gauge):set(42.5) end
  surge.idle{ mode = "pause" }
  while surge.poll() > 0 do
    local n = rxq:recv(burst)
    if n > 0 then lat:scan(burst); seen:add(n) end
  end
  surge.wait()
  for _ = 1, 1000 do
    if rxq:recv(burst) == 0 then break end
    lat:scan(burst)
  end
  burst:free()
  return 0
end

function tx(q, name, send_for)
  local stop = send_for > 0 and tonumber(surge.tsc()) + send_for * surge.tsc_hz() or math.huge
  local pool = surge.pool{ template = surge.proto.udp{ size = 64 }, shared = true }
  local burst = pool:burst(32)
  local probes = surge.latency.marker{ offset = PROBE_AT, every = 10 }
  local sent = surge.counter(name)
  while surge.running() and tonumber(surge.tsc()) < stop do
    burst:alloc()
    probes:mark(burst)
    sent:add(q:send(burst))
  end
  -- the quiet tail: every frame sent is in, and scraped, before the stop
  while surge.running() do surge.sleep(0.01) end
  return 0
end
