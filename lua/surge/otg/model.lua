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
    device = false } },
  -- the packet and the size: otg/packet.lua reads them (every header of the model it builds,
  -- refusals by path)
  packet = { t = "any" },
  size = { t = "any" },
  -- pps, or bits a second of whole frames (with the FCS, without preamble
  -- and inter-frame gap), or a percentage of the port's line rate (at L1:
  -- frames + 20 bytes): otg/traffic.lua turns each into frames a second
  rate = { t = "choice", default = "pps", choices = { pps = { t = "int", min = 1, max = 2 ^ 40, default = 1000 },
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
