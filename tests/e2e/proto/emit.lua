-- emit.lua - sends a few frames of one protocol stack, for tshark to check
-- (tests/e2e/test_proto_tshark.sh).
--
--   surge run --no-huge --vdev net_pcap0,tx_pcap=x.pcap tests/e2e/proto/emit.lua --stack eth/ip6/udp
--
-- Packet i (0-based) is the template with one field changed by a hot-loop
-- setter (UDP source port 40000 + i, TCP seq 1000000 + 1000 i, VNI 42 + i,
-- ...), so checksums must survive the incremental updates. The values here
-- are repeated, written out, in the test's expectations.
local surge = require("surge")
local ffi = require("ffi")

local P = surge.proto
local L = P.layer
local cs = P.checksum

local MAC_A, MAC_B = "02:00:00:00:00:0a", "02:00:00:00:00:0b"
local IN_A, IN_B = "02:00:00:00:01:0a", "02:00:00:00:01:0b"
local function eth() return L.eth{ src = MAC_A, dst = MAC_B } end
local function ip4() return L.ip4{ src = "192.0.2.1", dst = "198.51.100.2", ttl = 33, id = 7 } end
local function ip6()
  return L.ip6{ src = "2001:db8::a", dst = "2001:db8:0:1::2", hlim = 33, flow = 0x12345, tclass = 0x28 }
end
local function inner_ip4() return L.ip4{ src = "10.1.0.1", dst = "10.1.0.2", ttl = 9 } end
local function udp() return L.udp{ sport = 40000, dport = 50000 } end
local function tcp() return L.tcp{ sport = 1234, dport = 80, seq = 1000000, ack = 777, flags = "SA", window = 8192 } end

-- name -> { layers = function() return a stack spec end, vary = function(p, i, t) end }
local stacks = {
  ["eth/ip4/udp"] = {
    layers = function() return { eth(), ip4(), udp(), size = 100, payload = "inc" } end,
    vary = function(p, i, t) P.udp.set_sport(p + t.off.udp, 40000 + i) end },
  ["eth/vlan/ip4/udp"] = {
    layers = function() return { eth(), L.vlan{ id = 100, pcp = 3 }, ip4(), udp(), size = 100, payload = "inc" } end,
    vary = function(p, i, t) P.vlan.set_id(p + t.off.vlan, 100 + i); P.udp.set_dport(p + t.off.udp, 50000 + i) end },
  ["eth/qinq/vlan/ip4/tcp"] = {
    layers = function()
      return { eth(), L.qinq{ id = 10, pcp = 5 }, L.vlan{ id = 100, pcp = 3 }, ip4(), tcp(), size = 100,
               payload = "inc" }
    end,
    vary = function(p, i, t) P.tcp.set_seq(p + t.off.tcp, 1000000 + 1000 * i) end },
  ["eth/ip6/udp"] = {
    layers = function() return { eth(), ip6(), udp(), size = 100, payload = "inc" } end,
    vary = function(p, i, t)
      -- the low 32 bits of the destination, then the UDP checksum (pseudo header)
      local u = p + t.off.udp
      local oh, ol, nh, nl = P.ip6.set_dst(p + t.off.ip6, 2 + i)
      cs.update16(u + 6, oh, nh, true)
      cs.update16(u + 6, ol, nl, true)
      P.udp.set_sport(u, 40000 + i)
    end },
  ["eth/vlan/ip6/tcp"] = {
    layers = function() return { eth(), L.vlan{ id = 200, pcp = 1 }, ip6(), tcp(), size = 120, payload = "inc" } end,
    vary = function(p, i, t) P.tcp.set_seq(p + t.off.tcp, 1000000 + 1000 * i); P.tcp.set_sport(p + t.off.tcp, 1234 + i) end },
  -- a flat TCP SYN with no size: 54 bytes of packet, 6 of Ethernet padding
  ["tcp-syn"] = {
    frame = function()
      return P.tcp{ src_mac = MAC_A, dst_mac = MAC_B, src = "192.0.2.1", dst = "198.51.100.2", sport = 1234,
                    dport = 80, seq = 1000000, flags = "S" }
    end,
    vary = function(p, i, t) P.tcp.set_seq(p + t.off.tcp, 1000000 + 1000 * i) end },
  ["eth/ip4/icmp"] = {
    layers = function() return { eth(), ip4(), L.icmp{ type = 8, code = 0, id = 0x1234, seq = 1 }, size = 98, payload = "inc" } end,
    vary = function(p, i, t) P.icmp.set_seq(p + t.off.icmp, 1 + i) end },
  ["eth/ip6/icmp6"] = {
    layers = function() return { eth(), ip6(), L.icmp6{ type = 128, code = 0, id = 77, seq = 1 }, size = 118, payload = "inc" } end,
    vary = function(p, i, t) P.icmp6.set_seq(p + t.off.icmp6, 1 + i) end },
  ["eth/arp"] = {
    layers = function()
      return { L.eth{ src = MAC_A, dst = "ff:ff:ff:ff:ff:ff" },
               L.arp{ op = "request", sha = MAC_A, spa = "192.0.2.1", tpa = "192.0.2.10" } }
    end,
    vary = function(p, i, t) P.arp.set_tpa(p + t.off.arp, 0xc000020a + i) end },
  ["eth/ip4/udp/vxlan/eth/ip4/udp"] = {
    layers = function()
      return { eth(), ip4(), L.udp{ sport = 49152 }, L.vxlan{ vni = 42 }, L.eth{ src = IN_A, dst = IN_B },
               inner_ip4(), L.udp{ sport = 40001, dport = 40002 }, size = 128, payload = "inc" }
    end,
    vary = function(p, i, t) P.vxlan.set_vni(p + t.off.vxlan, 42 + i) end },
  ["eth/ip4/gre/ip4/udp"] = {
    layers = function() return { eth(), ip4(), L.gre{}, inner_ip4(), L.udp{ sport = 40001, dport = 40002 }, size = 100, payload = "inc" } end,
    vary = function(p, i, t) P.udp.set_sport(p + t.off.udp, 40001 + i) end },   -- the inner udp (the only one)
  ["eth/ip4/gre/eth/ip6/udp"] = {
    layers = function()
      return { eth(), ip4(), L.gre{ key = 7 }, L.eth{ src = IN_A, dst = IN_B }, ip6(),
               L.udp{ sport = 40001, dport = 40002 }, size = 140, payload = "inc" }
    end,
    vary = function(p, i, t) P.gre.set_key(p + t.off.gre, 7 + i) end },
  ["eth/mpls/mpls/ip4/udp"] = {
    layers = function()
      return { eth(), L.mpls{ label = 100, tc = 3 }, L.mpls{ label = 200, tc = 5, ttl = 32 }, inner_ip4(),
               L.udp{ sport = 40001, dport = 40002 }, size = 100, payload = "inc" }
    end,
    vary = function(p, i, t) P.mpls.set_label(p + t.off.mpls, 100 + i) end },
}

