-- bench/ka-loop.lua - keep-alive requests through a surge client
-- and a surge server on one net_ring port, in one task: the CPU time per
-- request of both ends together (the process's utime + stime, so time the
-- VM gives to other work is not counted, as the pair bench's rates are:
-- docs/performance.md, "Keep-alive's per-request path"). Compare two
-- builds in one batch:
--
--   for s in build/surge OTHER/build/surge; do
--     $s run --no-huge --vdev net_ring0 bench/ka-loop.lua --responses 5000000 --concurrency 32
--   done
--
-- (concurrency past ~64 overflows the ring: the engines retransmit, and
-- the figure is the RTO's, not the per-request path's)
local surge = require("surge")

function configure(p)
  p:option("--responses", "responses to wait for", 2000000, "integer 1..1000000000")
  p:option("--concurrency", "connections (past ~64 the ring overflows)", 32, "integer 1..4096")
end

function master(args)
  local r = surge.wait(surge.launch("loop", surge.port(0, { rxq = 1, txq = 1 }), args))
  print(("ka-loop: %d responses, %.1f ns CPU per request (%.3f s CPU, %.3f s wall)"):format(r.n, r.cpu / r.n * 1e9,
    r.cpu, r.wall))
  return 0
end

local function cpu()
  local f = io.open("/proc/self/stat")
  local s = f:read("*a")
  f:close()
  local fields = {}
  for w in s:sub(s:find(")", 1, true) + 2):gmatch("%S+") do fields[#fields + 1] = w end
  -- utime, stime: fields 14 and 15 (12 and 13 after the name), in ticks of 1/100 s
  return (tonumber(fields[12]) + tonumber(fields[13])) / 100
end

function loop(port, args)
  local conn = require("surge.conn")
  local rxq, txq = port:rxq(0), port:txq(0)
  local sv = conn.server{ addr = "10.0.0.1", capacity = 8192, time_wait = 0,
    response = conn.http_response{ body = 12 } }
  local cl = conn.client{ src = "10.0.0.2", server = "10.0.0.1", peer_mac = "02:00:00:00:00:01", capacity = 8192,
    concurrency = args.concurrency, connections = 0, requests = 65535, time_wait = 0, idle = 60 }
  local pool = surge.pool{ template = cl:template(), data_room = cl:data_room(), size = 16383, shared = true }
  local rx, tx = pool:burst(64), pool:burst(64)
  local ffi = require("ffi")
  local C = ffi.C
  local st = ffi.new("struct surge_conn_stats")
  local warm = 200000
  local c0, t0, r0
  while true do
    if cl:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    if sv:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    C.surge_conn_stats(cl.id, st)
    local r = tonumber(st.responses)
    if not c0 and r >= warm then c0, t0, r0 = cpu(), os.clock(), r end
    if c0 and r >= r0 + args.responses then
      local c1 = cpu()
      return { n = r - r0, cpu = c1 - c0, wall = os.clock() - t0 }
    end
  end
end
