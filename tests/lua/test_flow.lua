-- surge.flow: flow counts and per-flow counts over whole periods read back
-- from real mbufs, checksums verified by an independent sum after many
-- applications (mbufs recycled with other values), the compiled loop is a
-- LuaJIT trace, and bad definitions are one-line errors at the caller's line.
local ffi = require("ffi")
local bit = require("bit")
local jutil = require("jit.util")
local surge = require("surge")
local flow = require("surge.flow")

local L = surge.proto.layer
local T = {}

-- An independent RFC 1071 sum (not surge.proto.checksum).
local function sum(p, from, to, acc)
  local s = acc or 0
  for i = from, to - 1, 2 do
    s = s + p[i] * 256 + (i + 1 < to and p[i + 1] or 0)
  end
  while s > 0xffff do s = s % 65536 + math.floor(s / 65536) end
  return s
end
local function u16(p, o) return p[o] * 256 + p[o + 1] end
local function u32(p, o) return ((p[o] * 256 + p[o + 1]) * 256 + p[o + 2]) * 256 + p[o + 3] end

-- ip4 header at ip valid; udp at u (over IPv4 at ip) valid or zero (none)
local function ip_ok(p, ip) return sum(p, ip, ip + (p[ip] % 16) * 4) == 0xffff end
local function udp_ok(p, ip, u, len)
  if u16(p, u + 6) == 0 then return true end
  local ulen = len - u
  if u16(p, u + 4) ~= ulen then return false end
  local pseudo = u16(p, ip + 12) + u16(p, ip + 14) + u16(p, ip + 16) + u16(p, ip + 18) + 17 + ulen
  return sum(p, u, len, pseudo) == 0xffff
end

local pools = {}
local function pool_for(t)
  local key = t.bytes
  if not pools[key] then pools[key] = surge.pool{ template = t, size = 127, cache = 0 } end
  return pools[key]
end

