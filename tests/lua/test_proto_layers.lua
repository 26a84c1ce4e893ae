-- Protocol layers arp, ip6, tcp, icmp, icmp6, vxlan, gre, mpls: bytes at
-- the offsets the standards give, checksums verified by an independent sum
-- (plain Lua over the frame string, not surge.proto.checksum), setters that
-- keep checksums valid, one-line errors naming the field and this file's
-- line, decode of every stack, the IPv6 address parser.
local ffi = require("ffi")
local bit = require("bit")
local surge = require("surge")

local P = surge.proto
local L = P.layer
local T = {}

-- Ones' complement sum of bytes i..j (1-based, inclusive) of string s.
local function osum(s, i, j, acc)
  local x = acc or 0
  for k = i, j, 2 do
    x = x + s:byte(k) * 256 + (k < j and s:byte(k + 1) or 0)
  end
  while x > 0xffff do x = x % 65536 + math.floor(x / 65536) end
  return x
end
local function be16(s, off) return s:byte(off + 1) * 256 + s:byte(off + 2) end   -- off 0-based
local function be32(s, off) return be16(s, off) * 65536 + be16(s, off + 2) end
local function hex(s) return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) end
local function unhex(h) return (h:gsub("%s", ""):gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end)) end

-- Pseudo header sums from the frame's own IP header (ipoff 0-based).
local function pseudo4(s, ipoff, proto, len) return osum(s, ipoff + 13, ipoff + 20) + proto + len end
local function pseudo6(s, ipoff, proto, len) return osum(s, ipoff + 9, ipoff + 40) + proto + len end
-- A checksum is right when the sum over what it covers (itself included) is 0xffff.
local function covers(s, off, len, acc) return osum(s, off + 1, off + len, acc) == 0xffff end
local function ip4_ok(s, ipoff) return covers(s, ipoff, 20) end
local function l4_ok(s, ipoff, l4off, proto, v6)
  -- the L4 length from the IP header, not the frame: Ethernet padding after
  -- the packet is not covered
  local len = v6 and (be16(s, ipoff + 4) - (l4off - ipoff - 40)) or (be16(s, ipoff + 2) - (l4off - ipoff))
  local acc = v6 and pseudo6(s, ipoff, proto, len) or pseudo4(s, ipoff, proto, len)
  return covers(s, l4off, len, acc)
end

local function str(buf, n) return ffi.string(buf, n) end
local function buffer(t)
  local buf = ffi.new("uint8_t[?]", t.size)
  ffi.copy(buf, t.bytes, t.size)
  return buf
end

-- The error of fn: one line naming this file's line, its message (after
-- "file:line: ") matching pattern. Stack-time errors too name the caller.
local function fails(fn, pattern)
  local ok, err = pcall(fn)
  assert(not ok, "expected an error matching " .. pattern)
  err = tostring(err)
  local body = err:gsub("^[^\n]-%.lua:%d+: ", "")
  assert(body:match(pattern), ("'%s' !~ '%s'"):format(err, pattern))
  assert(err:match("test_proto_layers%.lua:%d+: "), "error must name the caller's line: " .. err)
  assert(not err:find("\n"), "error must be one line: " .. err)
end

---------------------------------------------------------------------------
-- IPv6 addresses

local ip6 = P.ip6

