-- Packet templates: bytes as the standards say, checksums verified by an
-- independent sum, incremental updates equal to a full recomputation.
local ffi = require("ffi")
local bit = require("bit")
local surge = require("surge")

local udp, cs = surge.proto.udp, surge.proto.checksum
local T = {}

local function bytes(s) return ffi.cast("const uint8_t *", s) end

-- Full checksum check: the ones' complement sum over the covered data,
-- checksum included, must be 0xffff.
local function ip_ok(p) return cs.sum(p + 14, 20) == 0xffff end
local function udp_ok(p, size)
  local ulen = size - 34
  local src = ((p[26] * 256 + p[27]) * 256 + p[28]) * 256 + p[29]
  local dst = ((p[30] * 256 + p[31]) * 256 + p[32]) * 256 + p[33]
  local pseudo = bit.rshift(src, 16) + bit.band(src, 0xffff) + bit.rshift(dst, 16)
                 + bit.band(dst, 0xffff) + 17 + ulen
  return cs.sum(p + 34, ulen, pseudo) == 0xffff
end

function T.udp_template_bytes()
  local t = udp{ src = "192.168.1.2", dst = "10.20.30.40", sport = 4660, dport = 22136, size = 64,
                 src_mac = "02:00:00:00:00:aa", dst_mac = "02:00:00:00:00:bb", ttl = 17 }
  assert(#t.bytes == 64 and t.size == 64 and t.l3 == 14 and t.l4 == 34)
  local p = bytes(t.bytes)
  assert(t.bytes:sub(1, 12) == "\2\0\0\0\0\187\2\0\0\0\0\170", "MACs: dst then src")
  assert(p[12] == 0x08 and p[13] == 0x00, "ethertype IPv4")
  assert(p[14] == 0x45 and p[16] * 256 + p[17] == 50, "IPv4 header and total length")
  assert(p[22] == 17 and p[23] == 17, "ttl and protocol")
  assert(t.bytes:sub(27, 34) == "\192\168\1\2\10\20\30\40", "addresses")
  assert(p[34] * 256 + p[35] == 4660 and p[36] * 256 + p[37] == 22136, "ports")
  assert(p[38] * 256 + p[39] == 30, "UDP length")
  assert(ip_ok(p), "IPv4 checksum")
  assert(udp_ok(p, 64), "UDP checksum")
end

function T.checksums_for_many_sizes_and_payloads()
  for size = 42, 200, 7 do
    local t = udp{ size = size, payload = ("\255\1"):rep(100) }
    local p = bytes(t.bytes)
    assert(ip_ok(p) and udp_ok(p, size), "size " .. size)
  end
end

function T.set_sport_keeps_checksum_valid()
  local t = udp{ size = 60, payload = "abc" }
  local buf = ffi.new("uint8_t[60]")
  ffi.copy(buf, t.bytes, 60)
  math.randomseed(7)
  for _ = 1, 2000 do
    local v = math.random(0, 65535)
    udp.set_sport(buf + 34, v)
    assert(udp.sport(buf + 34) == v)
    assert(udp_ok(buf, 60), "checksum wrong after sport " .. v)
    local w = math.random(0, 65535)
    udp.set_dport(buf + 34, w)
    assert(udp.dport(buf + 34) == w and udp_ok(buf, 60), "after dport " .. w)
  end
end

function T.set_src_keeps_ip_checksum_valid()
  local t = udp{ size = 60 }
  local buf = ffi.new("uint8_t[60]")
  ffi.copy(buf, t.bytes, 60)
  for i = 0, 500 do
    local a = (0x0a000000 + i * 7919) % 2^32
    surge.proto.ip4.set_src(buf + 14, a)
    assert(ip_ok(buf), "ip checksum after src " .. a)
  end
end

-- The incremental setters write exactly what a checksum computed from
-- scratch over the new bytes is (RFC 1071), not merely an equivalent ones'
-- complement value: UDP never 0 (0 means "none": a computed 0 goes out as
-- 0xffff), TCP 0..0xfffe. Random headers, 16- and 32-bit fields, and the
-- edge values chosen so that the new checksum is exactly 0 (UDP: 0xffff).
function T.incremental_checksums_equal_recomputed_ones()
  local buf = ffi.new("uint8_t[20]")
  local function scratch(ck, zero_means_none)    -- over 20 bytes, the checksum at ck excluded
    local s = 0
    for i = 0, 19, 2 do if i ~= ck then s = s + buf[i] * 256 + buf[i + 1] end end
    while s > 0xffff do s = bit.band(s, 0xffff) + bit.rshift(s, 16) end
    local c = bit.band(bit.bnot(s), 0xffff)
    if zero_means_none and c == 0 then c = 0xffff end
    return c, s
  end
  local function put(ck, c) buf[ck], buf[ck + 1] = bit.rshift(c, 8), bit.band(c, 0xff) end
  local tcp = surge.proto.tcp
  math.randomseed(11)
  local zeros = { udp = 0, tcp = 0 }
  for n = 1, 20000 do
    for i = 0, 19 do buf[i] = n % 97 == 0 and 0xff or math.random(0, 255) end
    -- UDP (checksum at 6): source port; every 7th time the port that makes the new sum 0xffff
    local v = math.random(0, 65535)
    if n % 7 == 0 then
      buf[0], buf[1] = 0, 0
      local _, rest = scratch(6, true)
      v = bit.band(bit.bnot(rest), 0xffff)      -- rest + v = 0xffff: the computed checksum is 0
    end
    put(6, (scratch(6, true)))
    udp.set_sport(buf, v)
    local want = scratch(6, true)
    if buf[6] * 256 + buf[7] ~= want then
      error(("udp sport %d: checksum %04x, recomputed %04x"):format(v, buf[6] * 256 + buf[7], want))
    end
    if want == 0xffff then zeros.udp = zeros.udp + 1 end
    -- TCP (checksum at 16): a 16-bit and a 32-bit field
    local seq = math.random(0, 2 ^ 32 - 1)
    if n % 7 == 0 then
      buf[4], buf[5], buf[6], buf[7] = 0, 0, 0, 0
      local _, rest = scratch(16)
      seq = bit.band(bit.bnot(rest), 0xffff)     -- the low word alone brings the sum to 0xffff
    end
    put(16, (scratch(16)))
    tcp.set_seq(buf, seq)
    want = scratch(16)
    if buf[16] * 256 + buf[17] ~= want then
      error(("tcp seq %d: checksum %04x, recomputed %04x"):format(seq, buf[16] * 256 + buf[17], want))
    end
    if want == 0 then zeros.tcp = zeros.tcp + 1 end
    tcp.set_window(buf, v)
    want = scratch(16)
    assert(buf[16] * 256 + buf[17] == want, "tcp window")
  end
  assert(zeros.udp > 100 and zeros.tcp > 100, ("edge cases reached: udp %d, tcp %d"):format(zeros.udp, zeros.tcp))
end

local function fails(opts, pattern)
  local ok, err = pcall(function() local t = udp(opts); return t end)
  assert(not ok, "expected an error")
  assert(err:match(pattern), ("'%s' !~ '%s'"):format(err, pattern))
  assert(err:match("test_proto.lua:%d+:"), "error must name the caller's line: " .. err)
end

function T.bad_fields_are_clear_errors()
  fails({ size = 30 }, "size = 30 outside 42%.%.9600")
  fails({ sport = 70000 }, "sport = 70000 outside 0%.%.65535")
  fails({ dst = "10.0.0.300" }, "dst: '10.0.0.300' is not an IPv4 address")
  fails({ src_mac = "02:00:00" }, "src_mac: '02:00:00' is not a MAC address")
  fails({ colour = "red" }, "unknown field 'colour'")
  fails({ ttl = 300 }, "ttl = 300 outside 0..255")
end

return T
