-- otg/model.lua - the part of the OTG 1.3.0 model (openapi-1.3.0.yaml) surge
-- implements, as otg/schema.lua nodes: per object its fields, types,
-- defaults and ranges. A field of the model surge does not honour is refused
-- by name with its path (`devices[0].bgp: not implemented by surge`), a
-- field the model does not have as unknown; docs/otg.md has the table.
--
-- A flow's packet and size are read by otg/packet.lua (every header of the
-- model it builds; its refusals name their paths too).

local eth = require("surge.proto.eth")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")

local M = {}

-- The most frames a second a flow may ask, whatever its rate's unit: the
-- pacer's bound (a higher rate would fail the start).
M.MAX_PPS = 1e9

local NOT = true   -- refused: the model's, not surge's

local NAME = { t = "string", max = 256 }
-- A delay before a flow's first packet, an inter-burst gap: bytes (at the
-- port's line rate: otg/traffic.lua converts them when the port's speed is
-- known), nanoseconds or microseconds.
local function gap_node(def)
  return { t = "choice", default = "bytes", choices = {
    bytes = { t = "number", min = 0, max = 1e15, default = def[1] },
    nanoseconds = { t = "number", min = 0, max = 1e15, default = def[2] },
    microseconds = { t = "number", min = 0, max = 1e12, default = def[3] } } }
end
local DELAY = gap_node({ 0, 0, 0 })
local GAP = { t = "int", min = 0, default = 12, only = 12 }   -- the minimum inter-frame gap: the wire's own
local function positive(x) if x <= 0 then return "sends nothing: give a rate above 0" end end