function T.ip6_parser_accepts_the_usual_forms()
  local cases = {
    { "::", "00000000000000000000000000000000", "::" },
    { "::1", "00000000000000000000000000000001", "::1" },
    { "1::", "00010000000000000000000000000000", "1::" },
    { "2001:db8::1", "20010db8000000000000000000000001", "2001:db8::1" },
    { "2001:0db8:0000:0000:0000:ff00:0042:8329", "20010db8000000000000ff0000428329", "2001:db8::ff00:42:8329" },
    { "FE80::ABCD:1", "fe80" .. ("0000"):rep(5) .. "abcd0001", "fe80::abcd:1" },
    { "1:2:3:4:5:6:7:8", "00010002000300040005000600070008", "1:2:3:4:5:6:7:8" },
    { "1:2:3:4:5:6:7::", "00010002000300040005000600070000", "1:2:3:4:5:6:7:0" },
    { "::2:3:4:5:6:7:8", "00000002000300040005000600070008", "0:2:3:4:5:6:7:8" },
    { "1:0:0:2:0:0:0:3", "00010000000000020000000000000003", "1:0:0:2::3" },
    { "1:0:0:2:0:0:3:4", "00010000000000020000000000030004", "1::2:0:0:3:4" },
    { "::ffff:192.0.2.1", "00000000000000000000ffffc0000201", "::ffff:c000:201" },
    { "64:ff9b::10.0.0.1", "0064ff9b0000000000000000 0a000001", "64:ff9b::a00:1" },
  }
  for _, c in ipairs(cases) do
    local want = c[2]:gsub(" ", "")
    local b = ip6.parse(c[1])
    assert(b and #b == 16, "did not parse " .. c[1])
    assert(hex(b) == want, ("%s -> %s, want %s"):format(c[1], hex(b), want))
    assert(ip6.addr_text(b) == c[3], ("%s -> text %s, want %s"):format(c[1], ip6.addr_text(b), c[3]))
    assert(ip6.parse(ip6.addr_text(b)) == b, "round trip of " .. c[1])
  end
end

function T.ip6_text_round_trips_random_addresses()
  math.randomseed(11)
  for _ = 1, 3000 do
    local g = {}
    for k = 1, 8 do g[k] = math.random() < 0.4 and 0 or math.random(0, 65535) end
    local b = {}
    for k = 1, 8 do b[k] = string.char(math.floor(g[k] / 256), g[k] % 256) end
    b = table.concat(b)
    local text = ip6.addr_text(b)
    assert(ip6.parse(text) == b, ("%s does not parse back to %s"):format(text, hex(b)))
    assert(not text:find(":::", 1, true) and select(2, text:gsub("::", "")) <= 1, "one :: at most: " .. text)
    -- the full, uncompressed form parses to the same bytes
    local full = {}
    for k = 1, 8 do full[k] = ("%04x"):format(g[k]) end
    assert(ip6.parse(table.concat(full, ":")) == b)
  end
end

function T.ip6_parser_rejects_bad_text()
  for _, s in ipairs({ "", ":", ":::", "1::2::3", "12345::", "g::", ":1::", "1::2:", "1:2:3:4:5:6:7:8:9",
                       "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8", "1.2.3.4", "::1.2.3.256",
                       "::1%eth0", " ::1", "::1 ", "2001:zz::1", "1:2:3:4:5:6:7:1.2.3.4", "::-1", "0x1::" }) do
    assert(ip6.parse(s) == nil, ("'%s' must not parse"):format(s))
  end
  assert(ip6.parse(42) == nil and ip6.parse(nil) == nil)
  fails(function() local t = L.ip6{ dst = "2001:zz::1" }; return t end,
    "surge%.proto%.ip6: dst: '2001:zz::1' is not an IPv6 address")
  fails(function() local t = L.ip6{ src = "1::2::3" }; return t end,
    "surge%.proto%.ip6: src: '1::2::3' is not an IPv6 address")
end

---------------------------------------------------------------------------
-- IPv6 header

function T.ip6_header_bytes_and_udp_checksum()
  local t = P.stack{ L.eth{}, L.ip6{ src = "2001:db8::1", dst = "fe80::2", hlim = 7, tclass = 0xab, flow = 0x12345 },
                     L.udp{ sport = 4660, dport = 22136 }, size = 100, payload = "inc" }
  local s = t.bytes
  assert(t.l3 == 14 and t.l4 == 54 and t.off.ip6 == 14)
  assert(be16(s, 12) == 0x86dd, "ethertype IPv6")
  assert(hex(s:sub(15, 18)) == "6ab12345", "version 6, traffic class 0xab, flow label 0x12345: " .. hex(s:sub(15, 18)))
  assert(be16(s, 18) == 100 - 54, "payload length")
  assert(s:byte(21) == 17 and s:byte(22) == 7, "next header UDP, hop limit 7")
  assert(hex(s:sub(23, 38)) == "20010db8000000000000000000000001", "source")
  assert(hex(s:sub(39, 54)) == "fe800000000000000000000000000002", "destination")
  assert(be16(s, 54) == 4660 and be16(s, 56) == 22136 and be16(s, 58) == 46, "UDP ports and length")
  assert(be16(s, 60) ~= 0, "UDP over IPv6 always has a checksum")
  assert(l4_ok(s, 14, 54, 17, true), "UDP checksum with the IPv6 pseudo header")
end

function T.ip6_defaults_and_flat_builders()
  local t = P.udp{ src = "2001:db8::1", dst = "2001:db8::2" }
  local s = t.bytes
  assert(t.size == 62 and t.l3 == 14 and t.l4 == 54, "14 + 40 + 8 bytes: " .. t.size)
  assert(hex(s:sub(15, 18)) == "60000000" and s:byte(22) == 64, "tclass 0, flow 0, hlim 64")
  assert(l4_ok(s, 14, 54, 17, true))
  -- flat fields reach the IPv6 header: ttl/hlim, tos/tclass, flow
  t = P.udp{ src = "::1", dst = "::2", ttl = 9, tos = 0x10, flow = 5, vlan = 3 }
  s = t.bytes
  assert(be16(s, 12) == 0x8100 and be16(s, 16) == 0x86dd and t.l3 == 18)
  assert(hex(s:sub(19, 22)) == "61000005" and s:byte(26) == 9)
  assert(l4_ok(s, 18, 58, 17, true))
  t = P.tcp{ src = "2001:db8::a", dst = "2001:db8::b", hlim = 3, tclass = 0x20 }
  assert(t.bytes:byte(22) == 3 and t.bytes:byte(21) == 6 and l4_ok(t.bytes, 14, 54, 6, true))
end

-- A UDP checksum that computes to 0 goes out as 0xffff over IPv6 (0 means
-- "no checksum", which IPv6 forbids).
function T.udp_over_ip6_never_sends_a_zero_checksum()
  local size, hdr = 80, 62
  local body = {}
  for k = 1, size - hdr do body[k] = string.char((k * 37) % 256) end
  local function build(b)
    local t = P.stack{ L.eth{}, L.ip6{}, L.udp{ sport = 1, dport = 2 }, size = size, payload = table.concat(b) }
    return t.bytes
  end
  local s = build(body)
  -- sum over UDP (checksum field as 0) and pseudo header; move the last
  -- payload word so that this sum becomes 0xffff: the checksum would be 0
  local zeroed = s:sub(1, 60) .. "\0\0" .. s:sub(63)
  local sum = osum(zeroed, 55, size, pseudo6(s, 14, 17, size - 54))
  local w = be16(s, size - 2)
  local need = 0xffff - sum                       -- ones' complement: add (0xffff - sum)
  local nw = w + need
  if nw > 0xffff then nw = nw - 0xffff end
  body[#body - 1], body[#body] = string.char(math.floor(nw / 256)), string.char(nw % 256)
  s = build(body)
  zeroed = s:sub(1, 60) .. "\0\0" .. s:sub(63)
  assert(osum(zeroed, 55, size, pseudo6(s, 14, 17, size - 54)) == 0xffff, "the crafted payload sums to 0xffff")
  assert(be16(s, 60) == 0xffff, ("checksum 0 must be sent as 0xffff, got 0x%04x"):format(be16(s, 60)))
  assert(l4_ok(s, 14, 54, 17, true))
  assert(P.decode(s):match("udp 1 > 2 len 26 csum ok"), P.decode(s))
end

function T.ip6_setters_keep_the_l4_checksum_valid()
  local cs = P.checksum
  local t = P.udp{ src = "2001:db8::1", dst = "2001:db8::2", size = 90, payload = "random" }
  local buf = buffer(t)
  math.randomseed(3)
  for _ = 1, 1000 do
    local a, b = math.random(0, 2^32 - 1), math.random(0, 2^32 - 1)
    local oh, ol, nh, nl = ip6.set_src(buf + 14, a)
    cs.update16(buf + 60, oh, nh, true); cs.update16(buf + 60, ol, nl, true)
    oh, ol, nh, nl = ip6.set_dst(buf + 14, b)
    cs.update16(buf + 60, oh, nh, true); cs.update16(buf + 60, ol, nl, true)
    assert(ip6.src(buf + 14) == a and ip6.dst(buf + 14) == b)
    local s = str(buf, 90)
    assert(be32(s, 34) == a and be32(s, 50) == b, "low 32 bits at bytes 20 and 36 of the header")
    assert(l4_ok(s, 14, 54, 17, true), "UDP checksum after src/dst " .. a .. " " .. b)
  end
  ip6.set_hlim(buf + 14, 200)
  ip6.set_flow(buf + 14, 0xfedcb)
  local s = str(buf, 90)
  assert(s:byte(22) == 200 and hex(s:sub(15, 18)) == "600fedcb")
end

---------------------------------------------------------------------------
-- TCP

local tcp = P.tcp

function T.tcp_flags()
  local f = tcp.flags
  local want = { S = 0x02, SA = 0x12, AS = 0x12, A = 0x10, FA = 0x11, R = 0x04, P = 0x08, PA = 0x18,
                 RA = 0x14, FSRPAUEC = 0xff, sa = 0x12, [""] = 0 }
  for k, v in pairs(want) do assert(f(k, "x") == v, k) end
  assert(f(0x29, "x") == 0x29)
  assert(tcp.flags_text(0x12) == "SA" and tcp.flags_text(0x11) == "FA" and tcp.flags_text(0x18) == "PA"
         and tcp.flags_text(0) == ".")
end

function T.tcp_header_bytes_and_checksum_over_ip4()
  local t = tcp{ src = "192.168.1.2", dst = "10.20.30.40", sport = 4660, dport = 80, seq = 0x01020304,
                 ack = 0xa0b0c0d0, flags = "SA", window = 1000, urg = 7, size = 80, payload = "inc" }
  local s = t.bytes
  assert(t.l3 == 14 and t.l4 == 34 and #s == 80)
  assert(be16(s, 12) == 0x0800 and s:byte(24) == 6, "IPv4, protocol 6")
  assert(be16(s, 16) == 66, "IPv4 total length")
  assert(be16(s, 34) == 4660 and be16(s, 36) == 80, "ports")
  assert(hex(s:sub(39, 46)) == "01020304a0b0c0d0", "seq and ack")
  assert(s:byte(47) == 0x50 and s:byte(48) == 0x12, "data offset 5 words, flags SYN+ACK")
  assert(be16(s, 48) == 1000 and be16(s, 52) == 7, "window, urgent pointer")
  assert(ip4_ok(s, 14), "IPv4 checksum")
  assert(l4_ok(s, 14, 34, 6), "TCP checksum with the IPv4 pseudo header")
end

function T.tcp_defaults_and_ip6()
  local t = tcp{}
  local s = t.bytes
  assert(t.size == 60 and be16(s, 34) == 1024 and be16(s, 36) == 80 and s:byte(48) == 0x02 and be16(s, 48) == 65535)
  assert(be32(s, 38) == 0 and be32(s, 42) == 0 and l4_ok(s, 14, 34, 6))
  -- a SYN with no size or payload carries no data: IP length 40, 6 bytes of
  -- zero Ethernet padding after it; asked for, data is there
  assert(be16(s, 16) == 40 and t.trailer == 6 and s:sub(55, 60) == ("\0"):rep(6), "SYN: no data, padding")
  local d = tcp{ size = 60 }
  assert(be16(d.bytes, 16) == 46 and d.trailer == 0 and l4_ok(d.bytes, 14, 34, 6), "size given: 6 bytes of data")
  d = tcp{ payload = "hello" }
  assert(be16(d.bytes, 16) == 46 and d.trailer == 0, "payload given: data")
  assert(require("surge.proto.decode").decode(s):match("tcp .* len 0 csum ok | padding 6 bytes$"))
  t = P.stack{ L.eth{}, L.vlan{ id = 9 }, L.ip6{}, L.tcp{ flags = "FA", seq = 2^32 - 1 }, size = 100, payload = "random" }
  s = t.bytes
  assert(t.l4 == 58 and s:byte(25) == 6 and s:byte(72) == 0x11 and be32(s, 62) == 2^32 - 1)
  assert(l4_ok(s, 18, 58, 6, true), "TCP checksum with the IPv6 pseudo header")
  -- checksum = false leaves 0
  t = P.stack{ L.eth{}, L.ip4{}, L.tcp{ checksum = false } }
  assert(be16(t.bytes, 50) == 0)
end

function T.tcp_setters_keep_the_checksum_valid()
  for _, v6 in ipairs({ false, true }) do
    local t = v6 and tcp{ src = "2001:db8::1", dst = "2001:db8::2", size = 99, payload = "random" }
                  or tcp{ size = 99, payload = "random" }
    local buf, l4 = buffer(t), t.l4
    local p = buf + l4
    math.randomseed(5)
    for _ = 1, 1000 do
      local a, b, c, d, w = math.random(0, 65535), math.random(0, 65535), math.random(0, 2^32 - 1),
                            math.random(0, 2^32 - 1), math.random(0, 65535)
      tcp.set_sport(p, a); tcp.set_dport(p, b); tcp.set_seq(p, c); tcp.set_ack(p, d); tcp.set_window(p, w)
      tcp.set_flags(p, math.random(0, 255))
      assert(tcp.sport(p) == a and tcp.dport(p) == b and tcp.seq(p) == c and tcp.ack(p) == d)
      assert(l4_ok(str(buf, t.size), t.l3, l4, 6, v6), ("TCP checksum after %d %d %d %d"):format(a, b, c, d))
    end
  end
end

---------------------------------------------------------------------------
-- ICMP, ICMPv6

local icmp, icmp6 = P.icmp, P.icmp6

function T.icmp_bytes_and_checksum()
  local t = icmp{ src = "10.0.0.1", dst = "10.0.0.9", id = 0x1234, seq = 7, size = 98, payload = "inc" }
  local s = t.bytes
  assert(t.l4 == 34 and s:byte(24) == 1, "IPv4 protocol 1")
  assert(s:byte(35) == 8 and s:byte(36) == 0, "type 8 (echo request), code 0")
  assert(be16(s, 38) == 0x1234 and be16(s, 40) == 7, "identifier and sequence number")
  assert(be16(s, 18) == 0, "the flat builder's `id` is ICMP's: the IPv4 id stays 0")
  assert(ip4_ok(s, 14) and covers(s, 34, 98 - 34), "ICMP checksum over header and payload")
  t = icmp{ type = 0, code = 0, ip_id = 99, id = 1 }
  assert(t.bytes:byte(35) == 0 and be16(t.bytes, 18) == 99 and be16(t.bytes, 38) == 1, "ip_id is the IPv4 id")
  t = P.stack{ L.eth{}, L.ip4{}, L.icmp{ type = 3, code = 1 }, size = 70 }
  assert(t.bytes:byte(35) == 3 and t.bytes:byte(36) == 1 and covers(t.bytes, 34, 36))
end

function T.icmp6_bytes_and_checksum()
  local t = icmp6{ id = 77, seq = 3, size = 118, payload = "inc" }
  local s = t.bytes
  assert(be16(s, 12) == 0x86dd and s:byte(21) == 58, "IPv6, next header 58")
  assert(hex(s:sub(23, 54)) == "20010db800000000000000000000000120010db8000000000000000000000002",
    "default addresses 2001:db8::1 > 2001:db8::2")
  assert(s:byte(55) == 128 and s:byte(56) == 0 and be16(s, 58) == 77 and be16(s, 60) == 3)
  assert(l4_ok(s, 14, 54, 58, true), "ICMPv6 checksum with the IPv6 pseudo header")
  t = P.stack{ L.eth{}, L.vlan{ id = 1 }, L.ip6{ dst = "ff02::1" }, L.icmp6{ type = 135 }, size = 90 }
  assert(t.bytes:byte(59) == 135 and l4_ok(t.bytes, 18, 58, 58, true))
end

function T.icmp_setters_keep_the_checksum_valid()
  local t4 = icmp{ size = 77, payload = "random" }
  local t6 = icmp6{ size = 97, payload = "random" }
  for _, c in ipairs({ { t4, icmp, false }, { t6, icmp6, true } }) do
    local t, m, v6 = c[1], c[2], c[3]
    local buf = buffer(t)
    local p = buf + t.l4
    math.randomseed(9)
    for _ = 1, 1000 do
      local a, b = math.random(0, 65535), math.random(0, 65535)
      m.set_id(p, a); m.set_seq(p, b); m.set_type(p, math.random(0, 255))
      assert(m.id(p) == a and m.seq(p) == b)
      local s = str(buf, t.size)
      local ok = v6 and l4_ok(s, t.l3, t.l4, 58, true) or covers(s, t.l4, t.size - t.l4)
      assert(ok, ("checksum after id %d seq %d"):format(a, b))
    end
  end
end

---------------------------------------------------------------------------
-- ARP

local arp = P.arp

function T.arp_request_and_reply_bytes()
  local t = arp{ sha = "02:00:00:00:00:aa", spa = "192.168.0.1", tpa = "192.168.0.2" }
  local s = t.bytes
  assert(#s == 60 and t.off.arp == 14)
  assert(hex(s:sub(1, 14)) == "ffffffffffff0200000000aa0806", "broadcast from sha, ethertype 0x0806")
  assert(hex(s:sub(15, 42)) == "0001080006040001" .. "0200000000aa" .. "c0a80001" .. "000000000000" .. "c0a80002",
    "ARP request: " .. hex(s:sub(15, 42)))
  assert(s:sub(43) == ("\0"):rep(18), "zero padding")
  t = arp{ op = "reply", sha = "02:00:00:00:00:bb", spa = "10.0.0.2", tha = "02:00:00:00:00:aa", tpa = "10.0.0.1" }
  s = t.bytes
  assert(hex(s:sub(1, 14)) == "0200000000aa0200000000bb0806", "a reply goes to tha")
  assert(be16(s, 20) == 2 and hex(s:sub(33, 38)) == "0200000000aa")
  t = arp{ op = 2, src_mac = "02:00:00:00:00:cc", dst_mac = "02:00:00:00:00:dd", vlan = 5 }
  s = t.bytes
  assert(hex(s:sub(1, 12)) == "0200000000dd0200000000cc" and be16(s, 12) == 0x8100 and be16(s, 16) == 0x0806)
  assert(hex(s:sub(27, 32)) == "0200000000cc" and hex(s:sub(37, 42)) == "0200000000dd", "sha/tha from the MACs")
  t = P.stack{ L.eth{}, L.arp{ op = 1, tpa = "10.9.9.9" } }
  assert(be32(t.bytes, 38) == 0x0a090909)
end

function T.arp_setters()
  local t = arp{}
  local buf = buffer(t)
  arp.set_spa(buf + 14, 0x01020304); arp.set_tpa(buf + 14, 0xc0000201)
  assert(arp.spa(buf + 14) == 0x01020304 and arp.tpa(buf + 14) == 0xc0000201)
  assert(P.decode(str(buf, 60)):match("arp request sha 02:00:00:00:00:01 spa 1%.2%.3%.4 tha 00:00:00:00:00:00 tpa 192%.0%.2%.1"))
end

---------------------------------------------------------------------------
-- VXLAN

local vxlan = P.vxlan

local function vxlan_frame(outer_checksum)
  return P.stack{ L.eth{}, L.ip4{}, L.udp{ sport = 49152, checksum = outer_checksum }, L.vxlan{ vni = 0x123456 },
                  L.eth{ src = "02:00:00:00:01:01", dst = "02:00:00:00:01:02" }, L.ip4{ src = "192.168.0.1" },
                  L.udp{ sport = 7, dport = 9 }, size = 128, payload = "inc" }
end

function T.vxlan_bytes_and_checksums()
  local t = vxlan_frame()
  local s = t.bytes
  assert(t.off.vxlan == 42 and t.layers[5].off == 50 and t.layers[6].off == 64 and t.layers[7].off == 84)
  assert(be16(s, 34) == 49152 and be16(s, 36) == 4789, "outer UDP to port 4789 by default")
  assert(hex(s:sub(43, 50)) == "0800000012345600", "flags 0x08, VNI 0x123456, reserved zeros")
  assert(hex(s:sub(51, 64)) == "020000000102020000000101" .. "0800", "inner Ethernet")
  assert(ip4_ok(s, 14) and ip4_ok(s, 64), "both IPv4 checksums")
  assert(l4_ok(s, 64, 84, 17), "inner UDP checksum")
  assert(l4_ok(s, 14, 34, 17), "outer UDP checksum covers the inner frame")
  assert(be16(s, 38) == 128 - 34 and be16(s, 88) == 128 - 84, "UDP lengths")
end

function T.vxlan_set_vni_keeps_the_outer_udp_checksum()
  local t = vxlan_frame()
  local buf = buffer(t)
  math.randomseed(13)
  for _ = 1, 1000 do
    local v = math.random(0, 2^24 - 1)
    vxlan.set_vni(buf + 42, v)
    local s = str(buf, 128)
    assert(vxlan.vni(buf + 42) == v and be32(s, 46) == v * 256 and s:byte(43) == 8)
    assert(l4_ok(s, 14, 34, 17), "outer UDP checksum after vni " .. v)
  end
  -- no outer checksum (0): stays 0
  t = vxlan_frame(false)
  buf = buffer(t)
  vxlan.set_vni(buf + 42, 99)
  assert(buf[40] == 0 and buf[41] == 0 and vxlan.vni(buf + 42) == 99)
end

---------------------------------------------------------------------------
-- GRE

local gre = P.gre

function T.gre_bytes()
  local t = P.stack{ L.eth{}, L.ip4{}, L.gre{}, L.ip4{ src = "192.168.0.1" }, L.udp{}, size = 90 }
  local s = t.bytes
  assert(s:byte(24) == 47, "IPv4 protocol 47")
  assert(hex(s:sub(35, 38)) == "00000800", "no flags, version 0, protocol 0x0800")
  assert(t.layers[4].off == 38 and s:byte(39) == 0x45 and ip4_ok(s, 14) and ip4_ok(s, 38) and l4_ok(s, 38, 58, 17))
  t = P.stack{ L.eth{}, L.ip4{}, L.gre{ key = 0xdeadbeef }, L.eth{}, L.ip6{}, L.udp{}, size = 140 }
  s = t.bytes
  assert(hex(s:sub(35, 42)) == "20006558deadbeef", "K bit, transparent Ethernet bridging, key")
  assert(t.layers[4].off == 42 and be16(s, 54) == 0x86dd and l4_ok(s, 56, 96, 17, true))
  t = P.stack{ L.eth{}, L.ip6{}, L.gre{}, L.ip6{}, L.tcp{} }
  assert(t.bytes:byte(21) == 47 and be16(t.bytes, 56) == 0x86dd and l4_ok(t.bytes, 58, 98, 6, true))
  t = P.stack{ L.eth{}, L.ip4{}, L.gre{}, L.mpls{ label = 5 }, L.ip4{}, L.udp{} }
  assert(be16(t.bytes, 36) == 0x8847)
  t = P.stack{ L.eth{}, L.ip4{}, L.gre{ proto = 0x880b } }
  assert(be16(t.bytes, 36) == 0x880b)
end

function T.gre_set_key_and_decode_of_a_checksummed_header()
  local t = P.stack{ L.eth{}, L.ip4{}, L.gre{ key = 1 }, L.ip4{}, L.udp{} }
  local buf = buffer(t)
  gre.set_key(buf + 34, 0xfffffffe)
  assert(gre.key(buf + 34) == 0xfffffffe and be32(str(buf, t.size), 38) == 0xfffffffe)
  -- a GRE header with checksum and key, as another sender would write it
  local inner = P.stack{ L.eth{}, L.ip4{ src = "10.9.0.1" }, L.udp{}, size = 60 }.bytes:sub(15)
  local h = unhex("a0000800 00000000 0000002a") .. inner
  local c = 0xffff - osum(h, 1, #h)
  h = h:sub(1, 4) .. string.char(math.floor(c / 256), c % 256) .. h:sub(7)
  assert(covers(h, 0, #h), "hand-made GRE checksum")
  local ip = P.stack{ L.eth{}, L.ip4{ proto = 47 }, size = 34 + #h }.bytes:sub(1, 34)
  local text = P.decode(ip .. h)
  assert(text:match("gre proto 0x0800 key 42 csum ok | ip4 10%.9%.0%.1 "), text)
  local hb = ffi.new("uint8_t[?]", #h)
  ffi.copy(hb, h, #h)
  for _, v in ipairs({ 0, 1, 0x12345678, 2^32 - 1 }) do
    gre.set_key(hb, v)
    assert(gre.key(hb) == v and covers(str(hb, #h), 0, #h), "GRE checksum after set_key " .. v)
  end
  local bad = ip .. h:sub(1, 20) .. "x" .. h:sub(22)
  assert(P.decode(bad):match("gre proto 0x0800 key 42 csum BAD"), P.decode(bad))
end

---------------------------------------------------------------------------
-- MPLS

local mpls = P.mpls

function T.mpls_bytes()
  local t = P.stack{ L.eth{}, L.mpls{ label = 100, tc = 3 }, L.mpls{ label = 1048575, tc = 7, ttl = 1 }, L.ip4{}, L.udp{} }
  local s = t.bytes
  assert(be16(s, 12) == 0x8847, "ethertype MPLS")
  assert(be32(s, 14) == 100 * 4096 + 3 * 512 + 0 * 256 + 64, ("first entry: 0x%08x"):format(be32(s, 14)))
  assert(be32(s, 18) == 1048575 * 4096 + 7 * 512 + 256 + 1, "bottom entry: s = 1")
  assert(s:byte(23) == 0x45 and ip4_ok(s, 22) and l4_ok(s, 22, 42, 17))
  t = P.stack{ L.eth{}, L.mpls{ label = 16, s = 1 }, L.mpls{ label = 17, s = 0 }, L.ip6{}, L.udp{} }
  assert(be32(t.bytes, 14) == 16 * 4096 + 256 + 64 and be32(t.bytes, 18) == 17 * 4096 + 64, "s given wins")
end

function T.mpls_set_label_keeps_the_rest()
  local t = P.stack{ L.eth{}, L.mpls{ label = 5, tc = 6, ttl = 200 }, L.ip4{}, L.udp{} }
  local buf = buffer(t)
  math.randomseed(17)
  for _ = 1, 500 do
    local v = math.random(0, 1048575)
    mpls.set_label(buf + 14, v)
    assert(mpls.label(buf + 14) == v and be32(str(buf, t.size), 14) == v * 4096 + 6 * 512 + 256 + 200)
  end
  mpls.set_ttl(buf + 14, 3)
  assert(buf[17] == 3)
end

---------------------------------------------------------------------------
-- Decode every stack

local function parts_of(text)
  local out = {}
  for part in (text .. " | "):gmatch("(.-) | ") do out[#out + 1] = part end
  return out
end

function T.decode_names_every_layer_in_order_with_checksums_ok()
  local stacks = {
    { { L.eth{}, L.ip4{}, L.udp{} }, "eth ip4 udp", 2 },
    { { L.eth{}, L.vlan{ id = 7 }, L.ip4{}, L.udp{} }, "eth vlan ip4 udp", 2 },
    { { L.eth{}, L.qinq{ id = 1 }, L.vlan{ id = 2 }, L.ip4{}, L.tcp{} }, "eth vlan vlan ip4 tcp", 2 },
    { { L.eth{}, L.ip6{}, L.udp{} }, "eth ip6 udp", 1 },
    { { L.eth{}, L.vlan{ id = 7 }, L.ip6{}, L.tcp{} }, "eth vlan ip6 tcp", 1 },
    { { L.eth{}, L.ip4{}, L.icmp{} }, "eth ip4 icmp", 2 },
    { { L.eth{}, L.ip6{}, L.icmp6{} }, "eth ip6 icmp6", 1 },
    { { L.eth{}, L.arp{} }, "eth arp", 0 },
    { { L.eth{}, L.ip4{}, L.udp{}, L.vxlan{ vni = 42 }, L.eth{}, L.ip4{}, L.udp{} }, "eth ip4 udp vxlan eth ip4 udp", 4 },
    { { L.eth{}, L.ip4{}, L.gre{}, L.ip4{}, L.udp{} }, "eth ip4 gre ip4 udp", 3 },
    { { L.eth{}, L.ip4{}, L.gre{ key = 1 }, L.eth{}, L.ip6{}, L.icmp6{} }, "eth ip4 gre eth ip6 icmp6", 2 },
    { { L.eth{}, L.mpls{ label = 1 }, L.mpls{ label = 2 }, L.ip4{}, L.udp{} }, "eth mpls mpls ip4 udp", 2 },
    { { L.eth{}, L.mpls{ label = 1 }, L.ip6{}, L.tcp{} }, "eth mpls ip6 tcp", 1 },
    { { L.eth{}, L.ip4{}, L.ip6{}, L.udp{} }, "eth ip4 ip6 udp", 2 },
    { { L.eth{}, L.ip6{}, L.ip4{}, L.tcp{} }, "eth ip6 ip4 tcp", 2 },
    { { L.eth{}, L.ip6{}, L.udp{}, L.vxlan{}, L.eth{}, L.vlan{ id = 3 }, L.ip6{}, L.tcp{} },
      "eth ip6 udp vxlan eth vlan ip6 tcp", 2 },
  }
  for _, c in ipairs(stacks) do
    local spec = c[1]
    spec.payload = "random"
    local t = P.stack(spec)
    local text = P.decode(t.bytes)
    local parts, k = parts_of(text), 0
    for name in c[2]:gmatch("%S+") do
      k = k + 1
      assert(parts[k] and parts[k]:match("^" .. name .. " "), ("part %d is not %s: %s"):format(k, name, text))
    end
    assert(parts[k + 1] == nil or parts[k + 1]:match("^data %d+ bytes$"), "nothing else: " .. text)
    local _, oks = text:gsub("csum ok", "")
    assert(oks == c[3], ("%d checksums ok, want %d: %s"):format(oks, c[3], text))
    assert(not text:find("BAD") and not text:find("truncated"), text)
  end
end

function T.decode_shows_the_fields()
  local function d(t) return P.decode(t.bytes) end
  local text = d(tcp{ src = "2001:db8::1", dst = "2001:db8::2", sport = 5, dport = 6, flags = "PA", seq = 9,
                      ack = 10, window = 11, hlim = 12, flow = 0xabcde })
  assert(text:match("ip6 2001:db8::1 > 2001:db8::2 next 6 hlim 12 len 20 tclass 0 flow 0xabcde"), text)
  assert(text:match("tcp 5 > 6 %[PA%] seq 9 ack 10 win 11 len 0 csum ok"), text)
  text = d(icmp{ type = 0, id = 3, seq = 4 })
  assert(text:match("icmp type 0 code 0 echo%-reply id 3 seq 4 csum ok"), text)
  text = d(P.stack{ L.eth{}, L.ip4{}, L.udp{}, L.vxlan{ vni = 16777215 }, L.eth{}, L.ip4{}, L.udp{} })
  assert(text:match("udp 1024 > 4789 len %d+ csum ok | vxlan vni 16777215 flags 0x08 | eth "), text)
  text = d(P.stack{ L.eth{}, L.mpls{ label = 1048575, tc = 7, ttl = 9 }, L.ip4{}, L.udp{} })
  assert(text:match("mpls label 1048575 tc 7 s 1 ttl 9 | ip4 "), text)
end

function T.decode_flags_bad_checksums()
  local function flip(s, at) return s:sub(1, at - 1) .. string.char(255 - s:byte(at)) .. s:sub(at + 1) end
  local cases = {
    { tcp{ size = 70 }, "tcp .* csum BAD" },
    { tcp{ src = "::1", dst = "::2", size = 90 }, "tcp .* csum BAD" },
    { icmp{ size = 70 }, "icmp .* csum BAD" },
    { icmp6{ size = 90 }, "icmp6 .* csum BAD" },
    { P.udp{ src = "::1", dst = "::2", size = 90 }, "udp .* csum BAD" },
  }
  for _, c in ipairs(cases) do
    local text = P.decode(flip(c[1].bytes, c[1].size))
    assert(text:match(c[2]), text)
  end
end

function T.decode_steps_over_ip6_extension_headers()
  local s = P.udp{ src = "2001:db8::1", dst = "2001:db8::2", sport = 3, dport = 4, size = 80 }.bytes
  -- insert a destination options header (next header UDP, 8 bytes of padding)
  local ext = "\17\0\1\4\0\0\0\0"
  local plen = be16(s, 18) + 8
  local hdr = s:sub(1, 18) .. string.char(math.floor(plen / 256), plen % 256) .. "\60" .. s:sub(22, 54)
  local text = P.decode(hdr .. ext .. s:sub(55))
  assert(text:match("ip6 .* next 17 .* ext dst | udp 3 > 4 len 26 csum ok"), text)
end

---------------------------------------------------------------------------
-- Field metadata (for flows): each field is where the module says

function T.fields_metadata_points_at_the_values()
  local function get(s, off, bytes)
    local v = 0
    for k = 1, bytes do v = v * 256 + s:byte(off + k) end
    return v
  end
  local function check(t, layer, mod, name, want)
    local f = mod.fields[name]
    assert(f, layer .. " has no field " .. name)
    local v = get(t.bytes, t.off[layer] + f.off, f.bytes)
    if f.mask then
      v = bit.band(v, f.mask)
      local m = f.mask
      while m % 2 == 0 do m = m / 2; v = v / 2 end
    end
    assert(v == want, ("%s.%s = %s, want %s"):format(layer, name, v, want))
  end
  local t = tcp{ src = "2001:db8::1:2:3", dst = "2001:db8::4:5:6", hlim = 5, flow = 0x54321, tclass = 0x7e,
                 sport = 11, dport = 12, seq = 13, ack = 14, window = 15 }
  check(t, "ip6", ip6, "src", 0x00020003); check(t, "ip6", ip6, "dst", 0x00050006)
  check(t, "ip6", ip6, "hlim", 5); check(t, "ip6", ip6, "flow", 0x54321); check(t, "ip6", ip6, "tclass", 0x7e)
  for k, v in pairs({ sport = 11, dport = 12, seq = 13, ack = 14, window = 15 }) do check(t, "tcp", tcp, k, v) end
  assert(tcp.checksum == 16 and icmp.checksum == 2 and icmp6.checksum == 2)
  assert(icmp.pseudo_header == false and icmp6.pseudo_header == nil and tcp.pseudo_header == nil)
  t = icmp{ type = 13, code = 2, id = 3, seq = 4 }
  for k, v in pairs({ type = 13, code = 2, id = 3, seq = 4 }) do check(t, "icmp", icmp, k, v) end
  t = arp{ op = 2, spa = "1.2.3.4", tpa = "5.6.7.8", sha = "02:00:00:00:00:05", tha = "02:00:00:00:00:06" }
  for k, v in pairs({ op = 2, spa = 0x01020304, tpa = 0x05060708, sha = 0x020000000005, tha = 0x020000000006 }) do
    check(t, "arp", arp, k, v)
  end
  t = vxlan_frame()
  check(t, "vxlan", vxlan, "vni", 0x123456)
  t = P.stack{ L.eth{}, L.ip4{}, L.gre{ key = 99 }, L.ip4{}, L.udp{} }
  check(t, "gre", gre, "key", 99)
  t = P.stack{ L.eth{}, L.mpls{ label = 777, tc = 5, ttl = 6 }, L.ip4{}, L.udp{} }
  check(t, "mpls", mpls, "label", 777); check(t, "mpls", mpls, "tc", 5); check(t, "mpls", mpls, "ttl", 6)
end

---------------------------------------------------------------------------
-- Errors: one line, naming the field, the bad value and this file's line

function T.bad_layer_options_are_clear_errors()
  fails(function() local t = L.ip6{ dst = "x" }; return t end, "surge%.proto%.ip6: dst: 'x' is not an IPv6 address")
  fails(function() local t = L.ip6{ hlim = 256 }; return t end, "surge%.proto%.ip6: hlim = 256 outside 0%.%.255")
  fails(function() local t = L.ip6{ flow = 0x100000 }; return t end, "surge%.proto%.ip6: flow = 1048576 outside 0%.%.1048575")
  fails(function() local t = L.ip6{ tclass = -1 }; return t end, "surge%.proto%.ip6: tclass = %-1 outside 0%.%.255")
  fails(function() local t = L.ip6{ ttl = 1 }; return t end, "surge%.proto%.ip6: unknown field 'ttl' %(dst, flow, hlim, proto, src, tclass%)")
  fails(function() local t = L.tcp{ sport = 65536 }; return t end, "surge%.proto%.tcp: sport = 65536 outside 0%.%.65535")
  fails(function() local t = L.tcp{ seq = 2^32 }; return t end, "surge%.proto%.tcp: seq = 4294967296 outside 0%.%.4294967295")
  fails(function() local t = L.tcp{ ack = 1.5 }; return t end, "surge%.proto%.tcp: ack = 1%.5 outside")
  fails(function() local t = L.tcp{ flags = "SX" }; return t end, "surge%.proto%.tcp: flags = 'SX': 'X' is not a TCP flag")
  fails(function() local t = L.tcp{ flags = 256 }; return t end, "surge%.proto%.tcp: flags = 256 outside 0%.%.255")
  fails(function() local t = L.tcp{ flags = true }; return t end, "surge%.proto%.tcp: flags must be a string")
  fails(function() local t = L.tcp{ window = "big" }; return t end, "surge%.proto%.tcp: window = big outside")
  fails(function() local t = L.icmp{ type = 256 }; return t end, "surge%.proto%.icmp: type = 256 outside 0%.%.255")
  fails(function() local t = L.icmp{ seq = 65536 }; return t end, "surge%.proto%.icmp: seq = 65536 outside 0%.%.65535")
  fails(function() local t = L.icmp6{ id = -1 }; return t end, "surge%.proto%.icmp6: id = %-1 outside 0%.%.65535")
  fails(function() local t = L.icmp6{ colour = 1 }; return t end, "surge%.proto%.icmp6: unknown field 'colour'")
  fails(function() local t = L.arp{ op = "ask" }; return t end, "surge%.proto%.arp: op = 'ask': use \"request\", \"reply\"")
  fails(function() local t = L.arp{ op = 70000 }; return t end, "surge%.proto%.arp: op = 70000 outside 0%.%.65535")
  fails(function() local t = L.arp{ sha = "02:00" }; return t end, "surge%.proto%.arp: sha: '02:00' is not a MAC address")
  fails(function() local t = L.arp{ tpa = "10.0.0.256" }; return t end, "surge%.proto%.arp: tpa: '10%.0%.0%.256' is not an IPv4 address")
  fails(function() local t = L.vxlan{ vni = 2^24 }; return t end, "surge%.proto%.vxlan: vni = 16777216 outside 0%.%.16777215")
  fails(function() local t = L.gre{ key = -1 }; return t end, "surge%.proto%.gre: key = %-1 outside 0%.%.4294967295")
  fails(function() local t = L.gre{ proto = 0x10000 }; return t end, "surge%.proto%.gre: proto = 65536 outside 0%.%.65535")
  fails(function() local t = L.mpls{ label = 2000000 }; return t end, "surge%.proto%.mpls: label = 2000000 outside 0%.%.1048575")
  fails(function() local t = L.mpls{ tc = 8 }; return t end, "surge%.proto%.mpls: tc = 8 outside 0%.%.7")
  fails(function() local t = L.mpls{ s = 2 }; return t end, "surge%.proto%.mpls: s = 2 outside 0%.%.1")
  fails(function() local t = L.mpls{ ttl = 300 }; return t end, "surge%.proto%.mpls: ttl = 300 outside 0%.%.255")
  -- an optional field given as false is refused like any non-integer (it was read as absent)
  fails(function() local t = L.udp{ dport = false }; return t end, "surge%.proto%.udp: dport = false outside 0%.%.65535")
  fails(function() local t = L.gtpv1{ seq = false }; return t end, "surge%.proto%.gtpv1: seq = false outside 0%.%.65535")
  fails(function() local t = L.gre{ key = false }; return t end, "surge%.proto%.gre: key = false outside 0%.%.4294967295")
  fails(function() local t = L.pause{ time = 70000 }; return t end, "surge%.proto%.pause: time = 70000 outside 0%.%.65535")
  fails(function() local t = L.ppp{ proto = -1 }; return t end, "surge%.proto%.ppp: proto = %-1 outside 0%.%.65535")
end

function T.bad_flat_fields_are_clear_errors()
  fails(function() local t = tcp{ flags = "SYN" }; return t end, "surge%.proto%.tcp: flags = 'SYN': 'Y' is not a TCP flag")
  fails(function() local t = tcp{ dst = "2001:db8::zz" }; return t end, "surge%.proto%.ip6: dst: '2001:db8::zz' is not an IPv6 address")
  fails(function() local t = tcp{ colour = 1 }; return t end, "surge%.proto%.tcp: unknown field 'colour'")
  fails(function() local t = tcp{ size = 40 }; return t end, "size = 40 outside 54%.%.9600")
  fails(function() local t = icmp{ seq = -5 }; return t end, "surge%.proto%.icmp: seq = %-5 outside 0%.%.65535")
  fails(function() local t = icmp{ id = 65536 }; return t end, "surge%.proto%.icmp: id = 65536 outside 0%.%.65535")
  fails(function() local t = icmp6{ src = "10.0.0.1" }; return t end, "surge%.proto%.ip6: src: '10%.0%.0%.1' is not an IPv6 address")
  fails(function() local t = icmp6{ type = 300 }; return t end, "surge%.proto%.icmp6: type = 300 outside 0%.%.255")
  fails(function() local t = arp{ op = "nope" }; return t end, "surge%.proto%.arp: op = 'nope'")
  fails(function() local t = arp{ src_mac = "zz" }; return t end, "surge%.proto%.arp: src_mac: 'zz' is not a MAC address")
  fails(function() local t = arp{ spa = "1.2.3" }; return t end, "surge%.proto%.arp: spa: '1%.2%.3' is not an IPv4 address")
  fails(function() local t = arp{ vlan = 5000 }; return t end, "surge%.proto%.vlan: id = 5000 outside 0%.%.4095")
  fails(function() local t = arp{ ttl = 3 }; return t end, "surge%.proto%.arp: unknown field 'ttl'")
  fails(function() local t = icmp{ src = "::1", dst = "::2" }; return t end, "ICMP over IPv6 is ICMPv6")
end

-- Errors found while the stack is built (write time) come without a position.
function T.bad_stacks_are_clear_errors()
  fails(function() local t = P.stack{ L.eth{}, L.ip4{}, L.icmp6{} }; return t end,
    "^surge%.proto%.icmp6: needs an IPv6 layer before it", true)
  fails(function() local t = P.stack{ L.eth{}, L.ip6{}, L.icmp{} }; return t end,
    "^surge%.proto%.icmp: ICMP over IPv6 is ICMPv6", true)
  fails(function() local t = P.stack{ L.eth{}, L.ip4{ proto = 17 }, L.vxlan{} }; return t end,
    "^surge%.proto%.vxlan: needs a udp layer right before it", true)
  fails(function() local t = P.stack{ L.eth{}, L.ip4{}, L.udp{}, L.vxlan{}, L.ip4{} }; return t end,
    "^surge%.proto%.vxlan: the next layer must be eth %(VXLAN carries Ethernet frames%), not ip4", true)
  fails(function() local t = P.stack{ L.eth{}, L.ip4{}, L.gre{} }; return t end,
    "^surge%.proto%.gre: no proto given and the next layer has no ethertype", true)
  fails(function() local t = P.stack{ L.eth{}, L.ip6{} }; return t end,
    "^surge%.proto%.ip6: no proto given and the next layer has none", true)
end

---------------------------------------------------------------------------
-- Setters in a compiled loop allocate nothing (the pointer arithmetic is
-- sunk by the JIT).

function T.setters_do_not_allocate_once_compiled()
  if not jit.status() then return end
  local t = P.stack{ L.eth{}, L.ip4{}, L.udp{}, L.vxlan{}, L.eth{}, L.ip6{}, L.tcp{}, size = 128 }
  local buf = buffer(t)
  local v, tp, ip = buf + t.off.vxlan, buf + t.off.tcp, buf + t.off.ip6
  local function run(n)
    for i = 1, n do
      tcp.set_seq(tp, i); tcp.set_sport(tp, i % 65536); vxlan.set_vni(v, i % 16777216)
      ip6.set_hlim(ip, i % 256); mpls.set_label(buf, i % 1048576)
    end
  end
  run(20000)
  collectgarbage(); collectgarbage("stop")
  local before = collectgarbage("count")
  run(200000)
  local grew = collectgarbage("count") - before
  collectgarbage("restart")
  assert(grew < 256, ("setters allocated %.0f KB in 200000 rounds"):format(grew))
end

return T
