-- otg/model.lua - the part of the OTG 1.3.0 model (openapi-1.3.0.yaml) surge
-- implements, as otg/schema.lua nodes: per object its fields, types,
-- defaults and ranges. A field of the model surge does not honour is refused
-- by name with its path (`devices[0].bgp: not implemented by surge`), a
-- field the model does not have as unknown; docs/otg.md has the table.
--
-- A flow's packet and size are read by otg/packet.lua (every header of the
-- model it builds; its refusals name their paths too).

local M = {}

local NOT = true   -- refused: the model's, not surge's

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
  -- the packet and the size: otg/packet.lua reads them (every header of the model it builds,
  -- refusals by path)
  packet = { t = "any" },
  size = { t = "any" },
  rate = { t = "choice", default = "pps", choices = { pps = { t = "int", min = 1, max = 1e9, default = 1000 },
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
  protocol = false } }

M.CAPTURE_REQUEST = { t = "object", required = { "port_name" }, fields = { port_name = NAME } }

M.METRICS_REQUEST = { t = "choice", default = "port", choices = {
  port = { t = "object", fields = { port_names = { t = "array", items = NAME },
                                    column_names = { t = "array", items = NAME } } },
  flow = { t = "object", refused = { tagged_metrics = NOT }, fields = { flow_names = { t = "array", items = NAME },
                                    metric_names = { t = "array", items = NAME } } },
  bgpv4 = false, bgpv6 = false, isis = false, lag = false, lacp = false, lldp = false, rsvp = false } }

return M