function configure(p)
  local names = {}
  for k in pairs(stacks) do names[#names + 1] = k end
  table.sort(names)
  p:description("Sends --count frames of one protocol stack: " .. table.concat(names, ", "))
  p:option("--stack", "protocol stack (layer names joined by /)", "eth/ip4/udp")
  p:option("--count", "frames to send", 4, "integer")
  p:flag("--corrupt", "flip the last byte of every frame (checksums become bad)")
end

local function template(args)
  local s = stacks[args.stack]
  if not s then error(("--stack %s: no such stack (see --help)"):format(args.stack), 0) end
  return s, s.frame and s.frame() or P.stack(s.layers())
end

-- The frames as strings: the template with packet i's change applied.
local function frames(args)
  local s, t = template(args)
  local buf, out = ffi.new("uint8_t[?]", t.size), {}
  for i = 0, args.count - 1 do
    ffi.copy(buf, t.bytes, t.size)
    s.vary(buf, i, t)
    if args.corrupt then buf[t.size - 1] = 255 - buf[t.size - 1] end
    out[#out + 1] = ffi.string(buf, t.size)
  end
  return out
end

function master(args)
  local s, t = template(args)
  local port = surge.port(0, { txq = 1, rxq = 1 })
  local pool = surge.pool{ template = t, size = 255, cache = 0 }
  local b = pool:burst(args.count)
  local n = b:alloc(args.count)
  for i = 0, n - 1 do
    s.vary(b.data[i], i, t)
    if args.corrupt then b.data[i][t.size - 1] = 255 - b.data[i][t.size - 1] end
  end
  local sent = port:txq(0):send(b)
  print(("emit: %s: %d packets"):format(args.stack, sent))
  return sent == args.count and 0 or 1
end

function show(args) return frames(args) end
