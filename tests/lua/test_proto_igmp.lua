-- IGMPv2/v3 and MLDv2 builders (surge.proto.igmp): the bytes RFC 2236, 3376
-- and 3810 give, checksums verified by an independent sum, the multicast MAC
-- mapping, and refusals of what is not a group. tshark's view of the same
-- frames: tests/e2e/test_rfc3918_tshark.sh.
local ffi = require("ffi")
local surge = require("surge")
local igmp, cs = surge.proto.igmp, surge.proto.checksum
local T = {}

local function bytes(s) return ffi.cast("const uint8_t *", s) end
local function raises(f, pat)
  local ok, e = pcall(f)
  assert(not ok, "expected an error matching " .. pat)
  assert(tostring(e):find(pat), tostring(e))
end

function T.mac_mapping()
  assert(igmp.mac("239.1.1.1") == "01:00:5e:01:01:01")
  assert(igmp.mac("224.129.2.3") == "01:00:5e:01:02:03", "the 24th bit is dropped (RFC 1112 6.4)")
  assert(igmp.mac("ff3e::8001:2") == "33:33:80:01:00:02")
  assert(igmp.is_multicast("239.0.0.1") and igmp.is_multicast("ff02::16"))
  assert(not igmp.is_multicast("10.0.0.1") and not igmp.is_multicast("2001:db8::1") and not igmp.is_multicast("x"))
end

-- the IPv4 header: IHL 6, TTL 1, IGMP, the Router Alert option, checksum valid
local function check_ip4(p, dst, tos, total)
  assert(p[12] == 8 and p[13] == 0)
  local h = p + 14
  assert(h[0] == 0x46 and h[1] == tos and h[2] * 256 + h[3] == total, "IHL 6, tos, length")
  assert(h[8] == 1 and h[9] == 2, "TTL 1, protocol IGMP")
  assert(h[20] == 0x94 and h[21] == 4 and h[22] == 0 and h[23] == 0, "Router Alert option")
  assert(cs.sum(h, 24) == 0xffff, "IPv4 header checksum")
  assert(surge.proto.ip4.addr_text(((h[16] * 256 + h[17]) * 256 + h[18]) * 256 + h[19]) == dst)
end

function T.v2_report_and_leave()
  local r = igmp.v2{ src_mac = "02:00:00:00:00:aa", src = "10.0.0.5", group = "239.1.2.3" }
  local p = bytes(r.bytes)
  assert(r.size == 60 and #r.bytes == 60)
  assert(r.bytes:sub(1, 6) == "\1\0\94\1\2\3" and r.bytes:sub(7, 12) == "\2\0\0\0\0\170", "to the group's MAC")
  check_ip4(p, "239.1.2.3", 0, 32)
  assert(p[38] == 0x16 and p[39] == 0 and r.bytes:sub(43, 46) == "\239\1\2\3", "v2 report of the group")
  assert(cs.sum(p + 38, 8) == 0xffff, "IGMP checksum")
  local l = igmp.v2{ src_mac = "02:00:00:00:00:aa", src = "10.0.0.5", group = "239.1.2.3", leave = true }
  p = bytes(l.bytes)
  check_ip4(p, "224.0.0.2", 0, 32)
  assert(l.bytes:sub(1, 6) == "\1\0\94\0\0\2" and p[38] == 0x17 and cs.sum(p + 38, 8) == 0xffff)
  assert(surge.proto.decode(l.bytes):find("igmp leave csum ok group 239.1.2.3", 1, true))
end

function T.v3_records_and_sources()
  local r = igmp.v3{ src_mac = "02:00:00:00:00:aa", src = "10.0.0.5", records = {
    { type = igmp.TO_EX, group = "239.1.1.1" },
    { type = igmp.ALLOW, group = "232.1.1.1", sources = { "10.9.0.1", "10.9.0.2" } } } }
  local p = bytes(r.bytes)
  local mlen = 8 + 8 + 8 + 8
  check_ip4(p, "224.0.0.22", 0xc0, 24 + mlen)
  assert(r.bytes:sub(1, 6) == "\1\0\94\0\0\22")
  assert(p[38] == 0x22 and p[44] == 0 and p[45] == 2, "v3 report, 2 records")
  assert(p[46] == 4 and p[49] == 0 and r.bytes:sub(51, 54) == "\239\1\1\1", "record 1: TO_EX, no source")
  assert(p[54] == 5 and p[57] == 2 and r.bytes:sub(59, 62) == "\232\1\1\1" and r.bytes:sub(63, 70) == "\10\9\0\1\10\9\0\2")
  assert(cs.sum(p + 38, mlen) == 0xffff, "IGMP checksum")
  raises(function() igmp.v3{ records = { { type = 4, group = "10.0.0.1" } } } end, "not an IPv4 multicast")
  raises(function() igmp.v3{ records = {} } end, "records")
  local many = {}
  for i = 1, igmp.MAX_RECORDS.v3 + 1 do many[i] = { type = 4, group = "239.2.0." .. (i % 250) } end
  raises(function() igmp.v3{ records = many } end, "do not fit")
  many[#many] = nil
  assert(#igmp.v3{ records = many }.bytes <= 1514)
end

function T.mld2_report()
  local src = igmp.link_local("02:00:00:00:00:aa")
  assert(src == "fe80::0:ff:fe00:aa", src)
  local r = igmp.mld2{ src_mac = "02:00:00:00:00:aa", src = src, records = {
    { type = igmp.TO_EX, group = "ff3e::1" }, { type = igmp.TO_IN, group = "ff3e::2", sources = { "2001:db8::9" } } } }
  local p = bytes(r.bytes)
  assert(r.bytes:sub(1, 6) == "\51\51\0\0\0\22" and p[12] == 0x86 and p[13] == 0xdd)
  local plen = 8 + 8 + 20 + 36
  assert(p[14] == 0x60 and p[18] * 256 + p[19] == plen and p[20] == 0 and p[21] == 1, "hop-by-hop next, hlim 1")
  assert(p[54] == 58 and p[55] == 0 and p[56] == 5 and p[57] == 2 and p[58] == 0 and p[59] == 0, "Router Alert MLD")
  assert(p[62] == 143 and p[69] == 2, "type 143, 2 records")
  local pseudo = cs.sum(p + 22, 32) + (plen - 8) + 58
  assert(cs.sum(p + 62, plen - 8, pseudo) == 0xffff, "ICMPv6 checksum over the pseudo header")
  raises(function() igmp.mld2{ src = "2001:db8::1", records = { { type = 4, group = "ff3e::1" } } } end, "link%-local")
  raises(function() igmp.mld2{ src = src, records = { { type = 4, group = "2001:db8::1" } } } end, "not an IPv6 multicast")
  raises(function() igmp.mld2{ src = src, records = { { type = 9, group = "ff3e::1" } } } end, "type must be 1..6")
end

return T
