-- otg/packet.lua - an OTG flow's packet, size and field patterns (model
-- 1.3.0) compiled into what surge's data path takes.
--
--   local packet = require("surge.otg.packet")
--   local c = packet.compile(flow, "flows[2]", { dst_mac = "02:...", payload = "..." })
--   c.template   -- a surge.proto stack (surge.pool{ template = }, surge.flow{ template = })
--   c.fields     -- { { "ip4#1.dst", { range = { A, B }, step = S } }, ... }: surge.flow{ fields = }
--   c.combine    -- "cycle": every pattern advances once per packet and wraps at its own count
--   c.flow       -- surge.flow{ template, fields, combine } built from them (nil with no fields)
--   c.size       -- a frame length without FCS (fixed), or a surge.size bound to c.template
--   c.tags       -- { { name, offset, length, path } }: metric tags, bit offset and length in the frame
--
-- Errors: one table { path = "flows[2].packet[1].ipv4.dst.increment.count", message = "..." }
-- raised with error(); the server turns it into the model's Error.
--
-- How OTG maps onto surge (docs/protocols.md, "OTG headers"):
-- * Each header of the model is a table below: every field with its bit
--   offset and width on the wire, the model's default, how "auto" is
--   computed, and the surge.proto module field a pattern varies. The
--   frame is built by these tables (one generic writer), its layers named
--   after surge.proto's modules so surge.flow, surge.size and surge show
--   find their fields, checksums and decoders.
-- * OTG sizes count the 4-byte FCS; surge's do not: frame = size - 4.
-- * Patterns: value and values and increment/decrement {start, step,
--   count}. A counter runs start, start +- step, ... for count values and
--   repeats; values wrap modulo the field's width (2^bits), as the
--   model's counters on a field of that width imply. A counter that stays
--   inside the field is a surge.flow range; one that wraps is a list
--   (up to LIST_MAX values).
local bit = require("bit")
local ffi = require("ffi")
local cs = require("surge.proto.checksum")
local stack = require("surge.proto.stack")
local ip6 = require("surge.proto.ip6")
local raw = require("surge.proto.raw")
local flow_mod = require("surge.flow")
local size_mod = require("surge.size")
local json = require("surge.results.json")

local M = {}

M.LIST_MAX = 1048576      -- values a wrapping counter may expand to (surge.flow holds lists in a table)
M.MAX_FRAME = 9600        -- surge.proto.stack's largest frame (without FCS)
local FCS = 4

local function fail(path, fmt, ...)
  error({ path = path, message = select("#", ...) > 0 and fmt:format(...) or fmt }, 0)
end

local function isint(v) return type(v) == "number" and v == math.floor(v) and v >= 0 and v < 2 ^ 53 end

