-- Latency probes from Lua: the UDP checksum stays valid when a probe is
-- marked, when C stamps it at send and when alloc turns the mbuf back into
-- the template; the receiver's counts and histogram. Run with --vdev
-- net_ring0 (port 0, its own loopback).
local ffi = require("ffi")
local bit = require("bit")
local surge = require("surge")

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

-- A receiver emptied (surge_latency_reset: surge otg reuses its receivers start after
-- start) counts and times from nothing again: no old sequence number makes a new one a
-- duplicate, no old sample stays in min/max
function T.receiver_reset_starts_over()
  local C = ffi.C
  local lat = surge.latency.receiver{ offset = 44 }
  for seq = 0, 9 do lat:add(90000 + seq, seq) end
  assert(C.surge_latency_reset(lat.id) == 0)
  local s = lat:summary()
  assert(s.probes == 0 and s.lost == 0 and s.duplicated == 0 and s.max_ns == 0)
  for seq = 0, 2 do lat:add(1000 + seq, seq) end
  s = lat:summary()
  assert(s.probes == 3 and s.duplicated == 0 and s.lost == 0 and s.reordered == 0, s.duplicated)
  assert(s.min_ns == 1000 and s.max_ns == 1002, s.max_ns)
  assert(C.surge_latency_reset(9999) == -22, "reset of no receiver")
end

-- One rule for a received probe on every path (scan, add by hand, the
-- measuring poll in test_dut): a copy is counted duplicated and its
-- latency stays out of the histogram; a probe never stamped (TSC 0) is no
-- departure: neither counted nor timed.
function T.copies_and_unstamped_probes_stay_out_of_the_histogram()
  local function hist_count(r)
    local c = 0
    for _, x in ipairs(r:buckets()) do c = c + x.count end
    return c
  end
  local h = surge.latency.receiver{ offset = 44 }
  for _, seq in ipairs({ 0, 1, 1, 2, 0 }) do h:add(1000, seq) end
  local s = h:summary()
  assert(s.probes == 3 and s.duplicated == 2 and hist_count(h) == 3,
    ("by hand: %d probes %d copies, %d in the histogram"):format(s.probes, s.duplicated, hist_count(h)))
  -- through a scan: 4 probes, the second a copy of the first, the third never stamped
  local t = surge.proto.udp{ size = 80 }
  local pool = surge.pool{ size = 63, cache = 1, template = t }
  local b = pool:burst(4)
  assert(b:alloc() == 4)
  local MAGIC = 0x50475253
  for i, x in ipairs({ { 7, 100 }, { 7, 100 }, { 8, 0 }, { 9, 200 } }) do
    local p = b.data[i - 1] + 44
    ffi.cast("uint32_t *", p)[0] = MAGIC
    ffi.cast("uint32_t *", p + 4)[0] = x[1]
    ffi.cast("uint64_t *", p + 8)[0] = x[2]
  end
  local lat, seen = surge.latency.receiver{ offset = 44 }, {}
  lat:each(function(_, seq, dup) seen[#seen + 1] = seq .. (dup and "d" or "") end)
  assert(lat:scan(b) == 3, "a probe never stamped is not taken")
  assert(table.concat(seen, " ") == "7 7d 9", table.concat(seen, " "))
  s = lat:summary()
  assert(s.probes == 2 and s.duplicated == 1 and hist_count(lat) == 2,
    ("scan: %d probes %d copies, %d in the histogram"):format(s.probes, s.duplicated, hist_count(lat)))
  b:free()
  assert(pool:info().avail == 63)
end

-- A receiver that does not exist is refused by every receive path, a burst
-- without probes too (its one check is latency_take_n's).
function T.no_such_receiver()
  local C = ffi.C
  local pool = surge.pool{ size = 15, cache = 1, template = surge.proto.udp{ size = 60 } }
  local b = pool:burst(2)
  assert(b:alloc() == 2)
  for _, id in ipairs({ 99, -1 }) do
    assert(C.surge_latency_scan(id, b, 44) == -22, "scan of receiver " .. id)
    assert(require("surge.core").last_error():find("no latency receiver " .. id, 1, true), "the error names it")
    assert(C.surge_latency_add(id, 1000, 0) == -22, "add to receiver " .. id)
  end
  b:free()
  assert(pool:info().avail == 15)
end

-- every probe reaches Lua through each(); buckets add up to the histogram
function T.samples_and_buckets()
  local t = surge.proto.udp{ size = 80 }
  local pool = surge.pool{ size = 63, cache = 1, template = t, shared = true }
  local b, rx = pool:burst(8), pool:burst(32)
  local m = surge.latency.marker{ offset = 44, every = 1 }
  local lat = surge.latency.receiver{ offset = 44 }
  local seen, sum = {}, 0
  lat:each(function(ns, seq, dup)
    assert(not dup and ns >= 0 and ns < 1e9, ("sample %s %s %s"):format(ns, seq, tostring(dup)))
    seen[#seen + 1] = seq
    sum = sum + ns
  end)
  for _ = 1, 5 do
    assert(b:alloc() == 8 and m:mark(b) == 8)
    assert(port():txq(0):send(b) == 8)
    assert(port():rxq(0):recv(rx) == 8)
    assert(lat:scan(rx) == 8)
    rx:free()
  end
  assert(#seen == 40, #seen)
  for i = 1, 40 do assert(seen[i] == i - 1, ("sample %d has seq %d"):format(i, seen[i])) end
  local s = lat:summary()
  assert(math.abs(s.mean_ns - sum / 40) <= 1, ("mean %f vs samples %f"):format(s.mean_ns, sum / 40))
  local bk, count, prev = lat:buckets(), 0, -1
  assert(#bk >= 1)
  for _, x in ipairs(bk) do
    assert(x.low_ns > prev and x.high_ns >= x.low_ns and x.count > 0)
    prev = x.high_ns
    count = count + x.count
  end
  assert(count == 40, count)
  assert(bk[1].low_ns <= s.min_ns and bk[#bk].high_ns >= s.max_ns)
  -- by hand: 1000 and 1001 share no bucket with 5000
  local h = surge.latency.receiver{ offset = 44 }
  h:add(1000, 0) h:add(1001, 1) h:add(5000, 2)
  local hb = h:buckets()
  assert(#hb == 2 and hb[1].count == 2 and hb[2].count == 1 and hb[2].low_ns <= 5000 and hb[2].high_ns >= 5000)
  lat:each(nil)
  -- a receiving lcore that never chose its policy polls with pause, not sleep
  assert(surge.idle().mode == "pause", surge.idle().mode)
  assert(pool:info().avail == 63)
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
