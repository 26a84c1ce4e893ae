-- surge.otg.packet: OTG flows (model 1.3.0) compiled to a surge template,
-- surge.flow fields and a size. Every header choice surge builds, with
-- non-default values in its fields, against bytes written out here by hand
-- from the standards (xx marks a checksum, verified by an independent
-- ones' complement sum below, not surge.proto.checksum); every pattern kind
-- against the first packets' varying bytes computed here; every size kind;
-- and a table of refusals, each with its exact JSON path.
local bit = require("bit")
local ffi = require("ffi")
local surge = require("surge")
local packet = require("surge.otg.packet")

local T = {}

local function unhex(h) return (h:gsub("%s", ""):gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end)) end
local function hex(s) return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) end

-- Ones' complement sum of bytes [i, j] (1-based) of s.
local function osum(s, i, j, acc)
  local x = acc or 0
  for k = i, j, 2 do x = x + s:byte(k) * 256 + (k < j and s:byte(k + 1) or 0) end
  while x > 0xffff do x = x % 65536 + math.floor(x / 65536) end
  return x
end
local function be16(s, off) return s:byte(off + 1) * 256 + s:byte(off + 2) end   -- off 0-based

-- bytes equal to the pattern: hex digits, spaces ignored, "xx" any byte (a checksum)
local function expect_bytes(got, pattern, what, prefix)
  local p = pattern:gsub("%s", "")
  assert(#p % 2 == 0, "odd pattern")
  local n = #p / 2
  if #got < n then error(("%s: %d bytes, expected at least %d"):format(what, #got, n), 2) end
  for i = 1, n do
    local pair = p:sub(2 * i - 1, 2 * i)
    if pair ~= "xx" and got:byte(i) ~= tonumber(pair, 16) then
      error(("%s: byte %d is %02x, expected %s\n got  %s\n want %s"):format(what, i - 1, got:byte(i), pair,
        hex(got:sub(1, n)), p), 2)
    end
  end
  -- the rest (payload) is zeros
  for i = n + 1, prefix and 0 or #got do
    if got:byte(i) ~= 0 then error(("%s: payload byte %d is %02x, not 0"):format(what, i - 1, got:byte(i)), 2) end
  end
end

-- checksums verified from the frame alone; offsets 0-based
local function ip4_ok(s, off) assert(osum(s, off + 1, off + 20) == 0xffff, "IPv4 header checksum") end
local function pseudo4(s, ip, proto, len) return osum(s, ip + 13, ip + 20) + proto + len end
local function pseudo6(s, ip, proto, len) return osum(s, ip + 9, ip + 40) + proto + len end
local function l4_ok(s, off, init, what)
  local v = osum(s, off + 1, #s, init)
  assert(v == 0xffff, ("%s checksum: sum 0x%04x"):format(what, v))
end

local function frames(c, n)
  assert(c.flow, "a flow")
  return c.flow:frames(n)
end

local function compile(packet_list, size, opts)
  return packet.compile({ name = "f", packet = packet_list, size = size }, "flows[0]", opts)
end
local function fixed(n) return { choice = "fixed", fixed = n } end
local function v(x) return { choice = "value", value = x } end
local function hdr(name, body) return { choice = name, [name] = body or {} } end

-------------------------------------------------------------------------------
-- Header choices: template bytes.

function T.ethernet_vlan_ipv4_udp_fields()
  local c = compile({
    hdr("ethernet", { dst = v("02:00:00:00:00:02"), src = v("02:00:00:00:00:01") }),
    hdr("vlan", { priority = v(5), cfi = v(1), id = v(0x123) }),
    hdr("ipv4", { priority = { choice = "dscp", dscp = { phb = v(46), ecn = v(1) } }, identification = v(0x1234),
                  dont_fragment = v(1), time_to_live = v(33), src = v("192.0.2.1"), dst = v("198.51.100.2") }),
    hdr("udp", { src_port = v(1234), dst_port = v(5678) }) }, fixed(64))
  local s = c.template.bytes
  assert(#s == 60 and c.size == 60, "64 bytes on the wire are 60 without the FCS")
  expect_bytes(s, "020000000002 020000000001 8100 b123 0800" ..
    "45 b9 002a 1234 4000 21 11 xxxx c0000201 c6336402" ..
    "04d2 162e 0016 xxxx", "eth/vlan/ipv4/udp")
  ip4_ok(s, 18)
  l4_ok(s, 38, pseudo4(s, 18, 17, 22), "UDP")
  assert(#c.fields == 0 and c.flow == nil, "nothing varies")
end

function T.ipv4_priority_raw_and_tos_and_flags()
  local c = compile({ hdr("ethernet"), hdr("ipv4", { priority = { choice = "raw", raw = v(0xe0) },
    reserved = v(1), more_fragments = v(1), fragment_offset = v(31), header_length = v(6), version = v(5),
    protocol = v(200), total_length = v(1000) }) }, fixed(64))
  expect_bytes(c.template.bytes, "000000000000 000000000000 0800 56 e0 03e8 0000 a01f 40 c8 xxxx 00000000 00000000",
    "ipv4 raw priority")
  ip4_ok(c.template.bytes, 14)
  c = compile({ hdr("ethernet"), hdr("ipv4", { priority = { choice = "tos", tos = { precedence = v(5), delay = v(1),
    monetary = v(1) } } }) }, fixed(64))
  -- precedence 101, delay 1, throughput 0, reliability 0, monetary 1, unused 0: 1011 0010
  expect_bytes(c.template.bytes, "000000000000 000000000000 0800 45 b2 002e 0000 0000 40 3d xxxx 00000000 00000000",
    "ipv4 tos bits; protocol auto with nothing after: 61")
end

function T.ipv6_tcp_fields()
  local c = compile({ hdr("ethernet"),
    hdr("ipv6", { traffic_class = v(0xb8), flow_label = v(0x12345), hop_limit = v(9), src = v("2001:db8::1"),
                  dst = v("2001:db8::2") }),
    hdr("tcp", { src_port = v(80), dst_port = v(443), seq_num = v(0x01020304), ack_num = v(0x0a0b0c0d),
                 ecn_ns = v(1), ctl_ack = v(1), ctl_syn = v(1), window = v(0x1000) }) }, fixed(100))
  local s = c.template.bytes
  expect_bytes(s, "000000000000 000000000000 86dd 6b812345 002a 06 09" ..
    "20010db8000000000000000000000001 20010db8000000000000000000000002" ..
    "0050 01bb 01020304 0a0b0c0d 51 12 1000 xxxx 0000", "ipv6/tcp")
  l4_ok(s, 54, pseudo6(s, 14, 6, 42), "TCP")
end

function T.ethernetpause_and_pfcpause()
  local c = compile({ hdr("ethernetpause", { src = v("02:00:00:00:00:01"), time = v(0xffff) }) }, fixed(64))
  expect_bytes(c.template.bytes, "0180c2000001 020000000001 8808 0001 ffff", "802.3x pause")
  c = compile({ hdr("pfcpause", { src = v("02:00:00:00:00:01"), class_enable_vector = v(0x81),
    pause_class_0 = v(10), pause_class_7 = v(0xffff) }) }, fixed(64))
  expect_bytes(c.template.bytes, "0180c2000001 020000000001 8808 0101 0081 000a 0000 0000 0000 0000 0000 0000 ffff",
    "802.1Qbb PFC")
end

function T.arp_fields()
  local c = compile({ hdr("ethernet", { dst = v("ff:ff:ff:ff:ff:ff") }), hdr("arp", { operation = v(2),
    sender_hardware_addr = v("02:00:00:00:00:01"), sender_protocol_addr = v("10.0.0.1"),
    target_hardware_addr = v("02:00:00:00:00:02"), target_protocol_addr = v("10.0.0.2") }) }, fixed(64))
  expect_bytes(c.template.bytes, "ffffffffffff 000000000000 0806 0001 0800 06 04 0002 020000000001 0a000001" ..
    "020000000002 0a000002", "arp")
end

function T.icmp_and_icmpv6_echo()
  local c = compile({ hdr("ethernet"), hdr("ipv4"),
    { choice = "icmp", icmp = { choice = "echo", echo = { identifier = v(7), sequence_number = v(9) } } } }, fixed(64))
  local s = c.template.bytes
  expect_bytes(s, "000000000000 000000000000 0800 45 00 002e 0000 0000 40 01 xxxx 00000000 00000000" ..
    "08 00 xxxx 0007 0009", "icmp echo")
  l4_ok(s, 34, 0, "ICMP")
  c = compile({ hdr("ethernet"), hdr("ipv6", { src = v("fe80::1"), dst = v("fe80::2") }),
    { choice = "icmpv6", icmpv6 = { echo = { identifier = v(7), sequence_number = v(9) } } } }, fixed(80))
  s = c.template.bytes
  expect_bytes(s, "000000000000 000000000000 86dd 60000000 0016 3a 40" ..
    "fe800000000000000000000000000001 fe800000000000000000000000000002 80 00 xxxx 0007 0009", "icmpv6 echo")
  l4_ok(s, 54, pseudo6(s, 14, 58, 22), "ICMPv6")
end

function T.gre_with_checksum_carries_ipv6()
  local c = compile({ hdr("ethernet"), hdr("ipv4"), hdr("gre", { checksum_present = v(1), protocol = v(0x86dd) }),
    hdr("ipv6") }, fixed(100))
  local s = c.template.bytes
  expect_bytes(s, "000000000000 000000000000 0800 45 00 0052 0000 0000 40 2f xxxx 00000000 00000000" ..
    "8000 86dd xxxx 0000 60000000 000e 3b 40" .. ("00"):rep(32), "gre+checksum")
  l4_ok(s, 34, 0, "GRE")
end

function T.gtpv1_and_gtpv2()
  local c = compile({ hdr("ethernet"), hdr("ipv4"), hdr("udp", { src_port = v(2152), dst_port = v(2152) }),
    hdr("gtpv1", { message_type = v(255), teid = v(0x11223344), s_flag = v(1), squence_number = v(7) }),
    hdr("ipv4", { src = v("10.9.0.1"), dst = v("10.9.0.2") }) }, fixed(100))
  local s = c.template.bytes
  -- 96 bytes: udp 62, gtp length = 96 - 42 - 8 = 46, inner ip 96 - 54 = 42
  expect_bytes(s, "000000000000 000000000000 0800 45 00 0052 0000 0000 40 11 xxxx 00000000 00000000" ..
    "0868 0868 003e xxxx 32 ff 002e 11223344 0007 00 00" ..
    "45 00 002a 0000 0000 40 3d xxxx 0a090001 0a090002", "gtpv1")
  ip4_ok(s, 54)
  l4_ok(s, 34, pseudo4(s, 14, 17, 62), "UDP over GTP")
  c = compile({ hdr("ethernet"), hdr("ipv4"), hdr("udp", { src_port = v(2123), dst_port = v(2123) }),
    hdr("gtpv2", { teid_flag = v(1), message_type = v(32), teid = v(5), sequence_number = v(0x010203) }) }, fixed(64))
  s = c.template.bytes
  -- 60 bytes: gtp at 42, length = 60 - 42 - 4 = 14
  expect_bytes(s, "000000000000 000000000000 0800 45 00 002e 0000 0000 40 11 xxxx 00000000 00000000" ..
    "084b 084b 001a xxxx 48 20 000e 00000005 010203 00", "gtpv2")
  c = compile({ hdr("ethernet"), hdr("ipv4"), hdr("udp"), hdr("gtpv2", { sequence_number = v(9) }) }, fixed(64))
  expect_bytes(c.template.bytes:sub(43), "40 00 000e 000009 00", "gtpv2 without a TEID: 8 bytes", true)
end

function T.ppp_igmpv1_mpls_vxlan_custom()
  local c = compile({ hdr("ethernet"), hdr("ppp"), hdr("ipv4") }, fixed(64))
  expect_bytes(c.template.bytes, "000000000000 000000000000 880b ff 03 0021 45 00 002a 0000 0000 40 3d xxxx" ..
    "00000000 00000000", "ppp")
  c = compile({ hdr("ethernet"), hdr("ipv4", { dst = v("239.1.1.1") }),
    hdr("igmpv1", { type = v(2), group_address = v("239.1.1.1") }) }, fixed(64))
  local s = c.template.bytes
  expect_bytes(s, "000000000000 000000000000 0800 45 00 002e 0000 0000 40 02 xxxx 00000000 ef010101" ..
    "12 00 xxxx ef010101", "igmpv1")
  l4_ok(s, 34, 0, "IGMP")
  c = compile({ hdr("ethernet"), hdr("mpls", { label = v(100), traffic_class = v(5), time_to_live = v(9) }),
    hdr("mpls", { label = v(200) }), hdr("ipv4") }, fixed(64))
  expect_bytes(c.template.bytes, "000000000000 000000000000 8847 00064a09 000c8140 45", "mpls: bottom of stack auto", true)
  c = compile({ hdr("ethernet"), hdr("ipv4"), hdr("udp", { dst_port = v(4789) }), hdr("vxlan", { vni = v(0x123456) }),
    hdr("ethernet", { src = v("02:00:00:00:00:0a") }), hdr("ipv4") }, fixed(100))
  expect_bytes(c.template.bytes:sub(43), "08 000000 123456 00 000000000000 02000000000a 0800 45", "vxlan", true)
  c = compile({ hdr("ethernet", { ether_type = v(0x88b5) }), hdr("custom", { bytes = "de:ad be ef" }) }, fixed(64))
  expect_bytes(c.template.bytes, "000000000000 000000000000 88b5 deadbeef", "custom")
end

function T.defaults_as_the_model_says()
  -- an empty packet is one ethernet header; 64 bytes; every field its default
  local c = packet.compile({ name = "f" }, "flows[0]")
  expect_bytes(c.template.bytes, "000000000000 000000000000 ffff", "ethernet alone: ether_type auto's default")
  assert(c.size == 60)
  -- the destination MAC the server resolved (auto)
  c = compile({ hdr("ethernet"), hdr("ipv4") }, nil, { dst_mac = "02:aa:00:00:00:01" })
  expect_bytes(c.template.bytes:sub(1, 6), "02aa00000001", "auto dst from the resolver", true)
  -- a payload the server gives (its measurement tag): after the headers, in the checksums
  c = compile({ hdr("ethernet"), hdr("ipv4"), hdr("udp") }, fixed(64), { payload = "TAG\1" })
  local s = c.template.bytes
  assert(s:sub(43, 46) == "TAG\1", hex(s:sub(43, 46)))
  l4_ok(s, 34, pseudo4(s, 14, 17, 26), "UDP over the payload")
  -- JSON null is an absent value
  local json = require("surge.results.json")
  c = compile({ hdr("ethernet", { src = json.null }), hdr("ipv4", { time_to_live = json.null }) }, fixed(64))
  expect_bytes(c.template.bytes:sub(15, 24), "45 00 002e 0000 0000 40", "nulls are defaults", true)
end

function T.tpid_goes_before_the_tag_and_checksum_choices()
  -- QinQ: the outer tag's TPID in the Ethernet type, the inner tag's (default 0x8100) in the outer tag's
  local c = compile({ hdr("ethernet"), hdr("vlan", { id = v(10), tpid = v(0x88a8) }), hdr("vlan", { id = v(20) }),
    hdr("ipv6") }, fixed(80))
  expect_bytes(c.template.bytes:sub(13, 22), "88a8 000a 8100 0014 86dd", "qinq", true)
  -- an explicit ether_type wins over the tag's TPID
  c = compile({ hdr("ethernet", { ether_type = v(0x9100) }), hdr("vlan", { tpid = v(0x88a8) }), hdr("ipv4") }, fixed(64))
  expect_bytes(c.template.bytes:sub(13, 14), "9100", "set ether_type", true)
  -- checksums: bad is the good one with its low byte inverted; custom as given
  local good = compile({ hdr("ethernet"), hdr("ipv4"), hdr("udp", { src_port = v(9) }) }, fixed(64)).template.bytes
  c = compile({ hdr("ethernet"), hdr("ipv4", { header_checksum = { choice = "generated", generated = "bad" } }),
    hdr("udp", { src_port = v(9), checksum = { choice = "custom", custom = 0x1234 } }) }, fixed(64))
  local s = c.template.bytes
  assert(be16(s, 24) == bit.bxor(be16(good, 24), 0x00ff), "IPv4 bad checksum")
  assert(be16(s, 40) == 0x1234, "UDP custom checksum")
  assert(osum(s, 15, 34) ~= 0xffff, "the bad checksum is bad")
  -- bad stays bad while a field varies (the incremental updates keep the difference)
  c = compile({ hdr("ethernet"), hdr("ipv4", { dst = { choice = "increment", increment = { count = 3 } } }),
    hdr("tcp", { checksum = { choice = "generated", generated = "bad" } }) }, fixed(64))
  for _, f in ipairs(frames(c, 3)) do
    ip4_ok(f, 14)
    assert(osum(f, 35, #f, pseudo4(f, 14, 6, 26)) ~= 0xffff, "TCP checksum stays bad")
  end
end

-- Each OTG field a pattern may vary names a surge.proto field (offset,
-- width, mask) that must cover exactly the field's bits on the wire: the
-- two tables are written independently, this holds them together.
function T.flow_fields_cover_the_header_bits()
  local checked = 0
  local function check_field(hname, parts, fd, flags)
    local pos, f = fd[2], fd.f
    if type(pos) == "function" then pos = pos(flags) end
    if type(f) == "function" then f = f(flags) end
    if not f or pos == nil then return end
    local part = parts[fd.part or 1][1]
    local def = require("surge.proto." .. part).fields[f]
    assert(def, ("%s.%s: surge.proto.%s has no field %s"):format(hname, fd[1], part, f))
    local want, got = {}, {}
    local from, n = pos, fd[3]
    if fd.kind == "ipv6" then from, n = pos + 96, 32 end     -- surge.flow varies the low 32 bits
    for b = from, from + n - 1 do want[b] = true end
    local mask = def.mask or (2 ^ (8 * def.bytes) - 1)
    for i = 0, 8 * def.bytes - 1 do
      if math.floor(mask / 2 ^ (8 * def.bytes - 1 - i)) % 2 == 1 then got[def.off * 8 + i] = true end
    end
    for b in pairs(want) do assert(got[b], ("%s.%s: bit %d not in %s.%s"):format(hname, fd[1], b, part, f)) end
    for b in pairs(got) do assert(want[b], ("%s.%s: %s.%s also covers bit %d"):format(hname, fd[1], part, f, b)) end
    checked = checked + 1
  end
  for hname, h in pairs(packet.HEADERS) do
    local lists = h.choice and { h.choice.echo } or { h.fields }
    for _, list in ipairs(lists) do
      for _, fd in ipairs(list) do
        if fd.special == "ipv4_priority" then
          for _, sub in pairs(packet.PRIORITY) do
            for _, sf in ipairs(sub) do check_field(hname, h.parts, sf, {}) end
          end
        elseif not fd.special then
          check_field(hname, h.parts, fd, { teid_flag = 1 })
          check_field(hname, h.parts, fd, { teid_flag = 0 })
        end
      end
    end
  end
  assert(checked > 120, checked)
end

function T.fields_and_sizes_together()
  local c = compile({ hdr("ethernet"), hdr("ipv4", { src = { choice = "increment", increment = { start = "10.0.0.1", count = 5 } } }),
    hdr("udp", { src_port = v(1), dst_port = { choice = "values", values = { 7, 8 } } }) },
    { choice = "increment", increment = { start = 70, ["end"] = 100, step = 10 } })
  local t = c.template
  local buf = ffi.new("uint8_t[?]", t.size)
  for i = 0, 9 do
    ffi.copy(buf, t.bytes, t.size)
    c.flow:next(buf)
    local len = c.size:next(buf)
    local s = ffi.string(buf, len)
    assert(len == 66 + 10 * (i % 4), ("packet %d: %d bytes"):format(i, len))
    assert(s:byte(30) == 1 + i % 5 and be16(s, 36) == 7 + i % 2, "fields")
    assert(be16(s, 16) == len - 14 and be16(s, 38) == len - 34, "lengths")
    ip4_ok(s, 14)
    l4_ok(s, 34, pseudo4(s, 14, 17, len - 34), "UDP")
  end
end

-------------------------------------------------------------------------------
-- Patterns: the first packets' varying bytes.

function T.patterns_values_increment_decrement()
  local c = compile({
    hdr("ethernet", { src = { choice = "decrement", decrement = { start = "02:00:00:00:00:05", step = "00:00:00:00:00:02",
                                                                   count = 3 } } }),
    hdr("vlan", { id = { choice = "increment", increment = { start = 4094, step = 1, count = 4 } } }),
    hdr("ipv4", { dst = { choice = "increment", increment = { start = "10.0.0.2", step = "0.0.0.1", count = 5 } },
                  time_to_live = { choice = "decrement", decrement = { start = 1, step = 1, count = 3 } },
                  priority = { choice = "dscp", dscp = { phb = { choice = "values", values = { 10, 46, 0 } } } } }),
    hdr("udp", { src_port = v(1), dst_port = { choice = "values", values = { 7, 8, 9 } } }) }, fixed(128))
  assert(c.combine == "cycle" and c.flow:count() == 60, "counts 3, 4, 5, 3, 3, 3: the sequence repeats after 60")
  local want = {
    -- src low byte, vlan id, dst low byte, ttl, dscp, udp dport: each pattern wraps at its own count
    { 5, 4094, 2, 1, 10, 7 }, { 3, 4095, 3, 0, 46, 8 }, { 1, 0, 4, 255, 0, 9 }, { 5, 1, 5, 1, 10, 7 },
    { 3, 4094, 6, 0, 46, 8 }, { 1, 4095, 2, 255, 0, 9 },
  }
  for i, s in ipairs(frames(c, #want)) do
    local w = want[i]
    local got = { s:byte(12), be16(s, 14) % 4096, s:byte(22 + 16), s:byte(18 + 9), math.floor(s:byte(18 + 2) / 4),
                  be16(s, 38 + 2) }
    for k = 1, #w do
      if got[k] ~= w[k] then error(("packet %d field %d: %d, expected %d"):format(i - 1, k, got[k], w[k])) end
    end
    assert(be16(s, 14) - be16(s, 14) % 4096 == 0, "vlan pcp/dei stay 0")
    assert(s:byte(18 + 2) % 4 == 0, "ECN stays 0")
    ip4_ok(s, 18)
    l4_ok(s, 38, pseudo4(s, 18, 17, 128 - 4 - 38), "UDP")
  end
end

function T.patterns_ipv6_low_bits_and_bit_fields()
  local c = compile({ hdr("ethernet"),
    hdr("ipv6", { dst = { choice = "increment", increment = { start = "2001:db8::fffe", step = "::1", count = 3 } },
                  flow_label = { choice = "values", values = { 1, 0xfffff } } }),
    hdr("tcp", { ctl_syn = { choice = "values", values = { 1, 0 } }, ctl_fin = { choice = "values", values = { 0, 1, 1 } },
                 seq_num = { choice = "increment", increment = { start = 4294967295, step = 1, count = 2 } } }) },
    fixed(100))
  local want = { { 0xfffe, 1, 1, 0, 4294967295 }, { 0xffff, 0xfffff, 0, 1, 0 }, { 0x10000, 1, 1, 1, 4294967295 } }
  for i, s in ipairs(frames(c, 3)) do
    local low = be16(s, 14 + 36) * 65536 + be16(s, 14 + 38)
    local got = { low, be16(s, 14) % 16 * 65536 + be16(s, 16), math.floor(s:byte(54 + 14) / 2) % 2,
                  s:byte(54 + 14) % 2, be16(s, 54 + 4) * 65536 + be16(s, 54 + 6) }
    for k = 1, #want[i] do
      if got[k] ~= want[i][k] then error(("packet %d field %d: %d, expected %d"):format(i - 1, k, got[k], want[i][k])) end
    end
    assert(s:byte(54 + 13) == 0x50, "data offset 5 kept")
    l4_ok(s, 54, pseudo6(s, 14, 6, 42), "TCP")
  end
end

function T.patterns_in_new_headers_keep_checksums()
  local c = compile({ hdr("ethernet"), hdr("ipv4"), hdr("udp", { src_port = v(2152), dst_port = v(2152) }),
    hdr("gtpv1", { teid = { choice = "increment", increment = { start = 100, step = 10, count = 3 } } }),
    hdr("ipv4", { src = { choice = "values", values = { "10.0.0.1", "10.0.0.9" } } }),
    hdr("udp", { src_port = v(5), dst_port = v(6) }) }, fixed(128))
  local want = { { 100, 1 }, { 110, 9 }, { 120, 1 }, { 100, 9 } }
  for i, s in ipairs(frames(c, 4)) do
    local teid = be16(s, 46) * 65536 + be16(s, 48)
    assert(teid == want[i][1] and s:byte(50 + 16) == want[i][2], ("packet %d: teid %d src .%d"):format(i - 1, teid, s:byte(67)))
    ip4_ok(s, 50)
    l4_ok(s, 34, pseudo4(s, 14, 17, 124 - 34), "outer UDP")
    l4_ok(s, 70, pseudo4(s, 50, 17, 124 - 70), "inner UDP")
  end
  c = compile({ hdr("ethernet"), hdr("ipv4"),
    hdr("igmpv1", { group_address = { choice = "increment", increment = { start = "239.0.0.1", count = 2 } } }) },
    fixed(64))
  for i, s in ipairs(frames(c, 2)) do
    assert(s:byte(42) == i, "group")
    l4_ok(s, 34, 0, "IGMP")
  end
  c = compile({ hdr("ethernet"), hdr("mpls", { label = { choice = "increment", increment = { start = 1048574, count = 3 } } }),
    hdr("ipv4") }, fixed(64))
  for i, s in ipairs(frames(c, 3)) do
    local lab = math.floor((be16(s, 14) * 65536 + be16(s, 16)) / 4096)
    assert(lab == ({ 1048574, 1048575, 0 })[i], "label wraps at 20 bits")
    assert(s:byte(18) == 64 and s:byte(17) % 2 == 1, "ttl and S kept")
  end
end

function T.metric_tags_are_frame_bit_offsets()
  local c = compile({ hdr("ethernet"), hdr("vlan", { id = { choice = "value", value = 5,
      metric_tags = { { name = "vid" } } } }),
    hdr("ipv4", { dst = { choice = "value", value = "10.0.0.1", metric_tags = { { name = "dst lo", offset = 24, length = 8 } } } }),
    hdr("custom", { bytes = "0102", metric_tags = { { name = "c", offset = 4, length = 4 } } }) }, fixed(64))
  local want = { { "vid", 14 * 8 + 4, 12 }, { "dst lo", (18 + 16) * 8 + 24, 8 }, { "c", 38 * 8 + 4, 4 } }
  assert(#c.tags == 3, #c.tags)
  for i, w in ipairs(want) do
    local t = c.tags[i]
    assert(t.name == w[1] and t.offset == w[2] and t.length == w[3],
      ("tag %d: %s %d %d"):format(i, t.name, t.offset, t.length))
  end
end

-------------------------------------------------------------------------------
-- Sizes.

local function udp_flow(size)
  return compile({ hdr("ethernet"), hdr("ipv4"), hdr("udp", { src_port = v(1), dst_port = v(2) }) }, size)
end

function T.size_kinds()
  local c = udp_flow(fixed(1518))
  assert(c.size == 1514 and c.template.size == 1514)
  c = udp_flow({ choice = "increment", increment = { start = 64, ["end"] = 70, step = 3 } })
  assert(type(c.size) == "table" and c.template.size == 66, "bound to the largest: 70 - 4")
  local fr = c.size:frames(4)
  for i, want in ipairs({ 60, 63, 66, 60 }) do
    local s = fr[i]:sub(1, want)
    assert(c.size._t[(i - 1) % c.size.n] == want, ("size %d: %d"):format(i, c.size._t[(i - 1) % c.size.n]))
    assert(be16(s, 16) == want - 14, "IPv4 total length follows")
    ip4_ok(s, 14)
    l4_ok(s, 34, pseudo4(s, 14, 17, want - 34), "UDP")
  end
  c = udp_flow({ choice = "random", random = { min = 100, max = 200 } })
  assert(c.size.min >= 96 and c.size.largest <= 196 and c.template.size == 196)
  c = udp_flow({ choice = "weight_pairs", weight_pairs = { choice = "predefined", predefined = "imix" } })
  local k = c.size.counts
  assert(k[60] == 7 * k[1514] and k[566] == 4 * k[1514] and k[1514] > 0, "imix 7:4:1 less the FCS")
  c = udp_flow({ choice = "weight_pairs", weight_pairs = { choice = "custom", custom = { { size = 100, weight = 1 },
    { size = 200, weight = 3 } } } })
  k = c.size.counts
  assert(k[196] == 3 * k[96] and k[96] > 0, "custom pairs 1:3")
  c = udp_flow({ choice = "weight_pairs", weight_pairs = { predefined = "ipsec_imix" } })
  assert(c.size.counts[86] and c.size.counts[1414], "ipsec imix sizes less the FCS")
end

-------------------------------------------------------------------------------
-- Refusals: one error, a table with the exact path.

local E = "flows[0]"
local refusals = {
  { { hdr("ethernet"), hdr("rsvp") }, nil, E .. ".packet[1].rsvp", "not implemented by surge" },
  { { hdr("snmpv2c") }, nil, E .. ".packet[0].snmpv2c", "not implemented by surge" },
  { { { choice = "foo" } }, nil, E .. ".packet[0].choice", "not a flow header" },
  { { hdr("ethernet"), hdr("ipv4", { bogus = v(1) }) }, nil, E .. ".packet[1].ipv4.bogus", "unknown field" },
  { { hdr("ethernet"), hdr("ipv4", { dst = { choice = "increment", increment = { start = "1.1.1.1", count = 0 } } }) },
    nil, E .. ".packet[1].ipv4.dst.increment.count", "at least one value" },
  { { hdr("ethernet"), hdr("ipv6", { dst = { choice = "increment", increment = { step = "::1:0:0:0", count = 2 } } }) },
    nil, E .. ".packet[1].ipv6.dst.increment.step", "low 32 bits" },
  { { hdr("ethernet"), hdr("ipv6", { src = { choice = "increment", increment = { start = "::ffff:ffff", count = 2 } } }) },
    nil, E .. ".packet[1].ipv6.src.increment.count", "low 32 bits" },
  { { hdr("ethernet"), hdr("ipv6", { src = { choice = "values", values = { "::1", "1::1" } } }) },
    nil, E .. ".packet[1].ipv6.src.values[1]", "upper 96 bits" },
  { { hdr("ethernet"), hdr("vlan", { id = v(4096) }) }, nil, E .. ".packet[1].vlan.id.value", "0..4095" },
  { { hdr("ethernet", { src = v("02:00:00:00:00") }) }, nil, E .. ".packet[0].ethernet.src.value", "not a MAC" },
  { { hdr("ethernet"), hdr("ipv4", { dst = v(5) }) }, nil, E .. ".packet[1].ipv4.dst.value", "not an IPv4" },
  { { hdr("ethernet"), hdr("ipv4", { options = { { choice = "router_alert" } } }) }, nil, E .. ".packet[1].ipv4.options",
    "not implemented by surge" },
  { { hdr("ethernet"), hdr("ipv4"), hdr("udp"), hdr("gtpv1", { extension_headers = { {} } }) }, nil,
    E .. ".packet[3].gtpv1.extension_headers", "not implemented by surge" },
  { { hdr("ethernet"), hdr("ipv4"), hdr("udp"), hdr("gtpv1", { e_flag = { choice = "values", values = { 0, 1 } } }) }, nil,
    E .. ".packet[3].gtpv1.e_flag", "header's length" },
  { { hdr("ethernet"), hdr("vlan", { tpid = { choice = "values", values = { 0x8100, 0x88a8 } } }) }, nil,
    E .. ".packet[1].vlan.tpid", "ether_type" },
  { { hdr("ethernet"), hdr("ipv4"), hdr("udp", { src_port = { choice = "values", values = { 1, 2 } },
    checksum = { choice = "custom", custom = 5 } }) }, nil, E .. ".packet[2].udp.checksum", "custom checksum" },
  { { hdr("ethernet", { pfc_queue = v(3) }) }, nil, E .. ".packet[0].ethernet.pfc_queue", "not implemented by surge" },
  { { hdr("ethernet"), hdr("ipv4"), hdr("tcp") }, fixed(57), E .. ".size.fixed", "cannot hold the headers" },
  { { hdr("ethernet") }, { choice = "fixed", fixed = 9700 }, E .. ".size.fixed", "largest frame" },
  { { hdr("ethernet") }, { choice = "increment", increment = { step = 0 } }, E .. ".size.increment.step", "never moves" },
  { { hdr("ethernet") }, { choice = "weight_pairs", weight_pairs = { predefined = "jumbo" } },
    E .. ".size.weight_pairs.predefined", "not imix" },
  { { hdr("ethernet") }, { choice = "bogus" }, E .. ".size.choice", "not fixed" },
  { { hdr("ethernet"), hdr("ethernetpause") }, nil, E .. ".packet[1].ethernetpause", "first header" },
  { { hdr("ethernet"), hdr("ipv4", { time_to_live = { choice = "auto" } }) }, nil,
    E .. ".packet[1].ipv4.time_to_live.choice", "auto is not a choice" },
  { { hdr("ethernet"), hdr("ipv4"), hdr("udp", { length = v(100) }) }, { choice = "random", random = {} },
    E .. ".packet[2].udp.length", "varying frame size" },
  { { hdr("ethernet"), hdr("ipv4"), hdr("udp"), hdr("gtpv1") }, { choice = "random", random = {} },
    E .. ".packet[3].gtpv1.message_length", "fixed frame size" },
  { { hdr("ethernet"), hdr("ipv4", { dst = { choice = "value", value = "1.1.1.1",
    metric_tags = { { name = "x", offset = 32 } } } }) }, nil, E .. ".packet[1].ipv4.dst.metric_tags[0].offset", "0..31" },
  { { hdr("ethernet", { src = { choice = "increment", increment = { start = "ff:ff:ff:ff:ff:ff", count = 2000000 } } }) },
    nil, E .. ".packet[0].ethernet.src.increment.count", "cannot wrap" },
  { { hdr("ethernet"), hdr("ipv4"), hdr("udp", { src_port = { choice = "values", values = {} } }) }, nil,
    E .. ".packet[2].udp.src_port.values", "empty" },
  { { hdr("ethernet"), hdr("ipv4"), { choice = "icmp", icmp = { choice = "unreachable" } } }, nil,
    E .. ".packet[2].icmp.choice", "not echo" },
  { { hdr("ethernet"), hdr("custom", { bytes = "0g" }) }, nil, E .. ".packet[1].custom.bytes", "hex bytes" },
  { { hdr("ethernet"), hdr("ipv4"), hdr("gre", { checksum_present = v(1) }),
      hdr("ipv4", { src = { choice = "values", values = { "1.1.1.1", "1.1.1.2" } } }) }, fixed(100),
    E .. ".packet[2].gre.checksum", "GRE checksum" },
  { { hdr("ethernet"), hdr("ipv4", { dst = { choice = "bogus" } }) }, nil, E .. ".packet[1].ipv4.dst.choice", "not one of" },
  { { hdr("ethernet", {}), { choice = "ipv4", ipv6 = {} } }, nil, E .. ".packet[1].ipv6", "the choice is ipv4" },
  { { hdr("ethernet"), hdr("ipv4"), hdr("udp", { dst_port = { choice = "increment", increment = { step = -1, count = 2 } } }) },
    nil, E .. ".packet[2].udp.dst_port.increment.step", "not an integer" },
  { { hdr("ethernet"), hdr("udp") }, nil, E .. ".packet", "needs an IPv4 or IPv6 header" },
}

function T.refusals_name_their_path()
  for i, r in ipairs(refusals) do
    local ok, err = pcall(compile, r[1], r[2])
    if ok then error(("refusal %d (%s): compiled"):format(i, r[3])) end
    if type(err) ~= "table" then error(("refusal %d: not a table error: %s"):format(i, tostring(err))) end
    if err.path ~= r[3] then error(("refusal %d: path %s, expected %s (%s)"):format(i, err.path, r[3], err.message)) end
    if not err.message:find(r[4], 1, true) then
      error(("refusal %d (%s): message %q lacks %q"):format(i, r[3], err.message, r[4]))
    end
  end
  -- not a flow at all
  local ok, err = pcall(packet.compile, "x", "flows[3]")
  assert(not ok and err.path == "flows[3]", "a flow that is not an object")
  ok, err = pcall(packet.compile, { packet = { 1 } }, "flows[3]")
  assert(not ok and err.path == "flows[3].packet[0]", tostring(err.path))
end

-- surge show decodes the new headers (decode is what `surge show` prints)
function T.decode_new_headers()
  local cases = {
    { { hdr("ethernet"), hdr("ipv4"), hdr("udp", { dst_port = v(2152) }), hdr("gtpv1", { teid = v(9), message_type = v(255) }),
        hdr("ipv4") }, "gtpv1 teid 9 type 255 len 46 flags 0x30 | ip4 " },
    { { hdr("ethernet"), hdr("ipv4"), hdr("udp", { dst_port = v(2123) }), hdr("gtpv2", { teid_flag = v(1), teid = v(3),
        sequence_number = v(4), message_type = v(1) }) }, "gtpv2 type 1 len 50 teid 3 seq 4" },
    { { hdr("ethernet"), hdr("ppp"), hdr("ipv6") }, "ppp addr 0xff ctrl 0x03 proto 0x0057 | ip6 " },
    { { hdr("ethernetpause", { time = v(7) }) }, "pause time 7" },
    { { hdr("pfcpause", { class_enable_vector = v(1), pause_class_0 = v(5) }) }, "pfc enable 0x0001 times 5/0/0/0/0/0/0/0" },
  }
  for _, cse in ipairs(cases) do
    local text = surge.proto.decode(compile(cse[1], fixed(100)).template.bytes)
    assert(text:find(cse[2], 1, true), ("decode: %q lacks %q"):format(text, cse[2]))
  end
end

-- The new surge.proto layers on their own (what a Lua script writes)
function T.new_proto_layers()
  local L = surge.proto.layer
  local t = surge.proto.stack{ L.eth{}, L.ip4{}, L.udp{ sport = 2152 }, L.gtpv1{ teid = 7, seq = 3 }, L.ip4{}, L.udp{},
                               size = 100 }
  -- udp dport from the gtpv1 layer (2152); surge sizes have no FCS: udp 100 - 34, gtp 100 - 42 - 8
  expect_bytes(t.bytes:sub(35, 58), "0868 0868 0042 xxxx 32 ff 0032 00000007 0003 00 00", "L.gtpv1", true)
  t = surge.proto.stack{ L.eth{}, L.ip4{}, L.udp{}, L.gtpv2{ type = 32, teid = 5, seq = 9 }, size = 64 }
  expect_bytes(t.bytes:sub(37, 54), "084b xxxx xxxx 48 20 0012 00000005 000009 00", "L.gtpv2", true)
  t = surge.proto.stack{ L.eth{}, L.ppp{}, L.ip6{ proto = 59 }, size = 64 }
  expect_bytes(t.bytes:sub(13, 19), "880b ff 03 0057 60", "L.ppp", true)
  t = surge.proto.stack{ L.eth{ dst = surge.proto.pause.DST }, L.pause{ time = 5 } }
  expect_bytes(t.bytes, "0180c2000001 020000000001 8808 0001 0005", "L.pause")
  t = surge.proto.stack{ L.eth{ dst = surge.proto.pause.DST }, L.pfc{ enable = 8, times = { [3] = 100 } } }
  expect_bytes(t.bytes, "0180c2000001 020000000001 8808 0101 0008 0000 0000 0000 0064 0000 0000 0000 0000", "L.pfc")
  t = surge.proto.stack{ L.eth{ type = 0x88b5 }, L.raw{ hex = "01:02 03" } }
  expect_bytes(t.bytes:sub(13), "88b5 010203", "L.raw")
  for _, bad in ipairs({ function() local l = L.gtpv1{ teid = -1 } return l end, function() local l = L.gtpv2{ seq = 2 ^ 24 } return l end,
                         function() local l = L.pfc{ times = { [8] = 1 } } return l end, function() local l = L.raw{ hex = "123" } return l end,
                         function() local l = L.ppp{ colour = 1 } return l end, function() local l = L.pause{ time = 65536 } return l end }) do
    local ok, e = pcall(bad)
    assert(not ok and tostring(e):find("test_otg_packet.lua:%d+: surge.proto.%a+"), tostring(e))
  end
  local ok, e = pcall(surge.proto.stack, { L.eth{}, L.ppp{}, L.arp{} })
  assert(not ok and tostring(e):find("not IPv4, IPv6 or MPLS"), tostring(e))
end

-- Flows as snappi 1.3.0 (../shared/peers/otg) serializes them (cfg.serialize(),
-- tx_rx dropped), from: f1 eth().vlan().ipv4().udp() with dst.increment,
-- vlan.id.values, ipv4.dst.decrement and a metric tag, udp.dst_port.increment,
-- size.increment 64..128 step 32; f2 eth().ipv6().tcp() with ipv6 dst
-- increment, tcp_imix (edited from imix, whose 64 bytes cannot hold the headers: refused); f3 eth().ipv4().udp().gtpv1().ipv4() with a bad header
-- checksum; f4 pfcpause(); f5 eth().custom(); f6 eth().ipv4().icmp() with a
-- random size.
local SNAPPI = [[
[{"name":"f1","packet":[{"choice":"ethernet","ethernet":{"dst":{"choice":"increment","increment":{"count":3,"start":"02:00:00:00:00:02",
"step":"00:00:00:00:00:01"}},"src":{"choice":"value","value":"02:00:00:00:00:01"}}},{"choice":"vlan","vlan":{"id":{"choice":"values",
"values":[10,20]}}},{"choice":"ipv4","ipv4":{"dst":{"choice":"decrement","decrement":{"count":4,"start":"10.0.0.9","step":"0.0.0.1"},
"metric_tags":[{"length":8,"name":"dst","offset":24}]},"priority":{"choice":"dscp","dscp":{"phb":{"choice":"value","value":46}}},
"src":{"choice":"value","value":"10.0.0.1"},"time_to_live":{"choice":"value","value":3}}},{"choice":"udp","udp":{"dst_port":{"choice":"increment",
"increment":{"count":10,"start":5000,"step":1}},"src_port":{"choice":"value","value":1234}}}],"size":{"choice":"increment",
"increment":{"end":128,"start":64,"step":32}}},{"name":"f2","packet":[{"choice":"ethernet","ethernet":{}},{"choice":"ipv6",
"ipv6":{"dst":{"choice":"increment","increment":{"count":100,"start":"2001:db8::1","step":"::1"}}}},{"choice":"tcp","tcp":{"ctl_syn":{"choice":"value",
"value":1},"src_port":{"choice":"values","values":[1,2,3]}}}],"size":{"choice":"weight_pairs","weight_pairs":{"choice":"predefined",
"predefined":"tcp_imix"}}},{"name":"f3","packet":[{"choice":"ethernet","ethernet":{}},{"choice":"ipv4","ipv4":{"header_checksum":{"choice":"generated",
"generated":"bad"}}},{"choice":"udp","udp":{"dst_port":{"choice":"value","value":2152}}},{"choice":"gtpv1","gtpv1":{"teid":{"choice":"increment",
"increment":{"count":5,"start":1,"step":1}}}},{"choice":"ipv4","ipv4":{}}],"size":{"choice":"fixed","fixed":200}},{"name":"f4",
"packet":[{"choice":"pfcpause","pfcpause":{"class_enable_vector":{"choice":"value","value":8},"pause_class_3":{"choice":"value",
"value":100}}}]},{"name":"f5","packet":[{"choice":"ethernet","ethernet":{"ether_type":{"choice":"value","value":34997}}},
{"choice":"custom","custom":{"bytes":"aa bb cc"}}]},{"name":"f6","packet":[{"choice":"ethernet","ethernet":{}},{"choice":"ipv4",
"ipv4":{}},{"choice":"icmp","icmp":{"choice":"echo","echo":{"sequence_number":{"choice":"increment","increment":{"count":9,
"start":1,"step":1}}}}}],"size":{"choice":"random","random":{"max":200,"min":100}}}]
]]

function T.flows_as_snappi_sends_them()
  local json = require("surge.results.json")
  local flows = json.decode((SNAPPI:gsub("\n", "")))
  local c = {}
  for i, f in ipairs(flows) do
    local ok, r = pcall(packet.compile, f, ("flows[%d]"):format(i - 1))
    if not ok then error(type(r) == "table" and (r.path .. ": " .. r.message) or r, 0) end
    c[i] = r
  end
  -- f1: dst MAC +1 (3), vlan 10/20, dst IP -1 from .9 (4), dport 5000.. (10); sizes 60, 92, 124
  local fr = c[1].flow:frames(5)
  for i, s in ipairs(fr) do
    local k = i - 1
    assert(s:byte(6) == 2 + k % 3 and be16(s, 14) % 4096 == ({ 10, 20 })[k % 2 + 1], "f1 eth/vlan " .. k)
    assert(s:byte(18 + 20) == 9 - k % 4 and be16(s, 38 + 2) == 5000 + k, "f1 ip/udp " .. k)
    assert(s:byte(18 + 2) == 46 * 4 and s:byte(18 + 9) == 3, "f1 dscp, ttl")
  end
  assert(c[1].size.n == 3 and c[1].size._t[0] == 60 and c[1].size._t[2] == 124, "f1 sizes")
  assert(c[1].tags[1].name == "dst" and c[1].tags[1].offset == (18 + 16) * 8 + 24 and c[1].tags[1].length == 8)
  -- f2: IPv6 dst low bits +1, source ports 1/2/3, SYN; imix
  fr = c[2].flow:frames(4)
  for i, s in ipairs(fr) do
    assert(s:byte(54) == i and be16(s, 54) == ({ 1, 2, 3, 1 })[i] and s:byte(54 + 14) == 0x02, "f2 " .. i)
    l4_ok(s, 54, pseudo6(s, 14, 6, #s - 54), "TCP (the template at the largest size)")
  end
  -- f3: the outer IPv4 checksum bad, the inner good; TEID 1..5
  local s = c[3].flow:frames(2)[2]
  assert(osum(s, 15, 34) ~= 0xffff and be16(s, 42 + 4 + 2) == 2, "f3")
  ip4_ok(s, 50)
  -- f4, f5, f6
  expect_bytes(c[4].template.bytes, "0180c2000001 000000000000 8808 0101 0008 0000 0000 0000 0064", "f4", true)
  expect_bytes(c[5].template.bytes, "000000000000 000000000000 88b5 aabbcc", "f5")
  assert(c[6].size.largest == 196 and c[6].flow:count() == 9, "f6")
end

-------------------------------------------------------------------------------
-- Untrusted input: the compiler takes decoded JSON from the network, the
-- decoders bytes from the wire. Mutations must give a table error naming a
-- path (the compiler) or a line of text (the decoders), never a Lua error.

local SEED = tonumber(os.getenv("SURGE_FUZZ_SEED") or "") or 12345
local CORPUS = {
  { hdr("ethernet", { src = v("02:00:00:00:00:01") }), hdr("vlan", { id = { choice = "increment", increment = { count = 3 } } }),
    hdr("ipv4", { priority = { choice = "tos", tos = { delay = v(1) } }, dst = { choice = "values", values = { "1.1.1.1", "1.1.1.2" },
      metric_tags = { { name = "t", offset = 1, length = 2 } } } }),
    hdr("udp", { checksum = { choice = "generated", generated = "bad" } }) },
  { hdr("ethernet"), hdr("ipv6", { dst = { choice = "decrement", decrement = { start = "::5", step = "::1", count = 2 } } }),
    hdr("tcp", { ctl_syn = v(1) }) },
  { hdr("ethernet"), hdr("ipv4"), hdr("udp"), hdr("gtpv1", { s_flag = v(1) }), hdr("ipv4") },
  { hdr("ethernet"), hdr("ipv4"), hdr("udp"), hdr("gtpv2", { teid_flag = v(1) }) },
  { hdr("pfcpause", { pause_class_2 = v(3) }) }, { hdr("ethernetpause") },
  { hdr("ethernet"), hdr("mpls"), hdr("ppp"), hdr("ipv4"), hdr("igmpv1") },
  { hdr("ethernet"), hdr("ipv4"), hdr("gre", { checksum_present = v(1) }), hdr("ethernet"), hdr("arp") },
  { hdr("ethernet"), hdr("ipv4"), hdr("udp"), hdr("vxlan"), hdr("ethernet"), hdr("custom", { bytes = "0102" }) },
  { hdr("ethernet"), hdr("ipv4"), { choice = "icmp", icmp = { echo = { identifier = v(1) } } } },
}
local SIZES = { fixed(100), { choice = "increment", increment = { start = 100, ["end"] = 110 } },
                { choice = "random", random = { min = 100, max = 120 } },
                { choice = "weight_pairs", weight_pairs = { choice = "custom", custom = { { size = 100, weight = 2 } } } } }
local ODD = { -1, 0, 1, 2 ^ 32, 2 ^ 53, 0.5, 1e308, -1e308, "", "x", "1.2.3.4", "::1", "ff:ff:ff:ff:ff:ff", true, false,
              {}, { 1 }, { choice = "value" }, { choice = "increment", increment = { count = 0 } }, { choice = 5 },
              { choice = "auto" }, { choice = "values", values = { "a" } }, { name = {} } }

local function deep(t)
  if type(t) ~= "table" then return t end
  local o = {}
  for k, x in pairs(t) do o[k] = deep(x) end
  return o
end

-- every table of t (with its parent and key), for mutation
local function slots(t, out)
  for k, x in pairs(t) do
    out[#out + 1] = { t, k }
    if type(x) == "table" then slots(x, out) end
  end
  return out
end

function T.compile_survives_mutations()
  math.randomseed(SEED)
  local n, refused = 0, 0
  for round = 1, 3000 do
    local flow = { name = "f", packet = deep(CORPUS[(round % #CORPUS) + 1]), size = deep(SIZES[(round % #SIZES) + 1]) }
    for _ = 1, math.random(1, 3) do
      local s = slots(flow, {})
      local pick = s[math.random(#s)]
      local r = math.random(4)
      if r == 1 then pick[1][pick[2]] = deep(ODD[math.random(#ODD)])
      elseif r == 2 then pick[1][pick[2]] = nil
      elseif r == 3 then pick[1][pick[2] .. "x"] = deep(ODD[math.random(#ODD)])
      else pick[1][pick[2]] = deep(CORPUS[math.random(#CORPUS)][1]) end
    end
    local ok, err = pcall(packet.compile, flow, "flows[0]")
    n = n + 1
    if not ok then
      refused = refused + 1
      if type(err) ~= "table" or type(err.path) ~= "string" or type(err.message) ~= "string"
          or not err.path:find("^flows%[0%]") or err.message == "" then
        error(("round %d (seed %d): not a model error: %s"):format(round, SEED, tostring(err)), 0)
      end
    end
  end
  assert(refused > 100 and refused < n, ("%d of %d refused: the mutations reach both outcomes"):format(refused, n))
  print(("  otg.packet.compile: %d mutated flows, %d refused, seed %d"):format(n, refused, SEED))
end

function T.decoders_survive_truncation_and_garbage()
  math.randomseed(SEED)
  local decode = surge.proto.decode
  for _, pk in ipairs(CORPUS) do
    local s = compile(pk, fixed(100)).template.bytes
    for len = 0, #s do assert(type(decode(s:sub(1, len))) == "string") end
    for _ = 1, 300 do
      local b = { s:byte(1, -1) }
      for _ = 1, math.random(1, 6) do b[math.random(#b)] = math.random(0, 255) end
      local m = string.char(unpack(b))
      assert(type(decode(m:sub(1, math.random(#m)))) == "string")
    end
  end
  -- GTPv1 extension headers: a zero length, one past the end
  local gt = compile({ hdr("ethernet"), hdr("ipv4"), hdr("udp", { dst_port = v(2152) }), hdr("gtpv1") }, fixed(100))
    .template.bytes
  local off = 42
  local bad = gt:sub(1, off) .. string.char(0x34, 0xff, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0x85) .. string.char(0):rep(10)
  assert(decode(bad):find("gtpv1 .*%(bad extension%)"), decode(bad))
  bad = gt:sub(1, off) .. string.char(0x34, 0xff, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0x85, 200)
  assert(decode(bad):find("bad extension"), decode(bad))
end

local _ = unhex
return T
