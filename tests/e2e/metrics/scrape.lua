-- scrape.lua - what the metrics test scrapes: a paced sender with latency
-- probes on a net_ring loopback, a counter whose name has '-' (as
-- surge_script_tx_sent_total), a counter and a gauge of master's.
--   surge run --metrics 0 --vdev net_ring_m0 --lcores "(0-1)@(0-1)" --duration 12 scrape.lua
local surge = require "surge"

local PROBE_AT = 44

function master()
  local port = surge.port(0, { rxq = 1, txq = 1 })
  local q = port:txq(0)
  q:set_rate("20kpps")
  surge.launch("tx", q)
  local lat = surge.latency.receiver{ offset = PROBE_AT }
  local burst = surge.pool{ size = 63 }:burst(64)
  local rxq = port:rxq(0)
  local seen = surge.counter("rx.seen")
  surge.gauge("queue.depth"):set(42.5)
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

function tx(q)
  local pool = surge.pool{ template = surge.proto.udp{ size = 64 }, shared = true }
  local burst = pool:burst(32)
  local probes = surge.latency.marker{ offset = PROBE_AT, every = 10 }
  local sent = surge.counter("tx-sent")
  while surge.running() do
    burst:alloc()
    probes:mark(burst)
    sent:add(q:send(burst))
  end
  return 0
end
