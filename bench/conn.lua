-- bench/conn.lua - one side of scripts/bench-conn: surge's connection
-- engine (docs/connections.md) as a client or a server on one worker lcore,
-- over a port whose peer's MAC is known (a net_memif pair: no ARP to wait
-- for, as dperf's configuration gives its gateway's MAC).
--
--   surge run --vdev net_memif0,role=server,... bench/conn.lua --role server --mode tcp
--   surge run --vdev net_memif0,role=client,... bench/conn.lua --role client --mode http
--
-- --mode tcp: the request and the response are 1 byte each (dperf's
-- "protocol tcp" with "payload_size 1"); --mode http: an HTTP/1.1 GET and a
-- 200 with a 12-byte body (dperf's "hello dperf!"). The counters show in the
-- stats lines (client.established, server.concurrent, ...), which
-- scripts/bench-conn reads per second; the summary line is printed at the end.
local surge = require("surge")

function configure(p)
  p:description("scripts/bench-conn's surge side: a client or server engine, peer MAC given.")
  p:option("--role", "client or server", "client")
  p:option("--mode", "tcp (1-byte request and response) or http", "tcp")
  p:option("--addr", "this side's address (a client: or a range A-B, its source addresses)", "10.9.0.2")
  p:option("--peer", "the other side's address (the client's server)", "10.9.0.1")
  p:option("--mac", "this side's MAC", "02:00:00:00:00:02")
  p:option("--peer-mac", "the other side's MAC", "02:00:00:00:00:01")
  p:option("--rate", "client: opens per second (0: as fast as --concurrency allows)", 0, "number >=0")
  p:option("--concurrency", "client: most connections open at once (64512 per --addr address)", 4096,
    "integer 1..16777216")
  p:option("--requests", "client: requests per connection (keep-alive)", 1, "integer 1..65535")
  p:option("--think", "client: seconds between a response and the next request", 0, "number 0..600")
  p:option("--time-wait", "TIME_WAIT, seconds", 0.01, "number 0..600")
  p:option("--idle-mode", "the lcore's idle policy: busy, pause or sleep (default: sleep)", "")
  p:option("--capacity", "table entries (0: a server's 65536, a client's addresses x 64512)", 0, "integer 0..16777216")
  p:option("--close-after", "server: requests answered before it closes, its FIN with the last (0: until the client closes)",
    0, "integer 0..65535")
  p:option("--idle", "seconds a connection may wait on its peer", 10, "number 0.001..600")
  p:check(function(o)
    if o.role ~= "client" and o.role ~= "server" then return ("--role %s: client or server"):format(o.role) end
    if o.mode ~= "tcp" and o.mode ~= "http" then return ("--mode %s: tcp or http"):format(o.mode) end
    return nil
  end)
end

function master(args)
  local conn = require("surge.conn")
  -- the memif server waits for its client, started after it
  local port = surge.port(0, { rxq = 1, txq = 1, link_timeout = 30 })
  local r = surge.wait(surge.launch("side", port:rxq(0), port:txq(0), args))
  if r == nil then return 1 end
  print(conn.format(r))
  return 0
end

function side(rxq, txq, args)
  local conn = require("surge.conn")
  local tcp = args.mode == "tcp"
  if args.idle_mode ~= "" then surge.idle{ mode = args.idle_mode } end
  local e
  if args.role == "server" then
    e = conn.server{ addr = args.addr, port = 80, mac = args.mac, capacity = args.capacity > 0 and args.capacity or nil,
      idle = args.idle, time_wait = args.time_wait, requests = args.close_after, expect = tcp and { length = 1 } or "http",
      response = tcp and "y" or conn.http_response{ body = 12 } }
  else
    e = conn.client{ src = args.addr, server = args.peer, port = 80, mac = args.mac, peer_mac = args.peer_mac,
      connections = 0, rate = args.rate, concurrency = args.concurrency,
      capacity = args.capacity > 0 and args.capacity or nil, requests = args.requests, think = args.think,
      time_wait = args.time_wait, idle = args.idle, expect = tcp and { length = 1 } or { http = 200 },
      request = tcp and "x" or conn.http_get{ host = args.peer, path = "/" } }
  end
  local pool = surge.pool{ template = e:template(), data_room = e:data_room(), size = 16383 }
  local t0 = surge.tsc()
  e:run{ rxq = rxq, txq = txq, pool = pool }
  return e:summary(tonumber(surge.tsc() - t0) / tonumber(surge.tsc_hz()))
end
