-- otg/model.lua - the part of the OTG 1.3.0 model (openapi-1.3.0.yaml) surge
-- implements, as otg/schema.lua nodes: per object its fields, types,
-- defaults and ranges. A field of the model surge does not honour is refused
-- by name with its path (`devices[0].bgp: not implemented by surge`), a
-- field the model does not have as unknown; docs/otg.md has the table.
--
-- HEADERS says, per packet header surge builds, how each OTG field maps on
-- surge.proto's layer options (`opt`) and surge.flow's fields (`flow`,
-- nil: the field is fixed per flow; a varying pattern on it is refused).
local ip4 = require "surge.proto.ip4"
local ip6 = require "surge.proto.ip6"

local M = {}

local NOT = true   -- refused: the model's, not surge's

local function mac_ok(v)
  if not v:match("^%x%x:%x%x:%x%x:%x%x:%x%x:%x%x$") then return "is not a MAC address (aa:bb:cc:dd:ee:ff)" end
end
local function ip4_ok(v)
  if not pcall(ip4.addr, v, "", 1) then return "is not an IPv4 address" end
end
local function ip6_ok(v)
  if not ip6.parse(v) then return "is not an IPv6 address" end
end

-- The value node of a pattern: kind mac, ipv4, ipv6 or an integer of `bits`.
local function value_node(kind, bits, default)
  if kind == "mac" then return { t = "string", valid = mac_ok, default = default } end
  if kind == "ipv4" then return { t = "string", valid = ip4_ok, default = default } end
  if kind == "ipv6" then return { t = "string", valid = ip6_ok, default = default } end
  return { t = "int", min = 0, max = 2 ^ (bits or 32) - 1, default = default }
end

local STEP = { mac = "00:00:00:00:00:01", ipv4 = "0.0.0.1", ipv6 = "::1" }
local MAX_VALUES = 65536   -- values a pattern lists, counts an increment takes

