-- surge.size: IMIX proportions over 100k packets, uniform bounds, weights,
-- headers (IPv4/IPv6/UDP lengths and every checksum) rewritten right for
-- each size on reused mbufs, a compiled loop, and clear errors.
local ffi = require("ffi")
local jutil = require("jit.util")
local surge = require("surge")
local size = require("surge.size")
local flow = require("surge.flow")

local L = surge.proto.layer
local T = {}

-- An independent RFC 1071 sum.
local function sum(p, from, to, acc)
  local s = acc or 0
  for i = from, to - 1, 2 do
    s = s + p[i] * 256 + (i + 1 < to and p[i + 1] or 0)
  end
  while s > 0xffff do s = s % 65536 + math.floor(s / 65536) end
  return s
end
local function u16(p, o) return p[o] * 256 + p[o + 1] end

local function ip4_ok(p, ip, len)
  return sum(p, ip, ip + 20) == 0xffff and u16(p, ip + 2) == len - ip
end
local function udp4_ok(p, ip, u, len)
  local ulen = len - u
  if u16(p, u + 4) ~= ulen then return false end
  if u16(p, u + 6) == 0 then return true end
  local pseudo = u16(p, ip + 12) + u16(p, ip + 14) + u16(p, ip + 16) + u16(p, ip + 18) + 17 + ulen
  return sum(p, u, len, pseudo) == 0xffff
end

local function pool(t) return surge.pool{ template = t, size = 127, cache = 0 } end

-- Sizes of `packets` packets applied in bursts of 32; check(p, len, k) on each.
local function run(sz, pl, packets, check, f)
  local burst = pl:burst(32)
  local k, out = 0, {}
  while k < packets do
    local n = burst:alloc(math.min(32, packets - k))
    assert(n > 0)
    if f then f:apply(burst) end
    assert(sz:apply(burst) == n)
    for i = 0, n - 1 do
      out[k + 1] = burst.len[i]
      if check then check(burst.data[i], burst.len[i], k) end
      k = k + 1
    end
  end
  burst:free()
  return out
end

local function counts(list)
  local h = {}
  for _, s in ipairs(list) do h[s] = (h[s] or 0) + 1 end
  return h
end

