-- bench/conn-ring.lua - the connection engine's C path alone: a surge
-- client and a surge server engine polled in turn on one lcore over a
-- net_ring loopback (no wire, no other process, no hugepages), for an A/B
-- of two builds of the engine on a busy machine where scripts/bench-conn
-- (two processes over memif, against dperf) cannot run or hold still.
--
--   surge run --no-huge --vdev net_ring0 bench/conn-ring.lua --mode tcp --seconds 3
--
-- Prints "MODE: N connections/s (R requests/s), C CPU-s", the rate per
-- CPU-second of the process (both engines busy-poll the one lcore).
-- --mode tcp: a new connection per 1-byte request and response; http: per
-- GET and a 200 with a 12-byte body; ka: 100 GETs per connection.
local surge = require("surge")

function configure(p)
  p:description("The connection engine's client and server on one net_ring loopback: connections per second.")
  p:option("--mode", "tcp, http or ka", "tcp")
  p:option("--seconds", "how long", 3, "number >0")
  p:option("--concurrency", "client connections open at once (past 64 the ring drops)", 64, "integer 1..60000")
  p:check(function(o)
    if o.mode ~= "tcp" and o.mode ~= "http" and o.mode ~= "ka" then return "--mode: tcp, http or ka" end
  end)
end

local function cpu_s()
  local f = io.open("/proc/self/stat")
  local t = f:read("*a")
  f:close()
  local rest = t:match("%) (.*)$")
  local v = {}
  for x in rest:gmatch("%S+") do v[#v + 1] = x end
  return (tonumber(v[12]) + tonumber(v[13])) / 100       -- utime + stime (fields 14, 15), clock ticks
end

function master(args)
  local conn = require("surge.conn")
  local SRV, CLI = "10.0.0.1", "10.0.0.2"
  local port = surge.port(0, { rxq = 1, txq = 1 })
  local rxq, txq = port:rxq(0), port:txq(0)
  local pool = surge.pool{ template = surge.proto.tcp{ src = CLI, dst = SRV, size = 60 }, data_room = conn.data_room(),
                           size = 16383 }
  local rx, tx = pool:burst(64), pool:burst(64)
  local http = args.mode ~= "tcp"
  local sv = conn.server{ addr = SRV, capacity = 65536, time_wait = 0, prefix = "bs",
    response = http and conn.http_response{ body = "hello dperf!" } or "r",
    expect = not http and { length = 1 } or nil }
  local cl = conn.client{ src = CLI, server = SRV, time_wait = 0, peer_mac = "02:00:00:00:00:01", prefix = "bc",
    concurrency = args.concurrency, requests = args.mode == "ka" and 100 or 1,
    request = not http and "q" or nil, expect = not http and { length = 1 } or nil }
  local hz = tonumber(surge.tsc_hz())
  local t0, c0 = tonumber(surge.tsc()), cpu_s()
  local stop = t0 + args.seconds * hz
  local k = 0
  while surge.running() do
    if cl:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    if sv:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    k = k + 1
    if k % 256 == 0 and tonumber(surge.tsc()) >= stop then break end
  end
  local secs, cpu = (tonumber(surge.tsc()) - t0) / hz, cpu_s() - c0
  local c, s = cl:stats(), sv:stats()
  cl:abort(txq, tx)
  sv:abort(txq, tx)
  while rxq:recv(rx) > 0 do rx:free() end
  print(("%s: %.0f connections/s (%.0f requests/s), %.2f CPU-s in %.2f s, %.0f connections per CPU-s, "
    .. "%d failed"):format(args.mode, c.completed / secs, c.responses / secs, cpu, secs, c.completed / cpu,
    c.failed + s.failed))
  return 0
end
