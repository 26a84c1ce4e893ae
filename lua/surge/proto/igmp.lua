-- igmp.lua - IGMP membership messages (IGMPv2, RFC 2236; IGMPv3, RFC 3376),
-- MLDv2 reports (RFC 3810) and the multicast MAC mapping (RFC 1112 6.4,
-- RFC 2464 7): whole Ethernet frames, as hosts send them, for a receiver
-- that joins and leaves groups (scenario rfc3918).
--
--   igmp.v2{ src_mac = "02:..", src = "10.0.0.5", group = "239.1.1.1" }          -- report (0x16)
--   igmp.v2{ ..., group = "239.1.1.1", leave = true }                            -- leave (0x17, to 224.0.0.2)
--   igmp.v3{ src_mac, src, records = { { type = igmp.TO_EX, group = "239.1.1.1" },
--            { type = igmp.ALLOW, group = "232.1.1.1", sources = { "10.9.0.1" } } } }
--   igmp.mld2{ src_mac, src = "fe80::1", records = { { type = igmp.TO_IN, group = "ff3e::1" } } }
--   igmp.mac("239.1.1.1") --> "01:00:5e:01:01:01";  igmp.mac("ff3e::1:2") --> "33:33:00:01:00:02"
-- Each returns { bytes, size } (no FCS; IPv4 frames padded to 60 bytes).
-- Every IP header is what RFC 2236/3376/3810 require: IPv4 TTL 1 with the
-- Router Alert option (RFC 2113) and TOS 0xc0 (v3), IPv6 hop limit 1 with a
-- hop-by-hop header holding the Router Alert option (RFC 2711, value 0 =
-- MLD), a link-local source for MLD. Checksums: IPv4 header, IGMP (over the
-- message), ICMPv6 (over the pseudo header).
local ffi = require("ffi")
local bit = require("bit")
local cs = require("surge.proto.checksum")
local eth = require("surge.proto.eth")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")
local stack = require("surge.proto.stack")
local check = require("surge.check")

local band, rshift = bit.band, bit.rshift
local M = { V2_REPORT = 0x16, V2_LEAVE = 0x17, V3_REPORT = 0x22, MLD2_REPORT = 143,
            -- group record types (RFC 3376 4.2.12, RFC 3810 5.2.12)
            IS_IN = 1, IS_EX = 2, TO_IN = 3, TO_EX = 4, ALLOW = 5, BLOCK = 6,
            ALL_ROUTERS = "224.0.0.2", V3_ROUTERS = "224.0.0.22", MLD2_ROUTERS = "ff02::16",
            ROUTER_ALERT = "\148\4\0\0" }

local function fail(fn, msg) check.raise(("surge.proto.igmp.%s: %s"):format(fn, msg)) end

-- Whether a is a multicast address: IPv4 text or number in 224/4, IPv6 text
-- in ff00::/8.
function M.is_multicast(a)
  if type(a) == "number" then return a >= 0xe0000000 and a <= 0xefffffff end
  if type(a) ~= "string" then return false end
  if a:find(":", 1, true) then
    local b = ip6.parse(a)
    return b ~= nil and b:byte(1) == 0xff
  end
  local ok, v = pcall(ip4.addr, a, "group", 1)
  return ok and M.is_multicast(v)
end

-- The Ethernet address a group's frames go to: 01:00:5e + the low 23 bits
-- (IPv4), 33:33 + the low 32 bits (IPv6).
function M.mac(group)
  if type(group) == "number" or not tostring(group):find(":", 1, true) then
    local v = ip4.addr(group, "surge.proto.igmp.mac: group", 2)
    return ("01:00:5e:%02x:%02x:%02x"):format(band(rshift(v, 16), 0x7f), band(rshift(v, 8), 0xff), band(v, 0xff))
  end
  local b = ip6.addr(group, "surge.proto.igmp.mac: group", 2)
  return ("33:33:%02x:%02x:%02x:%02x"):format(b:byte(13, 16))
end

local function group4(fn, g)
  local ok, v = pcall(ip4.addr, g, "group", 1)
  if not ok or not M.is_multicast(v) then fail(fn, ("group %s is not an IPv4 multicast address"):format(tostring(g))) end
  return v
end