-- The flow's size: fixed, with the FCS (the model's frame size); 64..9600.
M.FLOW = { t = "object", required = { "tx_rx", "name" }, refused = { egress_packet = NOT }, fields = {
  name = NAME,
  tx_rx = { t = "choice", default = "port", choices = {
    port = { t = "object", required = { "tx_name" }, fields = { tx_name = NAME, rx_name = NAME,
      rx_names = { t = "array", items = NAME, max = 64 } } },
    -- device names: otg/devices.lua finds them (ipv4/ipv6 names of devices' ethernets)
    device = { t = "object", required = { "tx_names", "rx_names" }, fields = {
      mode = { t = "enum", values = { "mesh", "one_to_one" }, default = "mesh" },
      tx_names = { t = "array", items = NAME, max = 64 }, rx_names = { t = "array", items = NAME, max = 64 } } } } },
  -- the packet and the size: otg/packet.lua reads them (every header of the model it builds,
  -- refusals by path)
  packet = { t = "any" },
  size = { t = "any" },
  -- pps, or bits a second of whole frames (with the FCS, without preamble
  -- and inter-frame gap), or a percentage of the port's line rate (at L1:
  -- frames + 20 bytes): otg/traffic.lua turns each into frames a second;
  -- at most MAX_PPS (the pacer's bound) however asked
  rate = { t = "choice", default = "pps", choices = { pps = { t = "int", min = 1, max = M.MAX_PPS, default = 1000 },
    percentage = { t = "number", min = 0, max = 100, default = 100, valid = positive },
    bps = { t = "int", min = 672, max = 2 ^ 50, default = 1000000000 },
    kbps = { t = "int", min = 1, max = 2 ^ 40, default = 1000000 },
    mbps = { t = "int", min = 1, max = 2 ^ 30, default = 1000 },
    gbps = { t = "int", min = 1, max = 2 ^ 20, default = 1 } } },
  duration = { t = "choice", default = "continuous", choices = {
    fixed_packets = { t = "object", fields = { packets = { t = "int", min = 1, max = 2 ^ 48, default = 1 },
      gap = GAP, delay = DELAY } },
    fixed_seconds = { t = "object", fields = { seconds = { t = "number", min = 0, max = 1e9, default = 1,
      valid = function(x) if x <= 0 then return "sends nothing: give seconds above 0" end end },
      gap = GAP, delay = DELAY } },
    burst = { t = "object", fields = { bursts = { t = "int", min = 0, max = 2 ^ 32, default = 0 },
      packets = { t = "int", min = 1, max = 2 ^ 32, default = 1 }, gap = GAP,
      inter_burst_gap = gap_node({ 12, 96, 0.096 }) } },
    continuous = { t = "object", fields = { gap = GAP, delay = DELAY } } } },
  metrics = { t = "object", refused = { rx_tx_ratio = NOT, predefined_metric_tags = NOT },
    fields = { enable = { t = "bool", default = false }, loss = { t = "bool", default = false },
               timestamps = { t = "bool", default = false },
               latency = { t = "object", fields = { enable = { t = "bool", default = false },
                 mode = { t = "enum", values = { "store_forward", "cut_through" }, default = "store_forward" } } } } },
} }

M.PORT = { t = "object", required = { "name" }, fields = { name = NAME, location = { t = "string", max = 512 } } }

-- Text formats of the model (format: mac, ipv4, ipv6): parsed by surge.proto's own readers.
local function format(parse, what)
  return function(v) if not pcall(parse, v, what, 1) then return "is not " .. what end end
end
local MAC = { t = "string", max = 17, valid = format(eth.mac, "a MAC address (aa:bb:cc:dd:ee:ff)") }
local IP4 = { t = "string", max = 15, valid = format(ip4.addr, "an IPv4 address") }
local IP6 = { t = "string", max = 45, valid = format(ip6.addr, "an IPv6 address") }
local function gw_mac()
  local zero = { t = "string", max = 17, valid = MAC.valid, default = "00:00:00:00:00:00" }
  return { t = "choice", default = "auto", choices = { auto = zero, value = zero } }
end

-- A device: ethernets with IPv4 and IPv6 addresses (each with its gateway),
-- answered for and resolved by surge's neighbour code (otg/devices.lua);
-- its protocols (bgp, isis, ...) and VLANs refused by name.
M.DEVICE = { t = "object", required = { "name" }, fields = { name = NAME,
  ethernets = { t = "array", max = 256, items = { t = "object", required = { "mac", "name" }, refused = { vlans = NOT },
    fields = { name = NAME, mac = MAC, mtu = { t = "int", min = 64, max = 65535, default = 1500 },
      connection = { t = "choice", choices = { port_name = NAME, lag_name = false, vxlan_name = false } },
      ipv4_addresses = { t = "array", max = 256, items = { t = "object", required = { "gateway", "address", "name" },
        fields = { name = NAME, address = IP4, gateway = IP4, prefix = { t = "int", min = 1, max = 32, default = 24 },
                   gateway_mac = gw_mac() } } },
      ipv6_addresses = { t = "array", max = 256, items = { t = "object", required = { "gateway", "address", "name" },
        fields = { name = NAME, address = IP6, gateway = IP6, prefix = { t = "int", min = 1, max = 128, default = 64 },
                   gateway_mac = gw_mac() } } } } } } },
  refused = { ipv4_loopbacks = NOT, ipv6_loopbacks = NOT, isis = NOT, bgp = NOT, vxlan = NOT, rsvp = NOT } }

-- A capture (otg/capture.lua): its filters are read there (refused when any).
M.CAPTURE = { t = "object", required = { "port_names", "name" }, fields = { name = NAME,
  port_names = { t = "array", items = NAME, max = 64 }, filters = { t = "any" },
  overwrite = { t = "bool", default = true }, packet_size = { t = "int", min = 1, max = 65535 },
  format = { t = "enum", values = { "pcap", "pcapng" }, default = "pcap" } } }

local SPEEDS = { "speed_10_fd_mbps", "speed_10_hd_mbps", "speed_100_fd_mbps", "speed_100_hd_mbps", "speed_1_gbps",
  "speed_10_gbps", "speed_25_gbps", "speed_40_gbps", "speed_50_gbps", "speed_100_gbps", "speed_200_gbps",
  "speed_400_gbps", "speed_800_gbps" }
-- layer1 (otg/ports.lua): speed only as the device runs, mtu and promiscuous applied at the port's open.
M.LAYER1 = { t = "object", required = { "port_names", "name" }, fields = { name = NAME,
  port_names = { t = "array", items = NAME, max = 64 }, speed = { t = "enum", values = SPEEDS },
  promiscuous = { t = "bool", default = true }, mtu = { t = "int", min = 64, max = 9000, default = 1500 } },
  refused = { media = NOT, ieee_media_defaults = NOT, auto_negotiate = NOT, auto_negotiation = NOT,
              flow_control = NOT } }

M.CONFIG = { t = "object", fields = {
  ports = { t = "array", items = M.PORT, max = 64 },
  captures = { t = "array", items = M.CAPTURE, max = 64 },
  layer1 = { t = "array", items = M.LAYER1, max = 64 },
  flows = { t = "array", items = M.FLOW, max = 4096 },
  devices = { t = "array", items = M.DEVICE },
}, refused = { lags = NOT, events = NOT, options = NOT, lldp = NOT } }

M.CONTROL_STATE = { t = "choice", choices = {
  traffic = { t = "choice", choices = { flow_transmit = { t = "object", required = { "state" }, fields = {
    flow_names = { t = "array", items = NAME },
    state = { t = "enum", values = { "start", "stop", "pause", "resume" } } } } } },
  port = { t = "choice", choices = {
    capture = { t = "object", required = { "state" }, fields = { port_names = { t = "array", items = NAME },
      state = { t = "enum", values = { "start", "stop" } } } },
    link = { t = "object", required = { "state" }, fields = { port_names = { t = "array", items = NAME },
      state = { t = "enum", values = { "up", "down" } } } } } },
  -- the devices (otg/action.lua); their other protocols are refused by path
  protocol = { t = "choice", choices = {
    all = { t = "object", required = { "state" }, fields = { state = { t = "enum", values = { "start", "stop" } } } },
    route = false, lacp = false, bgp = false, isis = false } } } }

-- /control/action: a ping from device addresses (otg/action.lua); one
-- destination a request, both named (the model leaves them optional).
local function ping(ip)
  return { t = "choice", choices = { ping = { t = "object", fields = { requests = { t = "array", max = 1024,
    items = { t = "object", required = { "src_name", "dst_ip" }, fields = { src_name = NAME, dst_ip = ip } } } } } } }
end
M.CONTROL_ACTION = { t = "choice", choices = { protocol = { t = "choice", choices = {
  ipv4 = ping(IP4), ipv6 = ping(IP6), bgp = false } } } }

M.CAPTURE_REQUEST = { t = "object", required = { "port_name" }, fields = { port_name = NAME } }

M.METRICS_REQUEST = { t = "choice", default = "port", choices = {
  port = { t = "object", fields = { port_names = { t = "array", items = NAME },
                                    column_names = { t = "array", items = NAME } } },
  flow = { t = "object", fields = { flow_names = { t = "array", items = NAME },
                                    metric_names = { t = "array", items = NAME },
    -- the flows' metric tags (otg/traffic.lua): per value of the tagged bits seen
    tagged_metrics = { t = "object", fields = { include = { t = "bool", default = true },
      include_empty_metrics = { t = "bool", default = false },
      metric_names = { t = "array", items = { t = "enum", values = { "frames_tx", "frames_rx", "bytes_tx", "bytes_rx",
        "frames_tx_rate", "frames_rx_rate" } } },
      filters = { t = "array", items = { t = "object", fields = { name = NAME,
        values = { t = "array", items = NAME } } } } } } } },
  bgpv4 = false, bgpv6 = false, isis = false, lag = false, lacp = false, lldp = false, rsvp = false } }

-- /monitor/states: the neighbours surge's devices resolved (otg/devices.lua).
local ETH_NAMES = { t = "object", fields = { ethernet_names = { t = "array", items = NAME } } }
M.STATES_REQUEST = { t = "choice", default = "ipv4_neighbors", choices = {
  ipv4_neighbors = ETH_NAMES, ipv6_neighbors = ETH_NAMES,
  bgp_prefixes = false, isis_lsps = false, lldp_neighbors = false, rsvp_lsps = false } }

return M