-------------------------------------------------------------------------------
-- Headers. A field: { name, bit offset in its part, bits, kind = int|mac|ipv4|ipv6,
--   def = the model's default value, max = the model's maximum (else 2^bits-1),
--   auto = how the "auto" choice (and a length the model leaves 0 when unset) is computed,
--   f = the surge.proto field a pattern varies (nil: patterns refused, why = the reason),
--   part = which surge layer of the header (1 by default), csum = checksum kind,
--   shape = true when its value changes the header's length (patterns refused) }

local H = {}

H.ethernet = { parts = { { "eth", 14 } }, fields = {
  { "dst", 0, 48, kind = "mac", def = "00:00:00:00:00:00", auto = "dst_mac", f = "dst" },
  { "src", 48, 48, kind = "mac", def = "00:00:00:00:00:00", f = "src" },
  { "ether_type", 96, 16, def = 65535, auto = "ethertype", f = "type" },
  { "pfc_queue", nil, 3, def = 0, max = 7, absent_only = "not a header field: surge maps no PFC queue" } } }

H.vlan = { parts = { { "vlan", 4 } }, fields = {
  { "priority", 0, 3, def = 0, f = "pcp" },
  { "cfi", 3, 1, def = 0, f = "dei" },
  { "id", 4, 12, def = 0, f = "id" },
  -- the tag's TPID is the type field before the tag (surge.proto.vlan); the
  -- tag's own type field is the next header's
  { "tpid", nil, 16, def = 0x8100, why = "the TPID is the type field of the header before the tag: " ..
      "vary that header's ether_type instead" },
  { "_type", 16, 16, def = 65535, auto = "ethertype", internal = true } } }

H.vxlan = { parts = { { "vxlan", 8 } }, fields = {
  { "flags", 0, 8, def = 8, f = "flags" },
  { "reserved0", 8, 24, def = 0, f = "reserved0" },
  { "vni", 32, 24, def = 0, auto = "zero", f = "vni" },
  { "reserved1", 56, 8, def = 0, f = "reserved1" } } }

H.ipv4 = { parts = { { "ip4", 20, ip = 4 } }, fields = {
  { "version", 0, 4, def = 4, f = "version" },
  { "header_length", 4, 4, def = 5, auto = "ihl", f = "ihl" },
  { "priority", special = "ipv4_priority" },
  { "total_length", 16, 16, def = 46, auto = "ip4_len", f = "len", length = true },
  { "identification", 32, 16, def = 0, f = "id" },
  { "reserved", 48, 1, def = 0, f = "reserved" },
  { "dont_fragment", 49, 1, def = 0, f = "df" },
  { "more_fragments", 50, 1, def = 0, f = "mf" },
  { "fragment_offset", 51, 13, def = 0, max = 31, f = "frag" },
  { "time_to_live", 64, 8, def = 64, f = "ttl" },
  { "protocol", 72, 8, def = 61, auto = "ipproto", f = "proto" },
  { "header_checksum", 80, 16, csum = "ip4" },
  { "src", 96, 32, kind = "ipv4", def = "0.0.0.0", f = "src" },
  { "dst", 128, 32, kind = "ipv4", def = "0.0.0.0", f = "dst" },
  { "options", special = "ipv4_options" } } }

-- priority: one of raw (the whole TOS byte), tos (RFC 791 bits), dscp (RFC 2474 + ECN)
local PRIORITY = {
  raw = { { "raw", 8, 8, def = 0, f = "tos" } },
  tos = { { "precedence", 8, 3, def = 0, f = "precedence" }, { "delay", 11, 1, def = 0, f = "tos_delay" },
          { "throughput", 12, 1, def = 0, f = "tos_throughput" },
          { "reliability", 13, 1, def = 0, f = "tos_reliability" },
          { "monetary", 14, 1, def = 0, f = "tos_monetary" }, { "unused", 15, 1, def = 0, f = "tos_unused" } },
  dscp = { { "phb", 8, 6, def = 0, f = "dscp" }, { "ecn", 14, 2, def = 0, f = "ecn" } } }

H.ipv6 = { parts = { { "ip6", 40, ip = 6 } }, fields = {
  { "version", 0, 4, def = 6, f = "version" },
  { "traffic_class", 4, 8, def = 0, f = "tclass" },
  { "flow_label", 12, 20, def = 0, f = "flow" },
  { "payload_length", 32, 16, def = 0, auto = "ip6_len", f = "plen", length = true },
  { "next_header", 48, 8, def = 59, auto = "ipproto", f = "next" },
  { "hop_limit", 56, 8, def = 64, f = "hlim" },
  { "src", 64, 128, kind = "ipv6", def = "::0", f = "src" },
  { "dst", 192, 128, kind = "ipv6", def = "::0", f = "dst" } } }

local function pause_l2()
  return { { "dst", 0, 48, kind = "mac", def = "01:80:c2:00:00:01", f = "dst" },
           { "src", 48, 48, kind = "mac", def = "00:00:00:00:00:00", f = "src" },
           { "ether_type", 96, 16, def = 0x8808, f = "type" } }
end

H.ethernetpause = { first = true, parts = { { "eth", 14 }, { "pause", 4 } }, fields = pause_l2() }
for _, f in ipairs({ { "control_op_code", 0, 16, def = 1, f = "opcode", part = 2 },
                     { "time", 16, 16, def = 0, f = "time", part = 2 } }) do
  table.insert(H.ethernetpause.fields, f)
end

H.pfcpause = { first = true, parts = { { "eth", 14 }, { "pfc", 20 } }, fields = pause_l2() }
table.insert(H.pfcpause.fields, { "control_op_code", 0, 16, def = 0x0101, f = "opcode", part = 2 })
table.insert(H.pfcpause.fields, { "class_enable_vector", 16, 16, def = 0, f = "enable", part = 2 })
for i = 0, 7 do
  table.insert(H.pfcpause.fields, { "pause_class_" .. i, 32 + 16 * i, 16, def = 0, f = "class" .. i, part = 2 })
end

H.tcp = { parts = { { "tcp", 20, ipproto = 6 } }, fields = {
  { "src_port", 0, 16, def = 0, f = "sport" },
  { "dst_port", 16, 16, def = 0, f = "dport" },
  { "seq_num", 32, 32, def = 0, f = "seq" },
  { "ack_num", 64, 32, def = 0, f = "ack" },
  -- the model's default 0 is no TCP header a receiver parses: unset, it is the header's 5 words
  { "data_offset", 96, 4, def = 0, unset = "doff", f = "doff" },
  { "ecn_ns", 103, 1, def = 0, f = "ns" },
  { "ecn_cwr", 104, 1, def = 0, f = "cwr" },
  { "ecn_echo", 105, 1, def = 0, f = "ece" },
  { "ctl_urg", 106, 1, def = 0, f = "urg" },
  { "ctl_ack", 107, 1, def = 0, f = "ackf" },
  { "ctl_psh", 108, 1, def = 0, f = "psh" },
  { "ctl_rst", 109, 1, def = 0, f = "rst" },
  { "ctl_syn", 110, 1, def = 0, f = "syn" },
  { "ctl_fin", 111, 1, def = 0, f = "fin" },
  { "window", 112, 16, def = 0, f = "window" },
  { "checksum", 128, 16, csum = "tcp" } } }

H.udp = { parts = { { "udp", 8, ipproto = 17 } }, fields = {
  { "src_port", 0, 16, def = 0, f = "sport" },
  { "dst_port", 16, 16, def = 0, f = "dport" },
  { "length", 32, 16, def = 0, unset = "udp_len", f = "len", length = true },
  { "checksum", 48, 16, csum = "udp" } } }

H.gre = { parts = { { "gre", 4, ipproto = 47, grow = function(v) return v.checksum_present == 1 and 4 or 0 end } },
  fields = {
  { "checksum_present", 0, 1, def = 0, f = "c", shape = true },
  { "reserved0", 1, 12, def = 0, f = "reserved0" },
  { "version", 13, 3, def = 0, f = "version" },
  { "protocol", 16, 16, def = 2048, f = "proto" },
  { "checksum", 32, 16, csum = "gre", when = function(v) return v.checksum_present == 1 end },
  { "reserved1", 48, 16, def = 0, when = function(v) return v.checksum_present == 1 end,
    why = "surge.proto.gre has no field after a checksum" } } }

local function gtp1_long(v) return v.e_flag == 1 or v.s_flag == 1 or v.pn_flag == 1 end
H.gtpv1 = { parts = { { "gtpv1", 8, grow = function(v) return gtp1_long(v) and 4 or 0 end } }, fields = {
  { "version", 0, 3, def = 1, f = "version" },
  { "protocol_type", 3, 1, def = 1, f = "pt" },
  { "reserved", 4, 1, def = 0, f = "reserved" },
  { "e_flag", 5, 1, def = 0, f = "e", shape = true },
  { "s_flag", 6, 1, def = 0, f = "s", shape = true },
  { "pn_flag", 7, 1, def = 0, f = "pn", shape = true },
  { "message_type", 8, 8, def = 0, f = "type" },
  -- unset, the length of what follows the first 8 bytes (the model's 0 is no GTP-U packet)
  { "message_length", 16, 16, def = 0, unset = "gtp1_len", f = "length", length = true },
  { "teid", 32, 32, def = 0, f = "teid" },
  { "squence_number", 64, 16, def = 0, f = "seq", when = gtp1_long },
  { "n_pdu_number", 80, 8, def = 0, f = "npdu", when = gtp1_long },
  { "next_extension_header_type", 88, 8, def = 0, f = "next_ext", when = gtp1_long },
  { "extension_headers", special = "empty_list", why = "GTPv1 extension headers are not built by surge" } } }

local function gtp2_t(v) return v.teid_flag == 1 end
H.gtpv2 = { parts = { { "gtpv2", 8, grow = function(v) return gtp2_t(v) and 4 or 0 end } }, fields = {
  { "version", 0, 3, def = 2, f = "version" },
  { "piggybacking_flag", 3, 1, def = 0, f = "p" },
  { "teid_flag", 4, 1, def = 0, f = "t", shape = true },
  { "spare1", 5, 3, def = 0, f = "spare1" },
  { "message_type", 8, 8, def = 0, f = "type" },
  { "message_length", 16, 16, def = 0, unset = "gtp2_len", f = "length", length = true },
  { "teid", 32, 32, def = 0, f = "teid", when = gtp2_t },
  { "sequence_number", function(v) return gtp2_t(v) and 64 or 32 end, 24, def = 0,
    f = function(v) return gtp2_t(v) and "seq" or "seq0" end },
  { "spare2", function(v) return gtp2_t(v) and 88 or 56 end, 8, def = 0,
    f = function(v) return gtp2_t(v) and "spare2" or "spare0" end } } }

H.arp = { parts = { { "arp", 28 } }, fields = {
  { "hardware_type", 0, 16, def = 1, f = "htype" },
  { "protocol_type", 16, 16, def = 2048, f = "ptype" },
  { "hardware_length", 32, 8, def = 6, f = "hlen" },
  { "protocol_length", 40, 8, def = 4, f = "plen" },
  { "operation", 48, 16, def = 1, f = "op" },
  { "sender_hardware_addr", 64, 48, kind = "mac", def = "00:00:00:00:00:00", f = "sha" },
  { "sender_protocol_addr", 112, 32, kind = "ipv4", def = "0.0.0.0", f = "spa" },
  { "target_hardware_addr", 144, 48, kind = "mac", def = "00:00:00:00:00:00", f = "tha" },
  { "target_protocol_addr", 192, 32, kind = "ipv4", def = "0.0.0.0", f = "tpa" } } }

local function echo(type_def)
  return { { "type", 0, 8, def = type_def, f = "type" }, { "code", 8, 8, def = 0, f = "code" },
           { "checksum", 16, 16, csum = "plain" }, { "identifier", 32, 16, def = 0, f = "id" },
           { "sequence_number", 48, 16, def = 0, f = "seq" } }
end
H.icmp = { parts = { { "icmp", 8, ipproto = 1 } }, choice = { echo = echo(8) } }
H.icmpv6 = { parts = { { "icmp6", 8, ipproto = 58 } }, choice = { echo = echo(128) } }

H.ppp = { parts = { { "ppp", 4 } }, fields = {
  { "address", 0, 8, def = 255, f = "address" },
  { "control", 8, 8, def = 3, f = "control" },
  { "protocol_type", 16, 16, def = 33, auto = "pppproto", f = "proto" } } }

H.igmpv1 = { parts = { { "igmp", 8, ipproto = 2 } }, fields = {
  { "version", 0, 4, def = 1, f = "version" },
  { "type", 4, 4, def = 1, f = "type" },
  { "unused", 8, 8, def = 0, f = "unused" },
  { "checksum", 16, 16, csum = "plain" },
  { "group_address", 32, 32, kind = "ipv4", def = "0.0.0.0", f = "group" } } }

H.mpls = { parts = { { "mpls", 4 } }, fields = {
  { "label", 0, 20, def = 16, auto = "label", f = "label" },
  { "traffic_class", 20, 3, def = 0, f = "tc" },
  { "bottom_of_stack", 23, 1, def = 1, auto = "bos", f = "s" },
  { "time_to_live", 24, 8, def = 64, f = "ttl" } } }

-- What a header is to the one before it (auto fields): ethertype, IP protocol.
local NEXT = { ipv4 = { ethertype = 0x0800, ipproto = 4 }, ipv6 = { ethertype = 0x86dd, ipproto = 41 },
               arp = { ethertype = 0x0806 }, mpls = { ethertype = 0x8847 }, ppp = { ethertype = 0x880b },
               ethernet = { gre = 0x6558 },
               tcp = { ipproto = 6 }, udp = { ipproto = 17 }, icmp = { ipproto = 1 }, icmpv6 = { ipproto = 58 },
               igmpv1 = { ipproto = 2 }, gre = { ipproto = 47 } }
local PPP_PROTO = { [0x0800] = 0x0021, [0x86dd] = 0x0057, [0x8847] = 0x0281 }

local CHOICES = { "custom", "ethernet", "vlan", "vxlan", "ipv4", "ipv6", "pfcpause", "ethernetpause", "tcp", "udp",
                  "gre", "gtpv1", "gtpv2", "arp", "icmp", "icmpv6", "ppp", "igmpv1", "mpls", "snmpv2c", "rsvp" }
local REFUSED = { snmpv2c = "SNMPv2c PDUs are not built by surge", rsvp = "RSVP messages are not built by surge" }
local is_choice = {}
for _, c in ipairs(CHOICES) do is_choice[c] = true end

-------------------------------------------------------------------------------
-- Values.

local function mac_num(s)
  if type(s) ~= "string" then return nil end
  local b = { s:match("^(%x%x)[:-](%x%x)[:-](%x%x)[:-](%x%x)[:-](%x%x)[:-](%x%x)$") }
  if #b ~= 6 then return nil end
  local x = 0
  for i = 1, 6 do x = x * 256 + tonumber(b[i], 16) end
  return x
end

local function ip4_num(s)
  if type(s) ~= "string" then return nil end
  local a, b, c, d = s:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
  a, b, c, d = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
  if not a or a > 255 or b > 255 or c > 255 or d > 255 then return nil end
  return ((a * 256 + b) * 256 + c) * 256 + d
end

local KIND_TEXT = { mac = "a MAC address (aa:bb:cc:dd:ee:ff)", ipv4 = "an IPv4 address",
                    ipv6 = "an IPv6 address" }

-- A value of field fd at path: a number (int, mac, ipv4) or 16 bytes (ipv6).
local function value_of(fd, v, path)
  local kind = fd.kind or "int"
  if kind == "int" then
    local max = fd.max or (2 ^ fd[3] - 1)
    if not isint(v) or v > max then
      fail(path, "%s is not an integer in 0..%.0f", type(v) == "string" and ("'" .. v .. "'") or tostring(v), max)
    end
    return v
  end
  local x
  if kind == "mac" then x = mac_num(v) elseif kind == "ipv4" then x = ip4_num(v) else x = ip6.parse(v) end
  if x == nil then fail(path, "%s is not %s", type(v) == "string" and ("'" .. v .. "'") or tostring(v), KIND_TEXT[kind]) end
  return x
end

-- 16-byte strings as 8 x 16-bit words, for arithmetic on IPv6 addresses
local function words(b) local w = {} for i = 1, 8 do w[i] = b:byte(2 * i - 1) * 256 + b:byte(2 * i) end return w end
local function low32(b) return ((b:byte(13) * 256 + b:byte(14)) * 256 + b:byte(15)) * 256 + b:byte(16) end

-------------------------------------------------------------------------------
-- Patterns.

local PATTERN_KEYS = { choice = 1, value = 1, values = 1, increment = 1, decrement = 1, auto = 1, metric_tags = 1 }
local CSUM_KEYS = { choice = 1, generated = 1, custom = 1 }
local COUNTER_KEYS = { start = 1, step = 1, count = 1 }
local TAG_KEYS = { name = 1, offset = 1, length = 1 }

local function check_keys(obj, keys, path, what)
  for k in pairs(obj) do
    if not keys[k] then
      local list = {}
      for a in pairs(keys) do list[#list + 1] = a end
      table.sort(list)
      fail(path .. "." .. tostring(k), "unknown field of %s (%s)", what, table.concat(list, ", "))
    end
  end
end

local function object(v, path, what)
  if type(v) ~= "table" or (next(v) ~= nil and #v > 0) then
    fail(path, "expected %s (a JSON object), got %s", what, type(v) == "table" and "an array" or tostring(v))
  end
  return v
end

local function array(v, path)
  if type(v) ~= "table" or (next(v) ~= nil and #v == 0) then fail(path, "expected an array") end
  return v
end

-- metric tags of a field of `bits` bits at path -> list of { name, offset, length }
local function metric_tags(list, bits, path, default_len)
  local out = {}
  for i, t in ipairs(array(list, path)) do
    local p = ("%s[%d]"):format(path, i - 1)
    object(t, p, "a metric tag")
    check_keys(t, TAG_KEYS, p, "a metric tag")
    if type(t.name) ~= "string" or not t.name:match("^[%sa-zA-Z0-9%-_()><%[%]]+$") then
      fail(p .. ".name", "a metric tag needs a name of letters, digits, spaces and -_()<>[]")
    end
    local off, len = t.offset or 0, t.length or default_len or bits
    if not isint(off) or off > bits - 1 then fail(p .. ".offset", "%s is outside the field's bits 0..%d", tostring(off), bits - 1) end
    if not isint(len) or len < 1 or len > bits then fail(p .. ".length", "%s is outside 1..%d bits", tostring(len), bits) end
    if off + len > bits then
      fail(p .. ".length", "offset %d + length %d runs past the field's %d bits", off, len, bits)
    end
    out[#out + 1] = { name = t.name, offset = off, length = len }
  end
  return out
end

-- A counter {start, step, count} of field fd -> list of first value, spec for surge.flow (or nil), count.
local function counter(fd, c, path, down)
  object(c, path, "a counter")
  check_keys(c, COUNTER_KEYS, path, "a counter")
  local kind = fd.kind or "int"
  local step_def = kind == "mac" and "00:00:00:00:00:01" or kind == "ipv4" and "0.0.0.1" or kind == "ipv6" and "::1" or 1
  local start = value_of(fd, c.start == nil and fd.def or c.start, path .. ".start")
  local step
  if kind == "int" then
    step = c.step == nil and 1 or c.step
    if not isint(step) or step > 2 ^ fd[3] - 1 then
      fail(path .. ".step", "%s is not an integer in 0..%.0f", tostring(step), 2 ^ fd[3] - 1)
    end
  else
    step = value_of(fd, c.step == nil and step_def or c.step, path .. ".step")
  end
  local count = c.count == nil and 1 or c.count
  if not isint(count) or count > 4294967295 then fail(path .. ".count", "%s is not an integer in 1..4294967295", tostring(count)) end
  if count == 0 then fail(path .. ".count", "0: a counter gives at least one value (count 1 or more)") end
  if kind == "ipv6" then
    -- surge.flow varies the low 32 bits of an IPv6 address (ip6.src/dst)
    local sw = words(step)
    for i = 1, 6 do
      if sw[i] ~= 0 then fail(path .. ".step", "surge varies the low 32 bits of an IPv6 address only: the step must be below ::1:0:0") end
    end
    local s, st = low32(start), low32(step)
    local last = down and s - st * (count - 1) or s + st * (count - 1)
    if last < 0 or last > 4294967295 then
      fail(path .. ".count", "%d steps carry %s the low 32 bits of the address, which is all surge varies in an IPv6 address",
        count, down and "borrow from above" or "over")
    end
    if count == 1 or st == 0 then return start, nil end
    return start, { range = { s, last }, step = down and -st or st }
  end
  local bits = fd[3]
  if count == 1 or step == 0 then return start, nil end
  local mod = 2 ^ bits
  local last = down and start - step * (count - 1) or start + step * (count - 1)
  if last >= 0 and last < mod then return start, { range = { start, last }, step = down and -step or step } end
  -- it wraps: the values in order, modulo the field's width
  if count > M.LIST_MAX then
    fail(path .. ".count", "%d values wrap past the field's %d bits; surge.flow's range cannot wrap and a list " ..
      "holds at most %d values", count, bits, M.LIST_MAX)
  end
  local list, v = {}, start
  for i = 1, count do
    list[i] = v
    v = down and (v - step) % mod or (v + step) % mod
  end
  return start, { list = list }
end

-- The pattern object of field fd at path -> st = { choice, value (first), spec, tags }.
local function pattern(fd, obj, path)
  local name = fd[1]
  if fd.csum then
    if obj == nil then return { choice = "generated", generated = "good" } end
    object(obj, path, "a checksum pattern")
    check_keys(obj, CSUM_KEYS, path, "a checksum pattern")
    local choice = obj.choice or (obj.custom ~= nil and "custom" or "generated")
    if choice == "generated" then
      local g = obj.generated == nil and "good" or obj.generated
      if g ~= "good" and g ~= "bad" then fail(path .. ".generated", "'%s' is not good or bad", tostring(g)) end
      return { choice = "generated", generated = g }
    elseif choice == "custom" then
      if not isint(obj.custom) or obj.custom > 65535 then
        fail(path .. ".custom", "%s is not an integer in 0..65535", tostring(obj.custom))
      end
      return { choice = "custom", value = obj.custom }
    end
    fail(path .. ".choice", "'%s' is not generated or custom", tostring(choice))
  end
  local auto_ok = fd.auto ~= nil
  if obj == nil then
    if auto_ok or fd.unset then return { choice = "auto", tags = {} } end
    return { choice = "value", value = value_of(fd, fd.def, path), tags = {} }
  end
  object(obj, path, "a pattern")
  check_keys(obj, PATTERN_KEYS, path, "a pattern")
  local choice = obj.choice
  if choice == nil then
    -- the one alternative given, else the model's default
    for _, k in ipairs({ "value", "values", "increment", "decrement" }) do
      if obj[k] ~= nil then
        if choice then fail(path, "%s and %s given without a choice", choice, k) end
        choice = k
      end
    end
    choice = choice or (auto_ok and "auto" or "value")
  end
  local st = { choice = choice, tags = obj.metric_tags and metric_tags(obj.metric_tags, fd.bits or fd[3], path .. ".metric_tags") or {} }
  if choice == "auto" then
    if not auto_ok then fail(path .. ".choice", "auto is not a choice of %s (value, values, increment, decrement)", name) end
    return st
  elseif choice == "value" then
    st.value = value_of(fd, obj.value == nil and fd.def or obj.value, path .. ".value")
  elseif choice == "values" then
    local l = obj.values == nil and { fd.def } or array(obj.values, path .. ".values")
    if #l == 0 then fail(path .. ".values", "empty: give at least one value") end
    if #l > M.LIST_MAX then fail(path .. ".values", "%d values: surge.flow holds at most %d", #l, M.LIST_MAX) end
    local vals, differ = {}, false
    for i, v in ipairs(l) do
      vals[i] = value_of(fd, v, ("%s.values[%d]"):format(path, i - 1))
      if vals[i] ~= vals[1] then differ = true end
    end
    st.value = vals[1]
    if differ then
      if fd.kind == "ipv6" then
        local high = vals[1]:sub(1, 12)
        for i, v in ipairs(vals) do
          if v:sub(1, 12) ~= high then
            fail(("%s.values[%d]"):format(path, i - 1), "surge varies the low 32 bits of an IPv6 address only: " ..
              "every value must share the first value's upper 96 bits")
          end
          vals[i] = low32(v)
        end
      end
      st.spec = { list = vals }
    end
  elseif choice == "increment" or choice == "decrement" then
    local c = obj[choice] == nil and {} or obj[choice]
    st.value, st.spec = counter(fd, c, path .. "." .. choice, choice == "decrement")
  else
    fail(path .. ".choice", "'%s' is not one of value, values, increment, decrement%s", tostring(choice),
      auto_ok and ", auto" or "")
  end
  if st.spec and (fd.shape or not fd.f or fd.why) then
    fail(path, "a varying %s is not supported: %s", name,
      fd.shape and "it changes the header's length, and a flow's packets share one layout" or fd.why or "no field for it")
  end
  return st
end

-------------------------------------------------------------------------------
-- Bits on the wire.

local function put_bits(p, bitoff, bits, v)
  for i = bits - 1, 0, -1 do
    local b = bitoff + (bits - 1 - i)
    local byte, sh = math.floor(b / 8), 7 - b % 8
    local set = math.floor(v / 2 ^ i) % 2
    p[byte] = bit.bor(bit.band(p[byte], bit.bnot(bit.lshift(1, sh))), bit.lshift(set, sh))
  end
end

local function get_bits(p, bitoff, bits)
  local v = 0
  for i = 0, bits - 1 do
    local b = bitoff + i
    v = v * 2 + bit.band(bit.rshift(p[math.floor(b / 8)], 7 - b % 8), 1)
  end
  return v
end

local function put_field(p, fd, bitoff, v)
  if fd.kind == "ipv6" then ffi.copy(p + bitoff / 8, v, 16) else put_bits(p, bitoff, fd[3], v) end
end

-------------------------------------------------------------------------------
-- One header: its fields resolved, its layers.

-- h = { name, path, spec, fields = { { fd, st, bit } }, vals = { name -> first value }, parts }
local function parse_header(obj, path, index)
  object(obj, path, "a flow header")
  local choice = obj.choice
  if choice == nil then
    -- the model's default is ethernet; a lone header object names itself
    for k in pairs(obj) do if is_choice[k] then choice = choice and "?" or k end end
    if choice == "?" then fail(path .. ".choice", "several headers given without a choice") end
    choice = choice or "ethernet"
  end
  if type(choice) ~= "string" or not is_choice[choice] then
    fail(path .. ".choice", "'%s' is not a flow header of the model (%s)", tostring(choice), table.concat(CHOICES, ", "))
  end
  for k in pairs(obj) do
    if k ~= "choice" and k ~= choice then
      fail(path .. "." .. tostring(k), is_choice[k] and ("given, but the choice is " .. choice) or "unknown field of a flow header")
    end
  end
  local hpath = path .. "." .. choice
  if REFUSED[choice] then fail(hpath, "not implemented by surge: %s", REFUSED[choice]) end
  local body = obj[choice] == nil and {} or obj[choice]
  object(body, hpath, "the " .. choice .. " header")
  local h = { name = choice, path = hpath, index = index, fields = {}, vals = {}, tags = {} }
  if choice == "custom" then
    check_keys(body, { bytes = 1, metric_tags = 1 }, hpath, "custom")
    if type(body.bytes) ~= "string" then fail(hpath .. ".bytes", "required: a string of hex bytes") end
    local b = raw.unhex(body.bytes)
    if not b then fail(hpath .. ".bytes", "'%s' is not whole hex bytes (spaces and colons may separate them)", body.bytes) end
    h.bytes = b
    h.parts = { { name = "raw", len = #b } }
    if body.metric_tags ~= nil then
      for _, t in ipairs(metric_tags(body.metric_tags, #b * 8, hpath .. ".metric_tags", 1)) do
        h.tags[#h.tags + 1] = { t = t, bit = 0, part = 1, path = hpath }
      end
    end
    return h
  end
  local spec = H[choice]
  local fields = spec.fields
  if spec.choice then
    -- icmp, icmpv6: { choice = "echo", echo = {...} }
    check_keys(body, { choice = 1, echo = 1 }, hpath, choice)
    local sub = body.choice or "echo"
    if not spec.choice[sub] then fail(hpath .. ".choice", "'%s' is not echo", tostring(sub)) end
    fields = spec.choice[sub]
    hpath = hpath .. "." .. sub
    body = body[sub] == nil and {} or body[sub]
    object(body, hpath, "the echo header")
  end
  local known = {}
  for _, fd in ipairs(fields) do if not fd.internal then known[fd[1]] = 1 end end
  check_keys(body, known, hpath, choice)
  -- the fields in order; a field's presence and position may depend on
  -- earlier ones (gre, gtp): `when`, a bit offset or module field by function
  local list = {}
  local function add(fd, obj2, fpath, base)
    local st = pattern(fd, obj2, fpath)
    list[#list + 1] = { fd = fd, st = st, path = fpath, base = base or 0 }
    if st.value ~= nil then h.vals[fd[1]] = st.value end
  end
  for _, fd in ipairs(fields) do
    local fpath = hpath .. "." .. fd[1]
    local v = body[fd[1]]
    if fd.special == "ipv4_priority" then
      local pr = v == nil and {} or object(v, fpath, "a priority")
      check_keys(pr, { choice = 1, raw = 1, tos = 1, dscp = 1 }, fpath, "priority")
      local pc = pr.choice or (pr.raw and "raw") or (pr.tos and "tos") or "dscp"
      if not PRIORITY[pc] then fail(fpath .. ".choice", "'%s' is not raw, tos or dscp", tostring(pc)) end
      if pc == "raw" then
        add(PRIORITY.raw[1], pr.raw, fpath .. ".raw")
      else
        local sub = pr[pc] == nil and {} or object(pr[pc], fpath .. "." .. pc, "the " .. pc .. " bits")
        local k = {}
        for _, sf in ipairs(PRIORITY[pc]) do k[sf[1]] = 1 end
        check_keys(sub, k, fpath .. "." .. pc, pc)
        for _, sf in ipairs(PRIORITY[pc]) do add(sf, sub[sf[1]], fpath .. "." .. pc .. "." .. sf[1]) end
      end
    elseif fd.special == "ipv4_options" or fd.special == "empty_list" then
      if v ~= nil and (type(v) ~= "table" or next(v) ~= nil) then
        fail(fpath, "not implemented by surge: %s", fd.why or "IPv4 options are not built by surge")
      end
    elseif fd.absent_only then
      if v ~= nil then fail(fpath, "not implemented by surge: %s", fd.absent_only) end
    elseif fd.when and not fd.when(h.vals) then
      if v ~= nil then fail(fpath, "given, but the header has no %s field with these flags", fd[1]) end
    else
      add(fd, v, fpath)
    end
  end
  h.fields = list
  local len = {}
  for i, p in ipairs(spec.parts) do
    len[i] = { name = p[1], len = p[2] + (p.grow and p.grow(h.vals) or 0), ip = p.ip, ipproto = p.ipproto }
  end
  h.parts = len
  if spec.first and index ~= 1 then
    fail(hpath, "%s is a whole Ethernet frame's header: it must be the packet's first header", choice)
  end
  for _, e in ipairs(list) do
    for _, t in ipairs(e.st.tags or {}) do h.tags[#h.tags + 1] = { t = t, entry = e, path = e.path } end
  end
  return h
end

-- Resolves each field's bit position (a function of the flags for gtpv2).
local function field_bit(h, e)
  local b = e.fd[2]
  if type(b) == "function" then b = b(h.vals) end
  return b
end

local function field_name(h, e)
  local f = e.fd.f
  if type(f) == "function" then f = f(h.vals) end
  return f
end

-- auto values that do not depend on the frame size
local function resolve_autos(hs, opts)
  for i, h in ipairs(hs) do
    local nxt = hs[i + 1]
    for _, e in ipairs(h.fields) do
      local fd, st = e.fd, e.st
      if st.choice == "auto" and not fd.csum then
        local a = fd.auto
        local v
        if a == "dst_mac" then
          v = opts.dst_mac and mac_num(opts.dst_mac) or mac_num(fd.def)
          if not v then fail(e.path, "the resolved destination MAC '%s' is not a MAC address", tostring(opts.dst_mac)) end
        elseif a == "ethertype" then
          v = fd.def
          if nxt then
            if nxt.name == "vlan" then v = nxt.vals.tpid or 0x8100
            elseif NEXT[nxt.name] and NEXT[nxt.name].ethertype then v = NEXT[nxt.name].ethertype end
          end
        elseif a == "ipproto" then
          v = nxt and NEXT[nxt.name] and NEXT[nxt.name].ipproto or fd.def
        elseif a == "pppproto" then
          v = nxt and NEXT[nxt.name] and PPP_PROTO[NEXT[nxt.name].ethertype or -1] or fd.def
        elseif a == "zero" then v = fd.def
        elseif a == "ihl" then v = h.parts[1].len / 4
        elseif a == "label" then v = fd.def
        elseif a == "bos" then v = (nxt and nxt.name == "mpls") and 0 or 1
        elseif fd.unset == "doff" then v = h.parts[1].len / 4
        end
        if v ~= nil then st.value, st.fixed_auto = v, true end
      end
    end
  end
end

-- the size-dependent autos: lengths
local function length_of(kind, ctx)
  local rest = ctx.size - ctx.off
  if kind == "ip4_len" or kind == "udp_len" then return rest end
  if kind == "ip6_len" then return rest - 40 end
  if kind == "gtp1_len" then return rest - 8 end
  if kind == "gtp2_len" then return rest - 4 end
  return nil
end

local function ip6_sum(b)
  local s = 0
  for i = 1, 16, 2 do s = s + b:byte(i) * 256 + b:byte(i + 1) end
  return s
end

-- The surge layers of header h: each part writes its fields; finish fills
-- lengths, then the part's checksum.
local function layers_of(h, hs, i)
  local out = {}
  for pi, part in ipairs(h.parts) do
    local l = { name = part.name, len = part.len, ipproto = part.ipproto }
    if h.name == "custom" then
      l.write = function(_, p) ffi.copy(p, h.bytes, #h.bytes) end
    else
      l.write = function(_, p)
        for _, e in ipairs(h.fields) do
          local fd, st = e.fd, e.st
          if (fd.part or 1) == pi and fd[2] ~= nil and not fd.csum and st.value ~= nil then
            put_field(p, fd, field_bit(h, e), st.value)
          end
        end
      end
      l.finish = function(_, p, ctx)
        local csum
        for _, e in ipairs(h.fields) do
          local fd, st = e.fd, e.st
          if (fd.part or 1) == pi then
            local lk = fd.auto == "ip4_len" and "ip4_len" or fd.auto == "ip6_len" and "ip6_len" or fd.unset
            if st.choice == "auto" and not st.fixed_auto and lk then
              local v = length_of(lk, ctx)
              if v < 0 or v > 65535 then error(("%s: a length of %d does not fit"):format(e.path, v), 0) end
              put_field(p, fd, field_bit(h, e), v)
            end
            if fd.csum then csum = e end
          end
        end
        if csum then
          local at = field_bit(h, csum) / 8
          p[at], p[at + 1] = 0, 0
          local kind, st = csum.fd.csum, csum.st
          local c
          if kind == "ip4" then
            c = cs.finish(cs.sum(p, part.len))
          else
            local n = ctx.size - ctx.off
            local init = 0
            if kind == "tcp" or kind == "udp" or (kind == "plain" and part.name == "icmp6") then
              if not ctx.ip then
                if kind ~= "plain" then error(csum.path .. ": needs an IPv4 or IPv6 header before it", 0) end
              else
                init = ctx.ip:pseudo_sum(part.ipproto, n)
              end
            end
            c = cs.finish(cs.sum(p, n, init))
            if kind == "udp" and c == 0 then c = 0xffff end
          end
          if st.choice == "custom" then c = st.value
          elseif st.generated == "bad" then c = bit.bxor(c, 0x00ff) end
          stack.put16(p + at, c)
        end
      end
    end
    if part.ip == 4 then
      l.pseudo_sum = function(_, proto, len)
        local s, d = h.vals.src or 0, h.vals.dst or 0
        return math.floor(s / 65536) + s % 65536 + math.floor(d / 65536) + d % 65536 + proto + len
      end
    elseif part.ip == 6 then
      l.pseudo_sum = function(_, proto, len)
        return ip6_sum(h.vals.src or ip6.parse("::")) + ip6_sum(h.vals.dst or ip6.parse("::")) + proto + len
      end
    end
    out[#out + 1] = l
  end
  return out
end

-------------------------------------------------------------------------------
-- Size.

local PREDEFINED = {
  imix = { { 64, 7 }, { 570, 4 }, { 1518, 1 } },
  ipsec_imix = { { 90, 58.67 }, { 92, 2 }, { 594, 23.66 }, { 1418, 15.67 } },
  ipv6_imix = { { 60, 58.67 }, { 496, 2 }, { 594, 23.66 }, { 1518, 15.67 } },
  standard_imix = { { 58, 58.67 }, { 62, 2 }, { 594, 23.66 }, { 1518, 15.67 } },
  tcp_imix = { { 90, 58.67 }, { 92, 2 }, { 594, 23.66 }, { 1518, 15.67 } },
}

local function uint(v, path, lo, hi, def)
  if v == nil then return def end
  if not isint(v) or v < lo or v > hi then fail(path, "%s is not an integer in %d..%d", tostring(v), lo, hi) end
  return v
end

-- Flow.Size at path -> { kind, frames = { sizes on the wire } or spec, smallest, largest (on the wire) }
local function parse_size(s, path)
  if s == nil then return { kind = "fixed", fixed = 64, smallest = 64, largest = 64 } end
  object(s, path, "a size")
  check_keys(s, { choice = 1, fixed = 1, increment = 1, random = 1, weight_pairs = 1 }, path, "a size")
  local choice = s.choice
  if choice == nil then
    for _, k in ipairs({ "fixed", "increment", "random", "weight_pairs" }) do
      if s[k] ~= nil then choice = choice and "?" or k end
    end
    if choice == "?" then fail(path .. ".choice", "several sizes given without a choice") end
    choice = choice or "fixed"
  end
  if choice == "fixed" then
    local f = uint(s.fixed, path .. ".fixed", 0, 4294967295, 64)
    return { kind = "fixed", fixed = f, smallest = f, largest = f, path = path .. ".fixed" }
  elseif choice == "increment" then
    local ip = path .. ".increment"
    local o = s.increment == nil and {} or object(s.increment, ip, "a size increment")
    check_keys(o, { start = 1, ["end"] = 1, step = 1 }, ip, "a size increment")
    local a = uint(o.start, ip .. ".start", 1, 4294967295, 64)
    local b = uint(o["end"], ip .. ".end", 64, 4294967295, 1518)
    local st = uint(o.step, ip .. ".step", 0, 4294967295, 1)
    if st == 0 then fail(ip .. ".step", "0 never moves: use a fixed size") end
    if a > b then fail(ip .. ".start", "%d is above end %d", a, b) end
    local list = {}
    for x = a, b, st do
      list[#list + 1] = x
      if #list > 65536 then fail(ip .. ".step", "more than 65536 sizes from %d to %d", a, b) end
    end
    return { kind = "increment", list = list, smallest = a, largest = list[#list], path = ip }
  elseif choice == "random" then
    local rp = path .. ".random"
    local o = s.random == nil and {} or object(s.random, rp, "a random size")
    check_keys(o, { min = 1, max = 1 }, rp, "a random size")
    local lo = uint(o.min, rp .. ".min", 0, 4294967295, 64)
    local hi = uint(o.max, rp .. ".max", 0, 4294967295, 1518)
    if lo > hi then fail(rp .. ".min", "%d is above max %d", lo, hi) end
    return { kind = "random", lo = lo, hi = hi, smallest = lo, largest = hi, path = rp }
  elseif choice == "weight_pairs" then
    local wp = path .. ".weight_pairs"
    local o = s.weight_pairs == nil and {} or object(s.weight_pairs, wp, "weight pairs")
    check_keys(o, { choice = 1, predefined = 1, custom = 1 }, wp, "weight pairs")
    local wc = o.choice or (o.custom ~= nil and "custom" or "predefined")
    local pairs_
    if wc == "predefined" then
      local name = o.predefined == nil and "imix" or o.predefined
      pairs_ = PREDEFINED[name]
      if not pairs_ then
        fail(wp .. ".predefined", "'%s' is not imix, ipsec_imix, ipv6_imix, standard_imix or tcp_imix", tostring(name))
      end
      wp = wp .. ".predefined"
    elseif wc == "custom" then
      local l = o.custom == nil and {} or array(o.custom, wp .. ".custom")
      if #l == 0 then fail(wp .. ".custom", "empty: give at least one { size, weight } pair") end
      pairs_ = {}
      for i, e in ipairs(l) do
        local ep = ("%s.custom[%d]"):format(wp, i - 1)
        object(e, ep, "a weight pair")
        check_keys(e, { size = 1, weight = 1 }, ep, "a weight pair")
        local sz = uint(e.size, ep .. ".size", 12, 65535, 64)
        local w = e.weight == nil and 1 or e.weight
        if type(w) ~= "number" or w < 0 or w ~= w or w == math.huge then fail(ep .. ".weight", "%s is not a weight >= 0", tostring(w)) end
        pairs_[i] = { sz, w }
      end
      wp = wp .. ".custom"
    else
      fail(wp .. ".choice", "'%s' is not predefined or custom", tostring(wc))
    end
    local lo, hi, total = math.huge, 0, 0
    for _, p in ipairs(pairs_) do
      if p[1] < lo then lo = p[1] end
      if p[1] > hi then hi = p[1] end
      total = total + p[2]
    end
    if total <= 0 then fail(wp, "the weights add up to 0") end
    return { kind = "weighted", pairs = pairs_, smallest = lo, largest = hi, path = wp }
  end
  fail(path .. ".choice", "'%s' is not fixed, increment, random or weight_pairs", tostring(choice))
end

-------------------------------------------------------------------------------
-- compile

-- compile reads a flow's packet and size; the rest of the flow is the server's

-- JSON null (json.null) is an absent value, as in the model's protobuf form
local function strip_nulls(v)
  if type(v) ~= "table" then return v end
  local out = {}
  for k, x in pairs(v) do
    if not (type(x) == "table" and x == json.null) then out[k] = strip_nulls(x) end
  end
  return setmetatable(out, getmetatable(v) ~= nil and getmetatable(v) ~= getmetatable(json.null) and getmetatable(v) or nil)
end

function M.compile(flow, path, opts)
  path = path or "flow"
  opts = opts or {}
  object(flow, path, "a flow")
  flow = strip_nulls(flow)
  local pk = flow.packet
  if pk == nil or (type(pk) == "table" and next(pk) == nil) then pk = { { choice = "ethernet" } } end
  array(pk, path .. ".packet")
  local hs = {}
  for i, obj in ipairs(pk) do hs[i] = parse_header(obj, ("%s.packet[%d]"):format(path, i - 1), i) end
  resolve_autos(hs, opts)
  local sz = parse_size(flow.size, path .. ".size")
  -- the layers, their offsets and the surge names of the varying fields
  local layers, hdr, seen = {}, 0, {}
  for i, h in ipairs(hs) do
    h.layer_index = #layers + 1
    for _, l in ipairs(layers_of(h, hs, i)) do layers[#layers + 1] = l; hdr = hdr + l.len end
  end
  local smallest = sz.smallest - FCS
  local largest = sz.largest - FCS
  if smallest < hdr then
    fail(sz.path or (path .. ".size"), "a frame of %d bytes cannot hold the headers: they take %d bytes (%d with the FCS)",
      sz.smallest, hdr, hdr + FCS)
  end
  if largest > M.MAX_FRAME then
    fail(sz.path or (path .. ".size"), "%d bytes is above surge's largest frame, %d bytes with the FCS",
      sz.largest, M.MAX_FRAME + FCS)
  end
  -- opts.payload: what follows the headers (surge.proto.payload: a string, "inc", ...), e.g. the
  -- server's measurement tag; the checksums cover it
  local ok, t = pcall(stack.build, { size = largest, payload = opts.payload, unpack(layers) }, 1)
  if not ok then fail(path .. ".packet", "%s", type(t) == "table" and t.message or tostring(t)) end
  -- the fields that vary, named as surge.flow finds them (LAYER#K.FIELD)
  local fields, fpaths, tags = {}, {}, {}
  local varying_from, custom_csum, gre_csum = math.huge, nil, nil
  local li = 0
  for _, h in ipairs(hs) do
    local part_layer = {}
    for pi, part in ipairs(h.parts) do
      li = li + 1
      seen[part.name] = (seen[part.name] or 0) + 1
      part_layer[pi] = { name = part.name, nth = seen[part.name], off = t.layers[li].off }
    end
    for _, e in ipairs(h.fields) do
      local pl = part_layer[e.fd.part or 1]
      if e.st.spec then
        local fname = field_name(h, e)
        fields[#fields + 1] = { ("%s#%d.%s"):format(pl.name, pl.nth, fname), e.st.spec }
        fpaths[#fields] = e.path
        if pl.off < varying_from then varying_from = pl.off end
      end
      if e.fd.csum and e.st.choice == "custom" then custom_csum = custom_csum or e.path end
      if e.fd.csum == "gre" then gre_csum = gre_csum or { path = e.path, off = pl.off } end
      if not sz.fixed and e.st.choice ~= "auto" and (e.fd.length) then
        fail(e.path, "a set length with a varying frame size: surge.size rewrites this length for every size; " ..
          "leave it unset (auto) or use a fixed size")
      end
      if not sz.fixed and e.st.choice == "auto" and (e.fd.unset == "gtp1_len" or e.fd.unset == "gtp2_len") then
        fail(e.path, "a GTP message length follows a fixed frame size only: surge.size rewrites IPv4, IPv6 " ..
          "and UDP lengths; give a fixed size or a set message_length")
      end
      for _, tg in ipairs(h.tags) do
        if tg.entry == e then
          tags[#tags + 1] = { name = tg.t.name, offset = pl.off * 8 + field_bit(h, e) + tg.t.offset,
                              length = tg.t.length, path = tg.path }
        end
      end
    end
    if h.name == "custom" then
      for _, tg in ipairs(h.tags) do
        tags[#tags + 1] = { name = tg.t.name, offset = part_layer[1].off * 8 + tg.t.offset, length = tg.t.length,
                            path = tg.path }
      end
    end
  end
  local varies = #fields > 0 or not sz.fixed
  if custom_csum and varies then
    fail(custom_csum, "a custom checksum with varying fields or sizes: surge keeps checksums valid per " ..
      "packet, so a fixed custom value cannot stay as given")
  end
  if gre_csum and (varying_from >= gre_csum.off or not sz.fixed) and varies then
    fail(gre_csum.path, "a GRE checksum over varying fields or sizes: surge.flow and surge.size do not " ..
      "update GRE checksums")
  end
  local out = { template = t, fields = fields, combine = "cycle", tags = tags, header_bytes = hdr,
                smallest = sz.smallest, largest = sz.largest }
  if #fields > 0 then
    local fok, f = pcall(flow_mod.new, { template = t, fields = fields, combine = "cycle" })
    if not fok then
      -- name the pattern surge.flow refused
      local msg = tostring(f)
      for i, fe in ipairs(fields) do
        if not pcall(flow_mod.new, { template = t, fields = { fe }, combine = "cycle" }) then
          fail(fpaths[i], "%s", (msg:gsub("^.-surge%.flow: ", "surge.flow: ")))
        end
      end
      fail(path .. ".packet", "%s", msg)
    end
    out.flow = f
  end
  if sz.kind == "fixed" then
    out.size = sz.fixed - FCS
  else
    local spec
    if sz.kind == "increment" then
      local l = {}
      for i, x in ipairs(sz.list) do l[i] = x - FCS end
      spec = { seq = l }
    elseif sz.kind == "random" then
      spec = { uniform = { sz.lo - FCS, sz.hi - FCS }, seed = 1 }
    else
      local l = {}
      for i, p in ipairs(sz.pairs) do l[i] = { p[1] - FCS, p[2] } end
      spec = { weighted = l, seed = 1 }
    end
    local sok, s = pcall(size_mod.new, spec, { min = math.max(14, hdr), max = largest })
    if not sok then fail(sz.path, "%s", tostring(s)) end
    local bok, bt = pcall(s.template, s, t)
    if not bok then fail(sz.path, "%s", tostring(bt)) end
    out.size = s
  end
  return out
end

-- For tests and the docs: the headers this module builds and refuses.
M.HEADERS = H
M.PRIORITY = PRIORITY
M.REFUSED = REFUSED
M.get_bits = get_bits

return M