-- A Pattern.Flow.* object: value, values, increment, decrement (and auto
-- where the model has it, the default then); random and metric_tags refused.
local function pattern(f)
  if f.generated then   -- checksums: generated (surge's) or custom (refused)
    return { t = "choice", default = "generated", choices = { generated = { t = "enum", values = { "good", "bad" },
      default = "good", only = "good" }, custom = false } }
  end
  local kind, bits, default = f.kind, f.bits, f.default
  local function ramp()
    return { t = "object", fields = { start = value_node(kind, bits, default),
                                      step = value_node(kind, bits, STEP[kind] or 1),
                                      count = { t = "int", min = 1, max = MAX_VALUES, default = 1 } } }
  end
  local choices = { value = value_node(kind, bits, default),
                    values = { t = "array", items = value_node(kind, bits), max = MAX_VALUES },
                    increment = ramp(), decrement = ramp(), random = false }
  if f.auto then choices.auto = value_node(kind, bits) end
  local node = { t = "choice", default = f.auto and "auto" or "value", choices = choices, fields = {},
                 refused = { metric_tags = NOT } }
  return node
end

-- OTG header -> surge layer, and per OTG field: kind, bits, default, the
-- layer option, the flow field. auto: the model's "auto" choice (surge
-- computes it: lengths, types, protocols); refused: the model's field that
-- surge does not set.
M.HEADERS = {
  ethernet = { layer = "eth", fields = {
    dst = { kind = "mac", default = "00:00:00:00:00:00", opt = "dst", flow = "dst", auto = true },
    src = { kind = "mac", default = "00:00:00:00:00:00", opt = "src", flow = "src" },
    ether_type = { kind = "int", bits = 16, default = 65535, opt = "type", flow = "type", auto = true },
    pfc_queue = { refused = true } } },
  vlan = { layer = "vlan", fields = {
    priority = { kind = "int", bits = 3, default = 0, opt = "pcp", flow = "pcp" },
    cfi = { kind = "int", bits = 1, default = 0, opt = "dei" },
    id = { kind = "int", bits = 12, default = 0, opt = "id", flow = "id" },
    -- the model's default 65535 is no TPID: surge's 0x8100 then
    tpid = { kind = "int", bits = 16, default = 65535, opt = "tpid", unset = 65535 } } },
  ipv4 = { layer = "ip4", fields = {
    version = { kind = "int", bits = 4, default = 4, only = 4 },
    header_length = { kind = "int", bits = 4, default = 5, auto = true, only = 5 },
    priority = { refused = true }, options = { refused = true },
    total_length = { kind = "int", bits = 16, default = 46, auto = true, auto_only = true },
    identification = { kind = "int", bits = 16, default = 0, opt = "id", flow = "id" },
    reserved = { kind = "int", bits = 1, default = 0, only = 0 },
    dont_fragment = { kind = "int", bits = 1, default = 0, opt = "df", bool = true },
    more_fragments = { kind = "int", bits = 1, default = 0, only = 0 },
    fragment_offset = { kind = "int", bits = 13, default = 0, only = 0 },
    time_to_live = { kind = "int", bits = 8, default = 64, opt = "ttl", flow = "ttl" },
    protocol = { kind = "int", bits = 8, default = 61, opt = "proto", auto = true },
    header_checksum = { generated = true },
    src = { kind = "ipv4", default = "0.0.0.0", opt = "src", flow = "src" },
    dst = { kind = "ipv4", default = "0.0.0.0", opt = "dst", flow = "dst" } } },
  ipv6 = { layer = "ip6", fields = {
    version = { kind = "int", bits = 4, default = 6, only = 6 },
    traffic_class = { kind = "int", bits = 8, default = 0, opt = "tclass", flow = "tclass" },
    flow_label = { kind = "int", bits = 20, default = 0, opt = "flow", flow = "flow" },
    payload_length = { kind = "int", bits = 16, default = 0, auto = true, auto_only = true },
    next_header = { kind = "int", bits = 8, default = 59, opt = "proto", auto = true },
    hop_limit = { kind = "int", bits = 8, default = 64, opt = "hlim", flow = "hlim" },
    src = { kind = "ipv6", default = "::0", opt = "src", flow = "src" },
    dst = { kind = "ipv6", default = "::0", opt = "dst", flow = "dst" } } },
  udp = { layer = "udp", fields = {
    src_port = { kind = "int", bits = 16, default = 0, opt = "sport", flow = "sport" },
    dst_port = { kind = "int", bits = 16, default = 0, opt = "dport", flow = "dport" },
    length = { kind = "int", bits = 16, default = 0, only = 0 },   -- 0: surge computes it
    checksum = { generated = true } } },
  tcp = { layer = "tcp", fields = {
    src_port = { kind = "int", bits = 16, default = 0, opt = "sport", flow = "sport" },
    dst_port = { kind = "int", bits = 16, default = 0, opt = "dport", flow = "dport" },
    seq_num = { kind = "int", bits = 32, default = 0, opt = "seq", flow = "seq" },
    ack_num = { kind = "int", bits = 32, default = 0, opt = "ack", flow = "ack" },
    window = { kind = "int", bits = 16, default = 0, opt = "window", flow = "window" },
    data_offset = { refused = true }, ecn_ns = { refused = true }, ecn_cwr = { refused = true },
    ecn_echo = { refused = true }, ctl_urg = { refused = true }, ctl_ack = { refused = true },
    ctl_psh = { refused = true }, ctl_rst = { refused = true }, ctl_syn = { refused = true },
    ctl_fin = { refused = true }, checksum = { generated = true } } },
}

-- The model's other headers of Flow.Header, refused by name.
local OTHER_HEADERS = { "custom", "pfcpause", "ethernetpause", "icmp", "icmpv6", "ppp", "igmpv1", "mpls",
                        "snmpv2c", "rsvp", "vxlan", "gre", "gtpv1", "gtpv2", "arp" }

local function header_node(h)
  local fields, refused = {}, {}
  for name, f in pairs(h.fields) do
    if f.refused then refused[name] = NOT
    else
      local n = pattern(f)
      if f.only ~= nil and n.choices.value then n.choices.value.only = f.only end
      if f.auto_only then n.choices.value = false end
      if (f.only ~= nil or f.auto_only) and not f.generated then
        n.choices.values, n.choices.increment, n.choices.decrement = false, false, false
      end
      fields[name] = n
    end
  end
  return { t = "object", fields = fields, refused = refused }