-- Applies f to `packets` packets in bursts of 32 from a pool of t (mbufs are
-- reused, holding the previous flows' values) and calls check(p, k) on each.
local function each_packet(f, t, packets, check)
  local burst = pool_for(t):burst(32)
  local k = 0
  while k < packets do
    local n = burst:alloc(math.min(32, packets - k))
    assert(n > 0, "pool empty")
    f:apply(burst)
    for i = 0, n - 1 do
      assert(burst.len[i] == t.size)
      check(burst.data[i], k)
      k = k + 1
    end
  end
  burst:free()
end

local function udp_t(o)
  o = o or {}
  o.size = o.size or 60
  return surge.proto.udp(o)
end

-- Histogram of key(p) over `packets` packets; checks the IPv4/UDP checksums.
local function histogram(f, t, packets, key)
  local h, distinct = {}, 0
  local ip, u = t.off.ip4, t.off.udp
  each_packet(f, t, packets, function(p, k)
    assert(ip_ok(p, ip), "IPv4 checksum bad at packet " .. k)
    assert(udp_ok(p, ip, u, t.size), "UDP checksum bad at packet " .. k)
    local v = key(p, k)
    if not h[v] then distinct = distinct + 1; h[v] = 0 end
    h[v] = h[v] + 1
  end)
  return h, distinct
end

local function all_equal(h, want)
  for v, c in pairs(h) do assert(c == want, ("value %s: %d packets, expected %d"):format(tostring(v), c, want)) end
end

function T.range_counts_over_periods()
  local t = udp_t()
  local f = flow{ template = t, fields = { ["udp.sport"] = { range = { 1000, 1099 } } } }
  assert(f:count() == 100)
  local h, d = histogram(f, t, 100 * 7, function(p) return u16(p, 34) end)
  assert(d == 100, "distinct " .. d)
  all_equal(h, 7)
  for v = 1000, 1099 do assert(h[v] == 7) end
end

function T.range_with_step_and_addresses()
  local t = udp_t()
  local f = flow{ template = t, fields = { ["ip4.src"] = { range = { "10.0.0.0", "10.0.255.255" }, step = 256 } } }
  assert(f:count() == 256)
  local h, d = histogram(f, t, 256 * 3, function(p, k)
    local a = u32(p, 26)
    assert(a == 0x0a000000 + (k % 256) * 256, "address of packet " .. k)
    return a
  end)
  assert(d == 256)
  all_equal(h, 3)
  -- descending, and a step that does not reach TO: 100, 93, ..., 2 (15 values)
  local g = flow{ template = t, fields = { ["udp.dport"] = { range = { 100, 0 }, step = -7 } } }
  assert(g:count() == 15)
  local h2 = histogram(g, t, 45, function(p, k)
    assert(u16(p, 36) == 100 - 7 * (k % 15))
    return u16(p, 36)
  end)
  all_equal(h2, 3)
end

function T.list_and_seq_keep_order()
  local t = udp_t()
  local vals = { 53, 80, 443, 8080, 53 }
  for _, kind in ipairs({ "list", "seq" }) do
    local f = flow{ template = t, fields = { ["udp.dport"] = { [kind] = vals } } }
    assert(f:count() == 5)
    histogram(f, t, 50, function(p, k)
      assert(u16(p, 36) == vals[k % 5 + 1], kind .. ": packet " .. k)
      return 0
    end)
  end
end

function T.product_first_field_fastest_and_1m_flows()
  local t = udp_t()
  -- a list keeps the order given: udp.sport varies fastest
  local f = flow{ template = t, fields = { { "udp.sport", { range = { 1, 4 } } },
                                           { "ip4.dst", { list = { "192.0.2.1", "192.0.2.2", "192.0.2.3" } } } } }
  assert(f:count() == 12)
  local h, d = histogram(f, t, 12 * 5, function(p, k)
    assert(u16(p, 34) == 1 + k % 4, "sport of packet " .. k)
    assert(u32(p, 30) == 0xc0000201 + math.floor(k / 4) % 3, "dst of packet " .. k)
    return u32(p, 30) * 65536 + u16(p, 34)
  end)
  assert(d == 12)
  all_equal(h, 5)
  -- a map goes in frame order: ip4.src (offset 26) before udp.sport (34)
  local big = flow{ template = t, fields = { ["ip4.src"] = { range = { "10.0.0.0", "10.0.255.255" } },
                                             ["udp.sport"] = { range = { 1000, 1015 } } } }
  assert(big:count() == 1048576, "1M flows: " .. big:count())
  local fr = big:frames(3)
  local p = ffi.cast("const uint8_t *", fr[3])
  assert(u32(p, 26) == 0x0a000002 and u16(p, 34) == 1000)
  -- the last flow of the period, then the first again
  big:restore({ 65535, 15 })
  local buf = ffi.new("uint8_t[60]")
  ffi.copy(buf, t.bytes, 60)
  big:next(buf)
  assert(u32(buf, 26) == 0x0a00ffff and u16(buf, 34) == 1015)
  big:next(buf)
  assert(u32(buf, 26) == 0x0a000000 and u16(buf, 34) == 1000)
  assert(ip_ok(buf, 14) and udp_ok(buf, 14, 34, 60))
end

function T.zip_longest_count_shorter_wrap()
  local t = udp_t()
  local f = flow{ template = t, combine = "zip",
                  fields = { ["ip4.src"] = { range = { "10.1.0.1", "10.1.0.5" } },
                             ["udp.sport"] = { list = { 7, 8, 9 } } } }
  assert(f:count() == 5)
  local h, d = histogram(f, t, 5 * 20, function(p, k)
    local i = k % 5
    assert(u32(p, 26) == 0x0a010001 + i, "src of packet " .. k)
    assert(u16(p, 34) == 7 + i % 3, "sport of packet " .. k)
    return u32(p, 26) * 65536 + u16(p, 34)
  end)
  assert(d == 5)
  all_equal(h, 20)
end

-- cycle: each field on its own cycle, all together again at the least
-- common multiple of the counts (OTG's patterns, lua/surge/otg/flows.lua)
function T.cycle_each_field_its_own_count()
  local t = udp_t()
  local f = flow{ template = t, combine = "cycle",
                  fields = { ["ip4.src"] = { range = { "10.1.0.1", "10.1.0.5" } },
                             ["udp.sport"] = { list = { 7, 8, 9 } } } }
  assert(f:count() == 15, f:count())
  local h, d = histogram(f, t, 15 * 4, function(p, k)
    assert(u32(p, 26) == 0x0a010001 + k % 5, "src of packet " .. k)
    assert(u16(p, 34) == 7 + k % 3, "sport of packet " .. k)
    return u32(p, 26) * 65536 + u16(p, 34)
  end)
  assert(d == 15)
  all_equal(h, 4)
end

function T.random_reproducible_within_bounds()
  local t = udp_t()
  local function seq(seed, n)
    local f = flow{ template = t, fields = { ["udp.sport"] = { random = { 100, 109 }, seed = seed },
                                             ["ip4.dst"] = { random = { "10.9.0.0", "10.9.255.255" }, seed = seed } } }
    assert(f:count() == math.huge)
    local out, h = {}, {}
    histogram(f, t, n, function(p, k)
      local v, a = u16(p, 34), u32(p, 30)
      assert(v >= 100 and v <= 109, "sport out of bounds: " .. v)
      assert(a >= 0x0a090000 and a <= 0x0a09ffff, "dst out of bounds")
      out[k + 1] = v * 2 ^ 32 + a
      h[v] = (h[v] or 0) + 1
      return 0
    end)
    return out, h
  end
  local a, h = seq(42, 20000)
  local b = seq(42, 20000)
  local c = seq(43, 20000)
  local same, diff = true, false
  for i = 1, #a do
    if a[i] ~= b[i] then same = false end
    if a[i] ~= c[i] then diff = true end
  end
  assert(same, "same seed, different sequence")
  assert(diff, "another seed, same sequence")
  for v = 100, 109 do assert(h[v] and h[v] > 1700 and h[v] < 2300, ("value %d: %s of 20000"):format(v, tostring(h[v]))) end
  -- the full 32-bit range stays within bounds too
  local g = flow{ template = t, fields = { ["ip4.src"] = { random = { 0, 4294967295 }, seed = 1 } } }
  histogram(g, t, 2000, function() return 0 end)
end

function T.reset_and_frames_keep_position()
  local t = udp_t()
  local f = flow{ template = t, fields = { ["udp.sport"] = { range = { 1, 10 } } } }
  local buf = ffi.new("uint8_t[60]")
  ffi.copy(buf, t.bytes, 60)
  f:next(buf); f:next(buf); f:next(buf)
  assert(u16(buf, 34) == 3)
  local fr = f:frames(4)
  assert(#fr == 4 and #fr[1] == 60)
  for i = 1, 4 do assert(u16(ffi.cast("const uint8_t *", fr[i]), 34) == i) end
  f:next(buf)
  assert(u16(buf, 34) == 4, "frames() moved the position")
  f:reset()
  f:next(buf)
  assert(u16(buf, 34) == 1)
  -- surge show takes a flow
  local shown = require("surge.base.frames").frames(f, 3)
  assert(#shown == 3 and shown[1] == fr[1])
end

-- Many fields at once, 1-byte fields at odd positions (tos), masks (vlan
-- id and pcp), 6-byte MACs: every checksum valid over mbufs reused many times.
function T.checksums_stay_valid_many_fields()
  local t = surge.proto.stack{ L.eth{}, L.vlan{ id = 5, pcp = 3 }, L.ip4{ src = "1.2.3.4", tos = 9 },
                               L.udp{ sport = 1, dport = 2 }, size = 99, payload = "inc" }
  local ip, u = t.off.ip4, t.off.udp
  local f = flow{ template = t, fields = {
    ["eth.src"] = { range = { "02:00:00:00:00:fe", "02:00:00:00:01:10" } },
    ["vlan.id"] = { range = { 4090, 4095 } },
    ["vlan.pcp"] = { list = { 7, 0, 5 } },
    ["ip4.tos"] = { random = { 0, 255 }, seed = 3 },
    ["ip4.ttl"] = { list = { 1, 255, 64 } },
    ["ip4.id"] = { range = { 65530, 65535 } },
    ["ip4.src"] = { random = { "0.0.0.0", "255.255.255.255" }, seed = 9 },
    ["ip4.dst"] = { range = { "255.255.255.250", "255.255.255.255" } },
    ["udp.sport"] = { random = { 0, 65535 }, seed = 5 },
    ["udp.dport"] = 53,
  } }
  local seen = {}
  each_packet(f, t, 20000, function(p, k)
    assert(ip_ok(p, ip), "IPv4 checksum bad at packet " .. k)
    assert(udp_ok(p, ip, u, t.size), "UDP checksum bad at packet " .. k)
    local tci = u16(p, 14)
    assert(tci % 4096 >= 4090 and bit.band(tci, 0x1000) == 0, "vlan id / dei")
    seen[math.floor(tci / 8192)] = true
    assert(u16(p, u + 2) == 53 and p[ip + 9] == 17 and p[ip] == 0x45)
    local mac = u16(p, 6) * 2 ^ 32 + u32(p, 8)
    assert(mac >= 0x0200000000fe and mac <= 0x020000000110, "MAC")
    for i = 46, 98 do assert(p[i] == (i - 46) % 256, "payload changed") end
  end)
  assert(seen[7] and seen[0] and seen[5], "pcp values")
end

function T.udp_without_checksum_stays_without()
  local t = surge.proto.stack{ L.eth{}, L.ip4{}, L.udp{ checksum = false }, size = 60 }
  local f = flow{ template = t, fields = { ["udp.sport"] = { range = { 1, 100 } }, ["ip4.src"] = { range = { 1, 7 } } } }
  each_packet(f, t, 1000, function(p)
    assert(u16(p, 40) == 0, "checksum appeared")
    assert(ip_ok(p, 14))
  end)
end

-- Inner headers of a tunnel (ip4#2, udp#2, eth#2): the outer UDP checksum
-- covers the inner headers and their checksums (updates cascade outwards).
function T.inner_headers_and_cascaded_checksums()
  local t = surge.proto.stack{ L.eth{}, L.ip4{ src = "192.0.2.1" }, L.udp{ dport = 4789 }, L.eth{},
                               L.ip4{ src = "10.0.0.1" }, L.udp{ sport = 7 }, size = 128, payload = "random" }
  local oip, ou = t.layers[2].off, t.layers[3].off
  local iip, iu = t.layers[5].off, t.layers[6].off
  assert(udp_ok(ffi.cast("const uint8_t *", t.bytes), oip, ou, t.size))
  local f = flow{ template = t, fields = {
    ["ip4#2.src"] = { range = { "10.0.0.1", "10.0.3.232" } },
    ["udp#2.sport"] = { random = { 1, 65535 }, seed = 2 },
    ["eth#2.dst"] = { list = { "02:aa:00:00:00:01", "02:bb:00:00:00:02" } },
    ["ip4#2.ttl"] = { range = { 1, 3 } },
    ["udp.sport"] = { range = { 49152, 49155 } },
    ["ip4.src"] = { list = { "192.0.2.1", "198.51.100.1" } },
  } }
  assert(f:count() == math.huge)   -- a random field: no period
  each_packet(f, t, 5000, function(p, k)
    assert(ip_ok(p, oip), "outer IPv4 checksum at " .. k)
    assert(ip_ok(p, iip), "inner IPv4 checksum at " .. k)
    assert(udp_ok(p, iip, iu, t.size), "inner UDP checksum at " .. k)
    assert(udp_ok(p, oip, ou, t.size), "outer UDP checksum at " .. k)
  end)
  local ok, err = pcall(flow, { template = t, fields = { ["ip4#3.src"] = 1 } })
  assert(not ok and err:match("the template has 2 ip4 layers"), err)
end

-- Other protocols: IPv6 (low 32 bits of the addresses, flow label and
-- traffic class under masks), TCP, ICMP (no pseudo header), VXLAN (a
-- 24-bit VNI under the outer UDP checksum), MPLS (label and tc masks).
local function l4_ok(p, l4, len, pseudo) return sum(p, l4, len, pseudo) == 0xffff end
local function v6_pseudo(p, ip, proto, l4len)
  return sum(p, ip + 8, ip + 40) + proto + l4len
end
local function v4_pseudo(p, ip, proto, l4len)
  return u16(p, ip + 12) + u16(p, ip + 14) + u16(p, ip + 16) + u16(p, ip + 18) + proto + l4len
end

function T.other_protocols()
  -- IPv6 / UDP
  local t = surge.proto.stack{ L.eth{}, L.ip6{ src = "2001:db8::1", dst = "2001:db8:1::2" }, L.udp{},
                               size = 90, payload = "inc" }
  local ip, u = t.off.ip6, t.off.udp
  local f = flow{ template = t, fields = { ["ip6.src"] = { range = { "2001:db8::1", "2001:db8::1:0" }, step = 4099 },
                                           ["ip6.dst"] = { random = { "2001:db8:1::", "2001:db8:1::ffff:ffff" } },
                                           ["ip6.flow"] = { range = { 0xffff0, 0xfffff } },
                                           ["ip6.tclass"] = { list = { 0, 255, 46 } },
                                           ["ip6.hlim"] = { range = { 250, 255 } },
                                           ["udp.dport"] = { range = { 1, 3 } } } }
  each_packet(f, t, 3000, function(p, k)
    assert(l4_ok(p, u, 90, v6_pseudo(p, ip, 17, 90 - u)), "UDP/IPv6 checksum at " .. k)
    assert(p[ip] == 0x60 + math.floor(p[ip] % 16) and math.floor(p[ip] / 16) == 6, "version")
    assert(u16(p, ip + 8) == 0x2001 and u16(p, ip + 10) == 0x0db8, "high bits of src")
    local low = u32(p, ip + 20)
    assert(low >= 1 and low <= 0x10000 and (low - 1) % 4099 == 0, "low bits of src")
  end)
  local ok, err = pcall(flow, { template = t, fields = { ["ip6.src"] = "2001:db9::1" } })
  assert(not ok and err:find("only the low 32 bits vary; the template's address starts 2001:db8:0:0:0:0", 1, true), err)
  -- IPv4 / TCP
  t = surge.proto.stack{ L.eth{}, L.ip4{}, L.tcp{ flags = "S" }, size = 70, payload = "random" }
  ip, u = t.off.ip4, t.off.tcp
  f = flow{ template = t, fields = { ["tcp.seq"] = { random = { 0, 4294967295 }, seed = 8 },
                                     ["tcp.sport"] = { range = { 1, 999 } },
                                     ["tcp.window"] = { list = { 0, 65535 } },
                                     ["ip4.dst"] = { range = { "10.0.0.0", "10.0.0.99" } } } }
  each_packet(f, t, 3000, function(p, k)
    assert(ip_ok(p, ip), "IPv4 checksum at " .. k)
    assert(l4_ok(p, u, 70, v4_pseudo(p, ip, 6, 70 - u)), "TCP checksum at " .. k)
  end)
  -- IPv4 / ICMP: the addresses are not in the ICMP checksum
  t = surge.proto.stack{ L.eth{}, L.ip4{}, L.icmp{ type = 8 }, size = 64, payload = "inc" }
  ip, u = t.off.ip4, t.off.icmp
  f = flow{ template = t, fields = { ["icmp.id"] = { range = { 1, 77 } }, ["icmp.seq"] = { range = { 0, 65535 }, step = 997 },
                                     ["ip4.src"] = { range = { "10.0.0.0", "10.0.0.99" } } } }
  each_packet(f, t, 3000, function(p, k)
    assert(ip_ok(p, ip), "IPv4 checksum at " .. k)
    assert(l4_ok(p, u, 64, 0), "ICMP checksum at " .. k)
  end)
  -- VXLAN: VNI and inner headers under the outer UDP checksum
  t = surge.proto.stack{ L.eth{}, L.ip4{}, L.udp{ sport = 49152 }, L.vxlan{ vni = 42 }, L.eth{}, L.ip4{},
                         L.udp{}, size = 110, payload = "inc" }
  local oip, ou = t.layers[2].off, t.layers[3].off
  local iip, iu = t.layers[6].off, t.layers[7].off
  f = flow{ template = t, fields = { ["vxlan.vni"] = { range = { 16777200, 16777215 } },
                                     ["ip4#2.dst"] = { range = { "10.0.0.0", "10.0.0.9" } },
                                     ["udp#2.dport"] = { range = { 100, 104 } },
                                     ["udp.sport"] = { random = { 49152, 65535 } } } }
  each_packet(f, t, 3000, function(p, k)
    assert(ip_ok(p, oip) and ip_ok(p, iip), "IPv4 checksums at " .. k)
    assert(udp_ok(p, iip, iu, 110), "inner UDP checksum at " .. k)
    assert(udp_ok(p, oip, ou, 110), "outer UDP checksum at " .. k)
    local vni = math.floor(u32(p, t.off.vxlan + 4) / 256)
    assert(vni >= 16777200 and p[t.off.vxlan + 7] == 0 and p[t.off.vxlan] == 0x08, "vni and flags")
  end)
  -- MPLS: label and tc share a word with S and TTL
  t = surge.proto.stack{ L.eth{}, L.mpls{ label = 5 }, L.mpls{ label = 6, tc = 1 }, L.ip4{}, L.udp{}, size = 80 }
  local m1, m2 = t.layers[2].off, t.layers[3].off
  f = flow{ template = t, fields = { ["mpls.label"] = { range = { 1048570, 1048575 } }, ["mpls#2.tc"] = { list = { 7, 0 } },
                                     ["mpls#2.label"] = 99 } }
  each_packet(f, t, 100, function(p, k)
    local a, b = u32(p, m1), u32(p, m2)
    assert(math.floor(a / 4096) == 1048570 + k % 6, "outer label")
    assert(a % 512 == 64 and bit.band(a, 0x100) == 0, "outer S and TTL kept")
    assert(math.floor(b / 4096) == 99 and math.floor(b / 512) % 8 == (math.floor(k / 6) % 2 == 0 and 7 or 0), "tc")
    assert(bit.band(b, 0x100) ~= 0 and b % 256 == 64, "inner S and TTL kept")
    assert(ip_ok(p, t.off.ip4) and udp_ok(p, t.off.ip4, t.off.udp, 80))
  end)
  -- ICMPv6: the IPv6 pseudo header is in its checksum
  t = surge.proto.stack{ L.eth{}, L.ip6{}, L.icmp6{ type = 128 }, size = 70, payload = "inc" }
  ip, u = t.off.ip6, t.off.icmp6
  f = flow{ template = t, fields = { ["ip6.dst"] = { range = { 1, 50 } }, ["icmp6.seq"] = { range = { 1, 7 } } } }
  each_packet(f, t, 700, function(p, k)
    assert(l4_ok(p, u, 70, v6_pseudo(p, ip, 58, 70 - u)), "ICMPv6 checksum at " .. k)
    assert(u32(p, ip + 36) == 1 + k % 50)
  end)
  -- QinQ (the vlan fields), ARP (4- and 6-byte fields), GRE key
  t = surge.proto.stack{ L.eth{}, L.qinq{ id = 10 }, L.vlan{ id = 20 }, L.ip4{}, L.gre{ key = 1 }, L.ip4{}, L.udp{},
                         size = 100 }
  f = flow{ template = t, fields = { ["qinq.id"] = { range = { 1, 4 } }, ["vlan.id"] = { range = { 100, 102 } },
                                     ["gre.key"] = { range = { 4294967290, 4294967295 } }, ["ip4#2.src"] = { range = { 1, 5 } } } }
  assert(f:count() == 4 * 3 * 6 * 5)
  each_packet(f, t, 360, function(p, k)
    assert(u16(p, 14) % 4096 == 1 + k % 4 and u16(p, 18) % 4096 == 100 + math.floor(k / 4) % 3, "tags")
    assert(u16(p, 12) == 0x88a8 and u16(p, 16) == 0x8100, "TPIDs kept")
    assert(u32(p, t.off.gre + 4) == 4294967290 + math.floor(k / 12) % 6, "gre key")
    local iip = t.layers[6].off
    assert(ip_ok(p, t.off.ip4) and ip_ok(p, iip) and udp_ok(p, iip, t.off.udp, 100), "checksums at " .. k)
  end)
  t = surge.proto.arp{ op = "request", tpa = "10.0.0.9" }
  f = flow{ template = t, fields = { ["arp.spa"] = { range = { "10.0.0.1", "10.0.0.3" } },
                                     ["arp.sha"] = { list = { "02:00:00:00:00:0a", "02:00:00:00:00:0b" } } } }
  local fr = f:frames(6)
  for i = 1, 6 do
    local p = ffi.cast("const uint8_t *", fr[i])
    -- a map goes in frame order: sha (offset 22) varies before spa (28)
    assert(p[27] == 0x0a + (i - 1) % 2 and u32(p, 28) == 0x0a000001 + math.floor((i - 1) / 2) % 3, "arp " .. i)
  end
end

-- The compiled loop must be a LuaJIT trace: no NYI, no allocation.
function T.apply_loop_compiles()
  local t = udp_t()
  local f = flow{ template = t, fields = { ["ip4.src"] = { range = { "10.0.0.0", "10.0.255.255" } },
                                           ["udp.sport"] = { range = { 1000, 1015 } },
                                           ["ip4.ttl"] = { list = { 1, 2 } },
                                           ["udp.dport"] = { random = { 1, 9 } } } }
  local started, stopped, aborted = {}, {}, {}
  local function on_trace(what, tr, func, pc, otr, oex)
    if what == "start" then
      local info = jutil.funcinfo(func, pc)
      started[tr] = info.source == "=surge.flow" and info.currentline or false
    elseif what == "stop" then
      if started[tr] then stopped[#stopped + 1] = started[tr] end
    elseif what == "abort" and started[tr] then
      aborted[#aborted + 1] = tostring(jutil.funcinfo(func, pc).currentline) .. ": " .. tostring(oex)
    end
  end
  local burst = pool_for(t):burst(32)
  jit.flush()
  jit.attach(on_trace, "trace")
  for _ = 1, 3000 do
    burst:alloc()
    f:apply(burst)
  end
  jit.attach(on_trace)
  burst:free()
  assert(#stopped > 0, "no trace completed in the flow's code; aborts: " .. table.concat(aborted, "; "))
end

local function fails(def, pattern)
  local ok, err = pcall(function() local f = flow(def); return f end)
  assert(not ok, "expected an error for " .. pattern)
  assert(err:find(pattern, 1, true), ("'%s' does not say '%s'"):format(err, pattern))
  assert(err:match("test_flow.lua:%d+: surge.flow: "), "error must name the caller's line: " .. err)
  assert(not err:find("\n"), "one line: " .. err)
end

function T.errors_name_the_field_and_line()
  local t = udp_t()
  local function d(fields, extra)
    local def = { template = t, fields = fields }
    for k, v in pairs(extra or {}) do def[k] = v end
    return def
  end
  fails(d{ ["ip6.src"] = 1 }, "'ip6.src': the template has no ip6 layer (it has eth, ip4, udp)")
  fails(d{ ["udp.colour"] = 1 }, "'udp.colour': udp has no field 'colour' (dport, len, sport)")
  fails(d{ ["udp"] = 1 }, "a field is LAYER.FIELD")
  fails(d{ ["udp.sport"] = { range = { 1 } } }, "udp.sport: range needs { from, to }")
  fails(d{ ["udp.sport"] = { range = 5 } }, "udp.sport: range needs { from, to }")
  fails(d{ ["udp.sport"] = { range = { 1, 10 }, step = 0 } }, "udp.sport: step 0 never moves")
  fails(d{ ["udp.sport"] = { range = { 1, 10 }, step = -1 } }, "udp.sport: range from 1 to 10 with step -1 is empty")
  fails(d{ ["udp.sport"] = { list = {} } }, "udp.sport: list is empty")
  fails(d{ ["udp.sport"] = { seq = {} } }, "udp.sport: seq is empty")
  fails(d{ ["udp.sport"] = 70000 }, "udp.sport = 70000 outside 0..65535")
  fails(d{ ["udp.sport"] = { range = { 1, 65536 } } }, "udp.sport = 65536 outside 0..65535")
  fails(d{ ["ip4.ttl"] = { list = { 1, 300 } } }, "ip4.ttl = 300 outside 0..255")
  fails(d{ ["ip4.src"] = "10.0.0.300" }, "ip4.src = '10.0.0.300': not an IPv4 address")
  fails(d{ ["udp.sport"] = "10.0.0.1" }, "udp.sport = '10.0.0.1': not an IPv4 address for a 2-byte field")
  fails(d{ ["udp.sport"] = "http" }, "udp.sport = 'http' is not a number")
  fails(d{ ["udp.sport"] = { random = { 10, 1 } } }, "udp.sport: random = { 10, 1 }: low is above high")
  fails(d{ ["udp.sport"] = { range = { 1, 2 }, list = { 3 } } }, "udp.sport: give one of range, random, list or seq (got range, list)")
  fails(d{ ["udp.sport"] = { ranges = { 1, 2 } } }, "udp.sport: unknown key 'ranges'")
  fails(d{ ["udp.sport"] = { list = { 1 }, step = 2 } }, "udp.sport: step goes with range")
end

function T.errors_definition()
  local t = udp_t()
  fails({ template = t, fields = { ["udp.sport"] = 1 }, combine = "cross" }, "combine = 'cross': product, zip or cycle")
  fails({ template = t }, "fields = { [\"ip4.src\"] = SPEC, ... } missing")
  fails({ template = t, fields = {} }, "fields is empty")
  fails({ fields = { ["udp.sport"] = 1 } }, "template = T missing")
  fails({ template = "bytes", fields = { ["udp.sport"] = 1 } }, "template must come from surge.proto")
  fails({ template = t, fields = { ["udp.sport"] = 1 }, size = 3 }, "unknown key 'size'")
  fails({ template = t, fields = { { "udp.sport", 1 }, { "udp.sport", 2 } } }, "field udp.sport given twice")
end

return T
