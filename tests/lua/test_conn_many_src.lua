-- A client engine opening from many source addresses (issue 33 item 4:
-- rfc9693 from 10 000 DHCP-bound clients). A surge client and a surge
-- server on one net_ring0 port (port 0 of `surge test`, its own loopback),
-- as test_conn_counts.lua runs them. 10 000 addresses, given as a list out
-- of order with gaps between them (the engine's binary search) and as one
-- range (its subtraction): two connections each, every one answered, and
-- every SYN on the wire from the address and port docs/connections.md's
-- rule says (open k: address k mod N of the ascending list, port sport +
-- k div N). More than SURGE_CONN_ADDR_MAX (2^20) addresses: the one-line
-- error at the caller's line; exactly that many: an engine.
local surge = require("surge")
local conn = require("surge.conn")
local ip4 = require("surge.proto.ip4")
local testrun = require("surge.vm.testrun")
local errors, at = testrun.errors, testrun.at

local T = {}

local SRV, N, SPORT = "10.255.0.1", 10000, 2000
local ring, pool, rx, tx, rxq, txq
local function setup()
  if ring then return end
  ring = surge.port(0, { rxq = 1, txq = 1 })
  rxq, txq = ring:rxq(0), ring:txq(0)
  pool = surge.pool{ template = surge.proto.tcp{ src = "10.0.0.2", dst = SRV, size = 60 },
                     data_room = conn.data_room(), size = 8191 }
  rx, tx = pool:burst(64), pool:burst(64)
end

local function u32(p, o) return ((p[o] * 256 + p[o + 1]) * 256 + p[o + 2]) * 256 + p[o + 3] end

-- The SYNs (flags SYN alone) among the frames in rx, appended to syn as { source address (host order), source port }
local function record_syns(syn)
  for i = 0, rx.n - 1 do
    local p = rx.data[i]
    if rx.len[i] >= 54 and p[12] == 0x08 and p[13] == 0x00 and p[23] == 6 and p[47] == 0x02 then
      syn[#syn + 1] = { u32(p, 26), p[34] * 256 + p[35] }
    end
  end
end

-- Client and server polled in turn, each one's leftovers put back on the
-- ring, until the client is done and both tables are empty; returns the
-- SYNs in the order they went out. The client keeps fewer segments in
-- flight than a poll's burst (concurrency 32): each poll then reads all the
-- ring holds, so every SYN is read by the client once and by the server at
-- its next poll (with more, the two polls can lock in step, each reading a
-- burst of the other's frames only).
local function pump(cl, sv)
  local syn = {}
  for _ = 1, 2000000 do
    if cl:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    if rxq:recv(rx) > 0 then     -- what the client sent, read on its way to the server
      record_syns(syn)
      txq:send(rx)
    end
    if sv:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    if cl:done() and cl:stats().concurrent == 0 and sv:stats().concurrent == 0 then return syn end
  end
  error("the pair did not finish: " .. conn.format(cl:summary()) .. " / " .. conn.format(sv:summary()))
end

-- 2 x N connections from src (N addresses; sorted: them ascending, host
-- order): each answered, each SYN where the rule puts it, sent once
local function opens_by_the_rule(src, sorted, tag)
  setup()
  local n = 2 * N
  local sv = conn.server{ addr = SRV, capacity = 1024, time_wait = 0, rto = 2, prefix = tag .. "s",
    response = conn.http_response{ body = 100 } }
  local cl = conn.client{ src = src, server = SRV, sport = SPORT, capacity = n, concurrency = 32, connections = n,
    time_wait = 0, rto = 2, peer_mac = "02:00:00:00:00:01", prefix = tag .. "c" }
  local syn = pump(cl, sv)
  local c, s = cl:stats(), sv:stats()
  assert(c.attempted == n and c.completed == n and c.failed == 0, tag .. ": " .. conn.format(cl:summary()))
  assert(s.completed == n and s.responses == n, tag .. ": " .. conn.format(sv:summary()))
  assert(c.retransmits == 0 and c.tx_full == 0 and s.retransmits == 0,
    tag .. ": a segment was sent again, the SYNs' order would not be the opens' order")
  assert(#syn == n, ("%s: %d SYNs for %d connections"):format(tag, #syn, n))
  for k = 0, n - 1 do
    local a, p = sorted[k % N + 1], SPORT + math.floor(k / N)
    if syn[k + 1][1] ~= a or syn[k + 1][2] ~= p then
      error(("%s: open %d from %s:%d, the rule says %s:%d"):format(tag, k, ip4.addr_text(syn[k + 1][1]),
        syn[k + 1][2], ip4.addr_text(a), p))
    end
  end
end

-- N addresses out of order, no two consecutive: 10.1.0.0 + 3 i + i mod 2,
-- i taken in the order i = 7919 j mod N (7919, a prime, does not divide N)
function T.list_of_ten_thousand()
  local base, src, sorted = ip4.addr("10.1.0.0"), {}, {}
  for i = 0, N - 1 do sorted[i + 1] = base + 3 * i + i % 2 end
  for j = 0, N - 1 do src[j + 1] = ip4.addr_text(sorted[7919 * j % N + 1]) end
  assert(src[2] ~= ip4.addr_text(sorted[2]), "the list is given out of order")
  opens_by_the_rule(src, sorted, "list")
end

function T.range_of_ten_thousand()
  local base, sorted = ip4.addr("10.2.0.1"), {}
  for i = 0, N - 1 do sorted[i + 1] = base + i end
  opens_by_the_rule(("10.2.0.1-%s"):format(ip4.addr_text(base + N - 1)), sorted, "range")
end

-- The bound: 2^20 addresses make an engine; one more, as a range or as the
-- item of a list that passes it, is the one-line error naming src
function T.the_bound()
  local max = 1048576
  local e = conn.client{ src = "10.0.0.0-10.15.255.255", server = SRV, capacity = 16, prefix = "bound" }
  assert(e.id >= 0)
  errors(at("surge.conn.client: src: '10.0.0.0-10.16.0.0': more than " .. max .. " addresses", 1),
    function() conn.client{ src = "10.0.0.0-10.16.0.0", server = SRV, capacity = 16 } end)
  errors(at("surge.conn.client: src: '10.32.0.1': more than " .. max .. " addresses", 2),
    function()
      conn.client{ src = { "10.0.0.0-10.15.255.255", "10.32.0.1" }, server = SRV, capacity = 16 }
    end)
end

return T
