-- A server on several addresses (issue 33 item 4): surge.conn.server's addr
-- is one address, a range or a list, as a client's src. One surge client
-- per server address on one net_ring0 port (port 0 of `surge test`, its own
-- loopback), each opening to its address: every connection is served, every
-- segment of the server leaves from the address its client connected to
-- (the frames read off the ring between the polls, checksums checked by
-- surge.proto.decode), each connection ends in one counter, and a SYN to an
-- address outside the set is left in rx for the caller, unanswered.
local bit = require("bit")
local ffi = require("ffi")
local surge = require("surge")
local conn = require("surge.conn")
local decode = require("surge.proto.decode")
local ip4 = require("surge.proto.ip4")

local T = {}

local ring, pool, rx, tx, rxq, txq
local function setup()
  if ring then return end
  ring = surge.port(0, { rxq = 1, txq = 1 })
  rxq, txq = ring:rxq(0), ring:txq(0)
  pool = surge.pool{ template = surge.proto.tcp{ src = "10.0.9.1", dst = "10.0.1.1", size = 60 },
                     data_room = conn.data_room(), size = 8191 }
  rx, tx = pool:burst(64), pool:burst(64)
end

local function drain() while rxq:recv(rx) > 0 do rx:free() end end

local function be32(p, at) return ((p[at] * 256 + p[at + 1]) * 256 + p[at + 2]) * 256 + p[at + 3] end

-- The server's segments on the ring (TCP from port 80): each one's source
-- must be the address its destination (a client's) connected to; counted
-- by that address, SYN-ACKs apart. The frames go back on the ring.
local function check_replies(want, seen)
  local n = rxq:recv(rx)
  for i = 0, n - 1 do
    local p, len = rx.data[i], rx.len[i]
    if len >= 54 and p[12] == 8 and p[13] == 0 and p[23] == 6 and p[34] * 256 + p[35] == 80 then
      local src, dst = ip4.addr_text(be32(p, 26)), ip4.addr_text(be32(p, 30))
      assert(want[dst], "a segment to " .. dst .. ", not a client's address")
      assert(src == want[dst], ("the reply to %s left from %s, not %s"):format(dst, src, want[dst]))
      local text = decode.decode(ffi.string(p, len))
      assert(select(2, text:gsub("csum ok", "")) == 2, text)       -- IPv4's and TCP's
      seen.segments[src] = (seen.segments[src] or 0) + 1
      if bit.band(p[47], 0x12) == 0x12 then seen.synack[src] = (seen.synack[src] or 0) + 1 end
    end
  end
  if n > 0 then txq:send(rx) end
end

-- A server on `addr` (its addresses `each`) and a client per address, each
-- of N connections of 2 requests; returns the server
local function serve(addr, each, tag)
  setup()
  local N = 3
  local sv = conn.server{ addr = addr, capacity = 256, time_wait = 0, prefix = tag .. "s",
    response = conn.http_response{ body = 300 } }
  local clients, want = {}, {}
  for k, a in ipairs(each) do
    local src = "10.0.9." .. k
    want[src] = a
    clients[k] = conn.client{ src = src, server = a, connections = N, requests = 2, capacity = 16, time_wait = 0,
      peer_mac = "02:00:00:00:00:01", prefix = ("%sc%d"):format(tag, k) }
  end
  local seen, done = { segments = {}, synack = {} }, false
  for _ = 1, 20000 do
    for _, cl in ipairs(clients) do
      if cl:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    end
    if sv:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    check_replies(want, seen)
    done = sv:stats().concurrent == 0
    for _, cl in ipairs(clients) do done = done and cl:done() and cl:stats().concurrent == 0 end
    if done then break end
  end
  drain()
  assert(done, "the clients did not finish: " .. conn.format(sv:summary()))
  for k, cl in ipairs(clients) do
    local s = cl:stats()
    assert(s.completed == N and s.ended == N and s.responses == 2 * N, each[k] .. ": " .. conn.format(cl:summary()))
    assert(seen.synack[each[k]] == N, ("%s: %s SYN-ACKs from it"):format(each[k], tostring(seen.synack[each[k]])))
    assert(seen.segments[each[k]] >= 3 * N, each[k])
  end
  local s = sv:stats()
  local total = N * #each
  assert(s.attempted == total and s.completed == total and s.ended == total and s.failed == 0 and s.requests == 2 * total,
    conn.format(sv:summary()))
  assert(s.retransmits == 0 and s.rx_dropped == 0, conn.format(sv:summary()))
  return sv
end

-- A SYN to an address outside the set: the poll leaves it in rx (its
-- return counts it), the server sends nothing and counts nothing
local function outside_left_in_rx(sv, dst)
  local before = sv:stats()
  local syn = surge.proto.tcp{ src = "10.0.9.99", dst = dst, sport = 5555, dport = 80, flags = "S", size = 60 }.bytes
  assert(tx:alloc(1) == 1)
  ffi.copy(tx.data[0], syn, #syn)
  tx.len[0] = #syn
  txq:send(tx)
  local kept = 0
  for _ = 1, 100 do
    kept = sv:poll(rxq, txq, rx, tx)
    if kept > 0 then break end
  end
  assert(kept == 1, "the SYN to " .. dst .. " was not left for the caller")
  assert(ffi.string(rx.data[0], rx.len[0]) == syn, "rx holds the SYN as sent")
  rx:free()
  for _ = 1, 10 do assert(sv:poll(rxq, txq, rx, tx) == 0, "something came back: an answer") end
  local after = sv:stats()
  assert(after.tx_segments == before.tx_segments and after.attempted == before.attempted
    and after.rx_segments == before.rx_segments and after.rst_sent == before.rst_sent, conn.format(sv:summary()))
end

-- a list: scattered addresses (the address's index by a binary search), a range inside it
function T.server_on_a_list()
  local sv = serve({ "10.0.1.7", "10.0.1.3", "10.0.1.20-10.0.1.22" },
    { "10.0.1.7", "10.0.1.3", "10.0.1.20", "10.0.1.21", "10.0.1.22" }, "sa1")
  outside_left_in_rx(sv, "10.0.1.4")
  outside_left_in_rx(sv, "10.0.1.23")
end

-- a range: consecutive addresses (the index by a subtraction)
function T.server_on_a_range()
  local sv = serve("10.0.2.1-10.0.2.4", { "10.0.2.1", "10.0.2.2", "10.0.2.3", "10.0.2.4" }, "sa2")
  outside_left_in_rx(sv, "10.0.2.5")
  outside_left_in_rx(sv, "10.0.2.0")
end

return T