end

local header_choices = {}
for name, h in pairs(M.HEADERS) do header_choices[name] = header_node(h) end
for _, name in ipairs(OTHER_HEADERS) do header_choices[name] = false end
local HEADER = { t = "choice", default = "ethernet", choices = header_choices }

local NAME = { t = "string", max = 256 }
local DELAY = { t = "choice", default = "bytes", choices = { bytes = { t = "number", min = 0, only = 0, default = 0 },
  nanoseconds = { t = "number", min = 0, only = 0 }, microseconds = { t = "number", min = 0, only = 0 } } }

-- The flow's size: fixed, with the FCS (the model's frame size); 64..9600.
M.FLOW = { t = "object", required = { "tx_rx", "name" }, refused = { egress_packet = NOT }, fields = {
  name = NAME,
  tx_rx = { t = "choice", default = "port", choices = {
    port = { t = "object", required = { "tx_name" }, fields = { tx_name = NAME, rx_name = NAME,
      rx_names = { t = "array", items = NAME, max = 64 } } },
    device = false } },
  packet = { t = "array", items = HEADER, max = 16 },
  size = { t = "choice", default = "fixed", choices = { fixed = { t = "int", min = 64, max = 9600, default = 64 },
    increment = false, random = false, weight_pairs = false } },
  rate = { t = "choice", default = "pps", choices = { pps = { t = "int", min = 1, max = 2 ^ 40, default = 1000 },
    percentage = { t = "number", min = 0.001, max = 100, default = 100 },
    bps = false, kbps = false, mbps = false, gbps = false } },
  duration = { t = "choice", default = "continuous", choices = {
    fixed_packets = { t = "object", fields = { packets = { t = "int", min = 1, max = 2 ^ 48, default = 1 },
      gap = { t = "int", min = 0, default = 12, only = 12 }, delay = DELAY } },
    continuous = { t = "object", fields = { gap = { t = "int", min = 0, default = 12, only = 12 }, delay = DELAY } },
    fixed_seconds = false, burst = false } },
  metrics = { t = "object", refused = { rx_tx_ratio = NOT, latency = NOT, predefined_metric_tags = NOT },
    fields = { enable = { t = "bool", default = false }, loss = { t = "bool", default = false, only = false },
               timestamps = { t = "bool", default = false, only = false } } },
} }

M.PORT = { t = "object", required = { "name" }, fields = { name = NAME, location = { t = "string", max = 512 } } }

-- A device: every field but its name is a protocol surge does not emulate
-- yet (ethernets, ipv4, bgp, isis, ...), refused by name.
M.DEVICE = { t = "object", required = { "name" }, fields = { name = NAME },
  refused = { ethernets = NOT, ipv4_loopbacks = NOT, ipv6_loopbacks = NOT, isis = NOT, bgp = NOT, vxlan = NOT,
              rsvp = NOT, dhcp_server = NOT } }

M.CONFIG = { t = "object", fields = {
  ports = { t = "array", items = M.PORT, max = 64 },
  flows = { t = "array", items = M.FLOW, max = 4096 },
  devices = { t = "array", items = M.DEVICE },
}, refused = { lags = NOT, layer1 = NOT, captures = NOT, events = NOT, options = NOT, lldp = NOT } }

M.CONTROL_STATE = { t = "choice", choices = {
  traffic = { t = "choice", choices = { flow_transmit = { t = "object", required = { "state" }, fields = {
    flow_names = { t = "array", items = NAME },
    state = { t = "enum", values = { "start", "stop", "pause", "resume" } } } } } },
  port = false, protocol = false } }

M.METRICS_REQUEST = { t = "choice", default = "port", choices = {
  port = { t = "object", fields = { port_names = { t = "array", items = NAME },
                                    column_names = { t = "array", items = NAME } } },
  flow = { t = "object", refused = { tagged_metrics = NOT }, fields = { flow_names = { t = "array", items = NAME },
                                    metric_names = { t = "array", items = NAME } } },
  bgpv4 = false, bgpv6 = false, isis = false, lag = false, lacp = false, lldp = false, rsvp = false } }

return M