function T.imix_weights_over_100k_packets()
  local sz = size.new("imix")
  local t = sz:template(surge.proto.udp{ size = 60 })
  assert(t.size == 1514 and sz.largest == 1514)
  local sizes = run(sz, pool(t), 100000)
  local h = counts(sizes)
  local want = { [60] = 7 / 12, [566] = 4 / 12, [1514] = 1 / 12 }
  local n = 0
  for s, c in pairs(h) do
    assert(want[s], "unexpected size " .. s)
    assert(math.abs(c / 100000 - want[s]) < 0.01, ("size %d: %d of 100000"):format(s, c))
    n = n + c
  end
  assert(n == 100000)
  -- the histogram the object reports is what it applied
  local hist = sz:histogram()
  assert(#hist == 3)
  for _, e in ipairs(hist) do assert(h[e[1]] == e[2], ("histogram %d: %d vs %d"):format(e[1], e[2], h[e[1]])) end
  -- every block of 12 has the exact 7:4:1, so any 12000 packets do
  for b = 0, 100000 / 12 - 2 do
    local c = {}
    for i = 1, 12 do local s = sizes[b * 12 + i]; c[s] = (c[s] or 0) + 1 end
    assert(c[60] == 7 and c[566] == 4 and c[1514] == 1, "block " .. b)
  end
  -- not a plain 7-4-1 run: the blocks are shuffled
  local runs = 0
  for i = 2, 1200 do if sizes[i] ~= sizes[i - 1] then runs = runs + 1 end end
  assert(runs > 300, "sizes come in long runs: " .. runs)
end

function T.uniform_bounds_and_reproducible()
  local a = size.new({ uniform = { 64, 1500 }, seed = 5 })
  local b = size.new({ uniform = { 64, 1500 }, seed = 5 })
  local c = size.new({ uniform = { 64, 1500 }, seed = 6 })
  local t = a:template(surge.proto.udp{})
  b:template(t); c:template(t)
  local pl = pool(t)
  local sa, sb, sc = run(a, pl, 1437 * 2), run(b, pl, 1437 * 2), run(c, pl, 1437 * 2)
  local h = counts(sa)
  for s = 64, 1500 do assert(h[s] == 2, ("size %d: %s times in two periods"):format(s, tostring(h[s]))) end
  local same, diff = true, false
  for i = 1, #sa do
    assert(sa[i] >= 64 and sa[i] <= 1500)
    if sa[i] ~= sb[i] then same = false end
    if sa[i] ~= sc[i] then diff = true end
  end
  assert(same and diff, "seeds: same sequence for a seed, another for another")
  -- small spans repeat whole shuffled blocks: 1024 / 3 -> 342 blocks of 3
  local u = size.new({ uniform = { 60, 62 } })
  assert(u.n == 1026)
  local hu = counts(u.list)
  assert(hu[60] == 342 and hu[61] == 342 and hu[62] == 342)
end

function T.weights_fixed_and_sequences()
  -- non-integer weights: a block of 10000
  local w = size.new({ weighted = { { 60, 0.5 }, { 1000, 0.25 }, { 1500, 0.25 } } })
  local h = counts(w.list)
  assert(h[60] * 2 == w.n and h[1000] * 4 == w.n and h[1500] * 4 == w.n, "exact shares")
  -- a bare table of {size, weight}, reduced by the common divisor
  local b = size.new({ { 100, 30 }, { 200, 10 } })
  assert(b.n % 4 == 0 and counts(b.list)[100] == b.n * 3 / 4)
  local f = size.new(128)
  local t = f:template(surge.proto.udp{ size = 60 })
  assert(t.size == 128)
  local s = run(f, pool(t), 100)
  for i = 1, 100 do assert(s[i] == 128) end
  local q = size.new({ seq = { 60, 61, 62, 1000 } })
  t = q:template(surge.proto.udp{ size = 60 })
  s = run(q, pool(t), 40)
  for i = 1, 40 do assert(s[i] == ({ 60, 61, 62, 1000 })[(i - 1) % 4 + 1]) end
  -- sz:next and reset
  q:reset()
  local buf = ffi.new("uint8_t[?]", t.size)
  ffi.copy(buf, t.bytes, t.size)
  assert(q:next(buf) == 60 and q:next(buf) == 61)
  assert(u16(buf, 16) == 61 - 14, "next() rewrote the IPv4 total length")
  -- frames(n): the first frames, at their sizes
  local fr = q:frames(5)
  assert(#fr[1] == 60 and #fr[4] == 1000 and #fr[5] == 60)
  assert(q:next(buf) == 62, "frames() kept the position")
  -- without a template: lengths only
  local plain = size.new({ seq = { 70, 80 } })
  local pl = pool(surge.proto.udp{ size = 80 })
  s = run(plain, pl, 4)
  assert(s[1] == 70 and s[2] == 80 and s[3] == 70)
end

-- Lengths and checksums for every size, with a flow on top, on mbufs reused
-- at other sizes (the payload is not zero: the partial sums matter).
function T.headers_follow_the_size()
  local sz = size.new({ uniform = { 60, 1514 }, seed = 3 })
  local t = sz:template(surge.proto.udp{ size = 200, payload = "random", src = "10.0.0.1" })
  local pl = pool(t)
  local f = flow{ template = t, fields = { ["ip4.src"] = { range = { "10.0.0.1", "10.0.0.99" } },
                                           ["udp.sport"] = { random = { 1, 65535 } } } }
  local base = ffi.cast("const uint8_t *", t.bytes)
  run(sz, pl, 5000, function(p, len, k)
    assert(ip4_ok(p, 14, len), ("IPv4 header, packet %d, %d bytes"):format(k, len))
    assert(udp4_ok(p, 14, 34, len), ("UDP, packet %d, %d bytes"):format(k, len))
    for i = 42, len - 1, 97 do assert(p[i] == base[i], "payload") end
  end, f)
  -- IPv4 / TCP: the pseudo header length (no field) and the IPv4 total length
  local t2 = sz:template(surge.proto.stack{ L.eth{}, L.ip4{}, L.tcp{}, size = 100, payload = "inc" })
  run(sz, pool(t2), 2000, function(p, len, k)
    assert(ip4_ok(p, 14, len), "IPv4 at " .. k)
    local tl = len - 34
    local pseudo = u16(p, 26) + u16(p, 28) + u16(p, 30) + u16(p, 32) + 6 + tl
    assert(sum(p, 34, len, pseudo) == 0xffff, ("TCP checksum, packet %d, %d bytes"):format(k, len))
  end)
  -- IPv6 / UDP: payload length, UDP length, checksum over the IPv6 pseudo header
  local sz6 = size.new({ uniform = { 62, 1514 }, seed = 3 })   -- the headers take 62 bytes
  local t6 = sz6:template(surge.proto.stack{ L.eth{}, L.ip6{}, L.udp{}, size = 62, payload = "inc" })
  run(sz6, pool(t6), 2000, function(p, len, k)
    assert(u16(p, 18) == len - 54, "IPv6 payload length")
    assert(u16(p, 58) == len - 54, "UDP length")
    assert(sum(p, 54, len, sum(p, 22, 54) + 17 + len - 54) == 0xffff, ("UDP/IPv6, packet %d, %d bytes"):format(k, len))
  end)
end

-- VXLAN: outer and inner lengths, the inner checksums under the outer one.
function T.tunnel_lengths_and_cascaded_checksums()
  local sz = size.new({ weighted = { { 120, 3 }, { 700, 2 }, { 1514, 1 } } })
  local t = sz:template(surge.proto.stack{ L.eth{}, L.ip4{}, L.udp{}, L.vxlan{ vni = 7 }, L.eth{}, L.ip4{},
                                           L.udp{}, size = 120, payload = "inc" })
  local oip, ou, iip, iu = t.layers[2].off, t.layers[3].off, t.layers[6].off, t.layers[7].off
  local f = flow{ template = t, fields = { ["ip4#2.src"] = { range = { 1, 1000 } }, ["vxlan.vni"] = { range = { 1, 3 } } } }
  local seen = {}
  run(sz, pool(t), 3000, function(p, len, k)
    seen[len] = true
    assert(ip4_ok(p, oip, len) and ip4_ok(p, iip, len), "IPv4 headers at " .. k)
    assert(udp4_ok(p, iip, iu, len), ("inner UDP, packet %d, %d bytes"):format(k, len))
    assert(udp4_ok(p, oip, ou, len), ("outer UDP, packet %d, %d bytes"):format(k, len))
  end, f)
  assert(seen[120] and seen[700] and seen[1514])
end

function T.apply_loop_compiles()
  local sz = size.new("imix")
  local t = sz:template(surge.proto.udp{})
  local burst = pool(t):burst(32)
  local started, stopped, aborted = {}, {}, {}
  local function on_trace(what, tr, func, pc, otr, oex)
    if what == "start" then
      local info = jutil.funcinfo(func, pc)
      started[tr] = info.source == "=surge.size" and info.currentline or false
    elseif what == "stop" then
      if started[tr] then stopped[#stopped + 1] = started[tr] end
    elseif what == "abort" and started[tr] then
      aborted[#aborted + 1] = tostring(jutil.funcinfo(func, pc).currentline) .. ": " .. tostring(oex)
    end
  end
  jit.flush()
  jit.attach(on_trace, "trace")
  for _ = 1, 3000 do
    burst:alloc()
    sz:apply(burst)
  end
  jit.attach(on_trace)
  burst:free()
  assert(#stopped > 0, "no trace completed in the size code; aborts: " .. table.concat(aborted, "; "))
end

local function fails(fn, pattern)
  local ok, err = pcall(fn)
  assert(not ok, "expected an error: " .. pattern)
  assert(err:find(pattern, 1, true), ("'%s' does not say '%s'"):format(err, pattern))
  assert(err:match("test_size.lua:%d+: surge.size: "), "error must name the caller's line: " .. err)
  assert(not err:find("\n"), "one line: " .. err)
end

function T.errors()
  fails(function() local r = size.new(9000); return r end,
    "size 9000 bytes is above the limit 1514 (a standard Ethernet frame without FCS; give { max = N } for jumbo frames)")
  fails(function() local r = size.new({ uniform = { 60, 9000 } }); return r end, "size 9000 bytes is above the limit 1514")
  fails(function() local r = size.new(40); return r end, "size 40 bytes is below the minimum 60")
  fails(function() local r = size.new(9000, { max = 9600, pool = pool(surge.proto.udp{}) }); return r end,
    "max = 9600 is above the pool's data room")
  fails(function() local r = size.new(1700, { pool = pool(surge.proto.udp{}) }); return r end,
    "size 1700 bytes is above the limit")
  fails(function() local r = size.new({ uniform = { 100, 50 } }); return r end, "uniform = { 100, 50 }: low is above high")
  fails(function() local r = size.new({ uniform = { 100 } }); return r end, "uniform needs { LO, HI }")
  fails(function() local r = size.new({ weighted = {} }); return r end, "weighted needs { {SIZE, WEIGHT}, ... }")
  fails(function() local r = size.new({ weighted = { { 60, 0 } } }); return r end, "weighted: the weights add up to 0")
  fails(function() local r = size.new({ weighted = { { 60, -1 } } }); return r end, "weight -1 must be 0 or more")
  fails(function() local r = size.new({ weighted = { 60, 1 } }); return r end, "weighted[1]: give { SIZE, WEIGHT }")
  fails(function() local r = size.new("jumbo"); return r end, "spec jumbo: give a size, \"imix\"")
  fails(function() local r = size.new({ uniform = { 60, 70 }, colour = 1 }); return r end, "unknown key 'colour'")
  fails(function() local r = size.new(64, { mtu = 1500 }); return r end, "unknown option 'mtu'")
  fails(function() local r = size.new(60.5); return r end, "size = 60.5 is not a whole number")
  fails(function() local r = size(60, { min = 10 }); return r end, "min = 10: a frame holds at least")
  assert(size(64).list[1] == 64, "surge.size(spec) is surge.size.new(spec)")
  fails(function() local r = size.new({ seq = {} }); return r end, "seq needs a list of sizes")
  local sz = size.new("imix")
  local burst = pool(surge.proto.udp{}):burst(4)
  fails(function() local r = sz:apply(burst, surge.proto.udp{ size = 60 }); return r end,
    "sizes reach 1514 bytes but the template has 60: make the pool from sz:template(t)")
  local vx = surge.proto.stack{ L.eth{}, L.ip4{}, L.udp{}, L.vxlan{}, L.eth{}, L.ip4{}, L.udp{} }
  fails(function() local r = sz:template(vx); return r end, "size 60 bytes is below the template's 92 bytes of headers")
  fails(function() local r = sz:template("bytes"); return r end, "template must come from surge.proto")
end

return T