local function group6(fn, g)
  local b = type(g) == "string" and ip6.parse(g)
  if not b or b:byte(1) ~= 0xff then fail(fn, ("group %s is not an IPv6 multicast address"):format(tostring(g))) end
  return b
end

-- An IPv4 frame to dst (a number) from src_mac/src with the Router Alert
-- option and `msg` (the IGMP message, its checksum still 0) after it.
local function frame4(fn, o, dst, tos, msg)
  local src = ip4.addr(o.src or "0.0.0.0", "surge.proto.igmp." .. fn .. ": src", 3)
  local mac = eth.mac(o.src_mac or "02:00:00:00:00:01", "surge.proto.igmp." .. fn .. ": src_mac", 3)
  local total = 24 + #msg
  local size = math.max(60, 14 + total)
  local p = ffi.new("uint8_t[?]", size)
  eth.write(p, mac, eth.mac(M.mac(dst), "dst", 1), 0x0800)
  local h = p + 14
  h[0] = 0x46; h[1] = tos                            -- IHL 6: 20 bytes and the 4-byte option
  stack.put16(h + 2, total)
  h[6] = 0; h[8] = 1; h[9] = 2                        -- no DF (RFC 2236 routers accept either); TTL 1; IGMP
  stack.put32(h + 12, src)
  stack.put32(h + 16, dst)
  ffi.copy(h + 20, M.ROUTER_ALERT, 4)
  stack.put16(h + 10, cs.finish(cs.sum(h, 24)))
  ffi.copy(h + 24, msg, #msg)
  stack.put16(h + 26, cs.finish(cs.sum(h + 24, #msg)))
  return { bytes = ffi.string(p, size), size = size, l3 = 14, l4 = 38 }
end

-- IGMPv2 membership report for o.group (to the group), or with o.leave a
-- leave group message (to all routers, 224.0.0.2).
function M.v2(o)
  check.expect(o, "table", "surge.proto.igmp.v2", "fields")
  local g = group4("v2", o.group)
  local msg = string.char(o.leave and M.V2_LEAVE or M.V2_REPORT, 0, 0, 0, rshift(g, 24), band(rshift(g, 16), 0xff),
    band(rshift(g, 8), 0xff), band(g, 0xff))
  return frame4("v2", o, o.leave and ip4.addr(M.ALL_ROUTERS) or g, 0, msg)
end

local function be32(v) return string.char(rshift(v, 24), band(rshift(v, 16), 0xff), band(rshift(v, 8), 0xff), band(v, 0xff)) end

-- Group records (type, group, sources) as bytes: addr(x) -> the address bytes.
local function records(fn, recs, addr, ga)
  if type(recs) ~= "table" or #recs == 0 then fail(fn, "records: give a list of { type, group, sources }") end
  local out = {}
  for i, r in ipairs(recs) do
    if type(r) ~= "table" or type(r.type) ~= "number" or r.type < 1 or r.type > 6 or r.type ~= math.floor(r.type) then
      fail(fn, ("record %d: type must be 1..6 (IS_IN .. BLOCK)"):format(i))
    end
    local src = r.sources or {}
    out[#out + 1] = string.char(r.type, 0, rshift(#src, 8), band(#src, 0xff)) .. ga(fn, r.group)
    for _, s in ipairs(src) do out[#out + 1] = addr(s) end
  end
  return table.concat(out), #recs
end

-- IGMPv3 membership report (to 224.0.0.22, TOS 0xc0): records = { { type,
-- group, sources = { "10.9.0.1", ... } } }; joining a group for any source
-- is { type = TO_EX, group } (no sources), leaving it { type = TO_IN, group }.
function M.v3(o)
  check.expect(o, "table", "surge.proto.igmp.v3", "fields")
  local body, n = records("v3", o.records, function(s) return be32(ip4.addr(s, "surge.proto.igmp.v3: source", 4)) end,
    function(fn, g) return be32(group4(fn, g)) end)
  local msg = string.char(M.V3_REPORT, 0, 0, 0, 0, 0, rshift(n, 8), band(n, 0xff)) .. body
  if 14 + 24 + #msg > 1514 then fail("v3", ("%d records do not fit one 1500-byte packet"):format(n)) end
  return frame4("v3", o, ip4.addr(M.V3_ROUTERS), 0xc0, msg)
end

-- The largest number of source-less records one report carries in a
-- 1500-byte packet: IGMPv3 (24 + 8 header, 8 a record), MLDv2 (40 + 8 + 8, 20).
M.MAX_RECORDS = { v3 = math.floor((1500 - 32) / 8), mld2 = math.floor((1500 - 56) / 20) }

-- MLDv2 report (ICMPv6 type 143, to ff02::16, hop limit 1, after a
-- hop-by-hop header with the Router Alert option): src must be link-local
-- (fe80::/10, RFC 3810 5); records as v3's, with IPv6 groups and sources.
function M.mld2(o)
  check.expect(o, "table", "surge.proto.igmp.mld2", "fields")
  local src = ip6.addr(o.src or "fe80::1", "surge.proto.igmp.mld2: src", 2)
  if src:byte(1) ~= 0xfe or band(src:byte(2), 0xc0) ~= 0x80 then
    fail("mld2", ("src %s is not link-local (fe80::/10): MLD reports must come from one"):format(tostring(o.src)))
  end
  local mac = eth.mac(o.src_mac or "02:00:00:00:00:01", "surge.proto.igmp.mld2: src_mac", 2)
  local body, n = records("mld2", o.records, function(s) return ip6.addr(s, "surge.proto.igmp.mld2: source", 4) end, group6)
  local msg = string.char(M.MLD2_REPORT, 0, 0, 0, 0, 0, rshift(n, 8), band(n, 0xff)) .. body
  local hop = string.char(58, 0, 5, 2, 0, 0, 1, 0)   -- next ICMPv6, 8 bytes: Router Alert (MLD), PadN(0)
  local plen = #hop + #msg
  if 14 + 40 + plen > 1514 then fail("mld2", ("%d records do not fit one 1500-byte packet"):format(n)) end
  local size = 14 + 40 + plen
  local p = ffi.new("uint8_t[?]", size)
  local dst = ip6.addr(M.MLD2_ROUTERS)
  eth.write(p, mac, eth.mac(M.mac(M.MLD2_ROUTERS), "dst", 1), 0x86dd)
  ip6.write(p + 14, src, dst, 0, plen, 1)
  ffi.copy(p + 54, hop, #hop)
  ffi.copy(p + 62, msg, #msg)
  local both = src .. dst
  local acc = ip6.pseudo_sum(cs.sum(ffi.cast("const uint8_t *", both), 32), 58, #msg)
  stack.put16(p + 64, cs.finish(cs.sum(p + 62, #msg, acc)))
  return { bytes = ffi.string(p, size), size = size, l3 = 14, l4 = 62 }
end

-- The link-local address of a MAC (modified EUI-64, RFC 4291 appendix A).
function M.link_local(mac)
  local b = eth.mac(mac, "surge.proto.igmp.link_local: mac", 2)
  local x = { b:byte(1, 6) }
  return ("fe80::%x:%x:%x:%x"):format(bit.bxor(x[1], 2) * 256 + x[2], x[3] * 256 + 0xff, 0xfe00 + x[4],
    x[5] * 256 + x[6])
end

-- An IGMP message as a flow varies it (OTG's igmpv1: version and type
-- nibbles, unused, group); the checksum covers the message alone.
M.fields = { version = { off = 0, bytes = 2, mask = 0xf000 }, type = { off = 0, bytes = 2, mask = 0x0f00 },
             unused = { off = 1, bytes = 1 }, group = { off = 4, bytes = 4 } }
M.checksum = 2
M.pseudo_header = false

function M.decode(p, len, ctx)
  if len < 8 then return "igmp (truncated)", nil, len end
  if ctx and ctx.ip and ctx.ip.payload and ctx.ip.payload >= 8 and ctx.ip.payload <= len then
    len = ctx.ip.payload                -- the message, not the Ethernet padding after it
  end
  local t = p[0]
  local ok = cs.sum(p, len) == 0xffff and "ok" or "BAD"
  local names = { [0x11] = "query", [0x12] = "v1-report", [0x16] = "v2-report", [0x17] = "leave", [0x22] = "v3-report" }
  local text = ("igmp %s csum %s"):format(names[t] or ("type " .. t), ok)
  if t ~= 0x22 then text = text .. " group " .. ip4.addr_text(stack.get32(p + 4))
  else text = text .. (" records %d"):format(stack.get16(p + 6)) end
  return text, nil, len
end

return M
