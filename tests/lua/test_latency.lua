-- Latency probes from Lua: the UDP checksum stays valid when a probe is
-- marked, when C stamps it at send and when alloc turns the mbuf back into
-- the template; the receiver's counts and histogram. Run with --vdev
-- net_ring0 (port 0, its own loopback).
local ffi = require "ffi"
local bit = require "bit"
local surge = require "surge"

local T = {}

-- An independent UDP/IPv4 checksum check over a frame (eth 14, ip 20).
local function udp_ok(p, len)
  local function w(i) return p[i] * 256 + (i + 1 < len and p[i + 1] or 0) end
  local s = 0
  for i = 26, 33, 2 do s = s + w(i) end            -- addresses
  s = s + 17 + (len - 34)
  for i = 34, len - 1, 2 do s = s + w(i) end
  while s > 0xffff do s = bit.band(s, 0xffff) + bit.rshift(s, 16) end
  return s == 0xffff
end

local ring
local function port()
  ring = ring or surge.port("net_ring0", { rxq = 1, txq = 1 })
  return ring
end

function T.probe_checksums_stay_valid()
  local t = surge.proto.udp{ size = 80, payload = "inc" }
  local pool = surge.pool{ size = 63, cache = 1, template = t, shared = true }
  local b = pool:burst(8)
  local m = surge.latency.marker{ offset = 45, every = 2 }   -- odd offset: words straddle
  local rx = pool:burst(32)
  local lat = surge.latency.receiver{ offset = 45 }
  for round = 1, 20 do
    assert(b:alloc() == 8)
    for i = 0, 7 do assert(udp_ok(b.data[i], b.len[i]), "template checksum, round " .. round) end
    assert(m:mark(b) == 4)
    for i = 0, 7 do assert(udp_ok(b.data[i], b.len[i]), "after marking, packet " .. i) end
    assert(port():txq(0):send(b) == 8)
    assert(port():rxq(0):recv(rx) == 8)
    for i = 0, 7 do assert(udp_ok(rx.data[i], rx.len[i]), "after stamping, packet " .. i) end
    assert(lat:scan(rx) == 4)
    rx:free()
  end
  local s = lat:summary()
  assert(s.probes == 80 and s.lost == 0 and s.duplicated == 0 and s.reordered == 0)
  assert(s.min_ns >= 0 and s.min_ns <= s.p50_ns and s.p50_ns <= s.max_ns)
  assert(pool:info().avail == 63)
end

function T.receiver_counts_by_hand()
  local lat = surge.latency.receiver{ offset = 44 }
  for _, seq in ipairs({ 0, 1, 3, 2, 2, 5 }) do lat:add(1000 + seq, seq) end
  local s = lat:summary()
  -- 4 never came, 2 arrived after 3, the second 2 is a duplicate
  assert(s.probes == 5 and s.lost == 1 and s.reordered == 1 and s.duplicated == 1,
    ("%d %d %d %d"):format(s.probes, s.lost, s.reordered, s.duplicated))
end

function T.bad_offsets()
  local pool = surge.pool{ size = 15, cache = 1, template = surge.proto.udp{ size = 60 } }
  local b = pool:burst(1)
  b:alloc()
  local ok, err = pcall(function() surge.latency.marker{ offset = 50 }:mark(b) end)
  assert(not ok and err:match("needs 16 bytes, the packet has 60"), err)
  b:free()
end

return T
