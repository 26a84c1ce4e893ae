-- Every connection ends and is counted once (issue 31 item 4): an engine's
-- attempted connections equal completed + failed + aborted + closed_other
-- once none is open. A surge client and a surge server on one net_ring0
-- port (port 0 of `surge test`, its own loopback), as test_conn_hooks.lua
-- runs them: connections cut by e:abort() (the run's end) in each state, a
-- client whose server never answers, and a server's connections closed
-- before any request (a client's hook closing at on_established) or with
-- no answer (its on_request closing) each land in one counter, and the
-- counts add up.
local surge = require("surge")
local conn = require("surge.conn")

local T = {}

local SRV, CLI = "10.0.0.1", "10.0.0.2"
local ring, pool, rx, tx, rxq, txq
local function setup()
  if ring then return end
  ring = surge.port(0, { rxq = 1, txq = 1 })
  rxq, txq = ring:rxq(0), ring:txq(0)
  pool = surge.pool{ template = surge.proto.tcp{ src = CLI, dst = SRV, size = 60 }, data_room = conn.data_room(),
                     size = 8191 }
  rx, tx = pool:burst(64), pool:burst(64)
end

local function server(o)
  o.addr, o.capacity, o.time_wait = SRV, 1024, 0
  o.response = o.response or conn.http_response{ body = 5000 }
  return conn.server(o)
end

local function client(o)
  o.src, o.server, o.capacity, o.time_wait = CLI, SRV, 1024, 0
  o.peer_mac = "02:00:00:00:00:01"
  return conn.client(o)
end

-- `rounds` polls of each engine (sv may be nil: no server), frames an
-- engine leaves put back on the ring; true once the client is done and
-- both tables are empty
local function pump(cl, sv, rounds)
  for _ = 1, rounds do
    if cl:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    if sv then
      if sv:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    else
      while rxq:recv(rx) > 0 do rx:free() end    -- nobody answers
    end
    if cl:done() and cl:stats().concurrent == 0 and (not sv or sv:stats().concurrent == 0) then return true end
  end
  return false
end

-- every attempted connection counted once, none open
local function adds_up(e, what)
  local s = e:stats()
  assert(s.concurrent == 0, what .. ": " .. s.concurrent .. " still open")
  assert(s.ended == s.attempted, ("%s: %d attempted, %d counted: %s"):format(what, s.attempted, s.ended,
    conn.format(e:summary())))
  return s
end

local function drain() while rxq:recv(rx) > 0 do rx:free() end end

-- A client cut by the run's end while its server never answers: each SYN
-- unanswered, counted aborted (it was "5 attempted, 0 completed, 0 failed")
function T.unanswered_client_aborted()
  setup()
  local cl = client{ prefix = "k1c", connections = 5, rto = 10 }
  assert(not pump(cl, nil, 50))
  assert(cl:stats().attempted == 5)
  assert(cl:abort(txq, tx) == 0, "no RST for an unanswered SYN")
  drain()
  local s = adds_up(cl, "client")
  assert(s.aborted == 5 and s.completed == 0 and s.failed == 0, conn.format(cl:summary()))
  assert(conn.format(cl:summary()):find("5 aborted, 0 closed other", 1, true), conn.format(cl:summary()))
end

-- Both ends cut mid-run (requests on keep-alive connections, some still
-- opening): what each had not counted is aborted, both add up; a server's
-- connections open at the end are aborted, each reset counted once
function T.abort_mid_run_adds_up()
  setup()
  local sv = server{ prefix = "k2s" }
  local cl = client{ prefix = "k2c", connections = 400, concurrency = 64, requests = 20 }
  assert(not pump(cl, sv, 30), "the pair finished before the cut: cut earlier")
  local before = sv:stats()
  assert(before.concurrent > 0 and cl:stats().concurrent > 0)
  local reset = sv:abort(txq, tx)
  drain()
  cl:abort(txq, tx)
  drain()
  local c, s = adds_up(cl, "client"), adds_up(sv, "server")
  assert(c.aborted > 0 and s.aborted > 0, conn.format(cl:summary()) .. " / " .. conn.format(sv:summary()))
  assert(s.aborted == before.concurrent, ("server: %d aborted, %d open at the cut"):format(s.aborted,
    before.concurrent))
  assert(reset == before.concurrent - before.time_wait, "an RST for each open one")
end

-- A server's connections closed before any request (the client's hook
-- closes at on_established) and closed with no answer (its on_request
-- closes the first request): closed_other, once each
function T.server_closed_without_answer()
  setup()
  local N = 100
  for _, how in ipairs({ "fin", "rst" }) do
    local sv = server{ prefix = "k3s" .. how }
    local cl = client{ prefix = "k3c" .. how, connections = N, on_established = function(c) c:close(how) end }
    assert(pump(cl, sv, 100000), "the pair did not finish")
    local c, s = adds_up(cl, "client " .. how), adds_up(sv, "server " .. how)
    assert(c.completed == N, conn.format(cl:summary()))
    assert(s.requests == 0 and s.closed_other + s.failed_rst == N and s.completed == 0,
      how .. ": " .. conn.format(sv:summary()))
  end
  local sv = server{ prefix = "k4s", on_request = function(c) c:close() end }
  local cl = client{ prefix = "k4c", connections = N }
  assert(pump(cl, sv, 100000), "the pair did not finish")
  local c, s = adds_up(cl, "client"), adds_up(sv, "server")
  assert(s.requests == N and s.closed_other == N and s.completed == 0, conn.format(sv:summary()))
  assert(c.failed_bad == N, conn.format(cl:summary()))
end

return T
