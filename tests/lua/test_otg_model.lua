-- surge otg's model checks and flow compiler, without HTTP: every refusal
-- names its JSON path, defaults are the model's, a flow's packet (read by
-- otg/packet.lua) gives the frames its patterns mean, and the frame carries
-- the flow's tag right after its headers (docs/otg.md).
local ffi = require("ffi")
local json = require("surge.results.json")
local schema = require("surge.otg.schema")
local model = require("surge.otg.model")
local flows = require("surge.otg.flows")
local devices = require("surge.otg.devices")

local T = {}

local function flow(extra)
  local f = { name = "f", tx_rx = { choice = "port", port = { tx_name = "p1" } } }
  for k, v in pairs(extra or {}) do f[k] = v end
  return { ports = json.array({ { name = "p1", location = "net_ring0" } }), flows = json.array({ f }) }
end

local function errors_of(cfg)
  local out, errs = schema.check(model.CONFIG, json.decode(json.encode(cfg)), "")
  assert(out == nil, "accepted: " .. json.encode(cfg))
  return table.concat(errs, "\n")
end

local function has(text, needle)
  assert(text:find(needle, 1, true), ("no '%s' in:\n%s"):format(needle, text))
end

-- the errors of set_config's checks (the model's, then the flow compiler's)
local function compile_errors(cfg)
  local out, errs = schema.check(model.CONFIG, json.decode(json.encode(cfg)), "")
  if not out then return table.concat(errs, "\n") end
  local ok, spec = pcall(flows.compile, out.flows[1], 0, { p1 = 0 }, "flows[0]")
  if ok then ok, spec = pcall(flows.build, spec) end
  assert(not ok, "accepted: " .. json.encode(cfg))
  return type(spec) == "table" and (spec.path .. ": " .. spec.msg) or tostring(spec)
end

function T.refusals_name_their_path()
  has(errors_of({ devices = json.array({ { name = "d", bgp = {} } }) }), "devices[0].bgp: not implemented by surge")
  has(errors_of({ lags = json.array({}) }), "lags: not implemented by surge")
  has(errors_of({ colour = 1 }), "colour: unknown field (not in the OTG 1.3.0 model)")
  has(errors_of(flow({ rate = { choice = "fast" } })), "flows[0].rate.choice: 'fast' is not one of")
  has(errors_of(flow({ rate = { choice = "pps", pps = "x" } })), "flows[0].rate.pps: expected an integer, got 'x'")
  has(errors_of(flow({ rate = { choice = "gbps", gbps = 0 } })), "flows[0].rate.gbps: 0 outside 1..")
  has(errors_of(flow({ rate = { choice = "bps", bps = 100 } })), "flows[0].rate.bps: 100 outside 672..")
  has(errors_of(flow({ rate = { choice = "percentage", percentage = 0 } })),
    "flows[0].rate.percentage: 0 sends nothing")
  has(errors_of(flow({ rate = { choice = "percentage", percentage = 100.5 } })),
    "flows[0].rate.percentage: 100.5 outside 0..100")
  has(errors_of(flow({ duration = { choice = "fixed_seconds", fixed_seconds = { seconds = 0 } } })),
    "flows[0].duration.fixed_seconds.seconds: 0 sends nothing")
  has(errors_of(flow({ duration = { choice = "burst", burst = { packets = 0 } } })),
    "flows[0].duration.burst.packets: 0 outside 1..")
  has(errors_of(flow({ duration = { choice = "fixed_packets", fixed_packets = { delay = { choice = "microseconds",
    microseconds = -1 } } } })), "flows[0].duration.fixed_packets.delay.microseconds: -1 outside 0..")
  has(errors_of(flow({ metrics = { enable = true, latency = { enable = true, mode = "fifo" } } })),
    "flows[0].metrics.latency.mode: 'fifo' is not one of store_forward, cut_through")
  has(errors_of(flow({ metrics = { enable = true, rx_tx_ratio = {} } })),
    "flows[0].metrics.rx_tx_ratio: not implemented by surge")
  has(errors_of(flow({ duration = { choice = "continuous", continuous = { gap = 5 } } })),
    "flows[0].duration.continuous.gap: 5: surge implements only 12 (the model's default)")
  has(compile_errors(flow({ metrics = { latency = { enable = true } } })),
    "flows[0].metrics.latency.enable: needs metrics.enable true")
  has(compile_errors(flow({ size = { choice = "fixed", fixed = 64 }, packet = json.array({ { choice = "ethernet" },
    { choice = "ipv4" }, { choice = "udp" } }), metrics = { enable = true, latency = { enable = true } } })),
    "flows[0].size: 64 leaves 18 bytes after the headers: the flow's metrics need 22")
  -- the probe's stamp would leave a checksum over it wrong: ICMP, a tunnel's inner UDP
  has(compile_errors(flow({ size = { choice = "fixed", fixed = 128 }, packet = json.array({ { choice = "ethernet" },
    { choice = "ipv4" }, { choice = "icmp" } }), metrics = { enable = true, latency = { enable = true } } })),
    "flows[0].metrics.latency.enable: the latency probe's timestamp, written as each frame leaves, would invalidate "
    .. "this packet's icmp checksum")
  has(compile_errors(flow({ size = { choice = "fixed", fixed = 256 }, packet = json.array({ { choice = "ethernet" },
    { choice = "ipv4" }, { choice = "udp" }, { choice = "vxlan" }, { choice = "ethernet" }, { choice = "ipv4" },
    { choice = "udp" } }), metrics = { enable = true, latency = { enable = true } } })), "udp checksum")
  has(compile_errors(flow({ size = { choice = "increment", increment = { start = 128, ["end"] = 64 } } })),
    "flows[0].size.increment.start: 128 is above end 64")
  -- a flow's packet and size: otg/packet.lua's refusals, by path too
  has(compile_errors(flow({ size = { choice = "fixed", fixed = "big" } })), "flows[0].size.fixed: big is not an integer")
  has(compile_errors(flow({ packet = json.array({ { choice = "ethernet" }, { choice = "ipv4", ipv4 = {
    src = { choice = "value", value = "10.0.0.256" } } } }) })), "flows[0].packet[1].ipv4.src")
  has(compile_errors(flow({ packet = json.array({ { choice = "ethernet" }, { choice = "snmpv2c" } }) })),
    "flows[0].packet[1]")
  has(compile_errors(flow({ size = { choice = "fixed", fixed = 64 }, metrics = { enable = true },
    packet = json.array({ { choice = "ethernet" }, { choice = "vlan" }, { choice = "ipv4" }, { choice = "tcp" } }) })),
    "flows[0].size: 64 leaves 2 bytes after the headers: the flow's metrics need 6")
  has(compile_errors(flow({ packet = json.array({ { choice = "ethernet", ethernet = { src = { choice = "value",
    value = "02:00:00:00:00:01", metric_tags = json.array({ { name = "s", offset = 40, length = 8 } }) } } } }) })),
    "flows[0].packet[0].ethernet.src.metric_tags: needs the flow's metrics.enable true")
  has(compile_errors(flow({ metrics = { enable = true }, packet = json.array({ { choice = "ethernet", ethernet = {
    src = { choice = "value", value = "02:00:00:00:00:01", metric_tags = json.array({ { name = "s", offset = 8,
    length = 8 } }) }, dst = { choice = "value", value = "02:00:00:00:00:02", metric_tags = json.array({
    { name = "s", length = 4 } }) } } } }) })), "the tag name 's' is given twice")
  -- several errors of one request, all listed
  local e = errors_of({ lags = json.array({}), events = {}, x = 1,
    layer1 = json.array({ { name = "l", port_names = json.array({}), media = "fiber" } }) })
  has(e, "lags: not")
  has(e, "events: not")
  has(e, "layer1[0].media: not")
  has(e, "x: unknown field")
end

function T.defaults_are_the_models()
  local out = assert(schema.check(model.CONFIG, json.decode(json.encode(flow())), ""))
  local f = out.flows[1]
  assert(f.rate.choice == "pps" and f.rate.pps == 1000)
  assert(f.duration.choice == "continuous" and f.duration.continuous.gap == 12)
  assert(f.metrics.enable == false)
  -- int64s may come as text (snappi sends rate.pps so)
  out = assert(schema.check(model.CONFIG, json.decode(json.encode(flow({ rate = { choice = "pps", pps = "250" } }))),
    ""))
  assert(out.flows[1].rate.pps == 250)
  local spec = flows.compile(out.flows[1], 0, { p1 = 0 }, "flows[0]")
  assert(spec.size == 60 and spec.count == -1 and spec.pps_asked == 250)   -- size 64 with the FCS, continuous
end

local function compile(packet, extra)
  extra = extra or {}
  extra.packet = json.array(packet)
  local out, errs = schema.check(model.CONFIG, json.decode(json.encode(flow(extra))), "")
  assert(out, errs and table.concat(errs, "\n"))
  return flows.compile(out.flows[1], 3, { p1 = 0 }, "flows[0]")
end

function T.patterns_give_their_frames()
  local spec = compile({ { choice = "ethernet", ethernet = { src = { choice = "increment",
                             increment = { start = "02:00:00:00:00:fe", step = "00:00:00:00:00:01", count = 3 } } } },
                         { choice = "ipv4", ipv4 = { dst = { choice = "decrement",
                             decrement = { start = "10.0.0.10", step = "0.0.0.2", count = 4 } },
                             time_to_live = { choice = "value", value = 9 } } },
                         { choice = "udp", udp = { dst_port = { choice = "values", values = json.array({ 7, 9 }) } } } },
                       { size = { choice = "fixed", fixed = 100 }, metrics = { enable = true } })
  assert(spec.size == 96 and spec.tag and spec.index == 3)
  -- the frame: 96 bytes, the tag and the flow's number right after the headers (42 bytes), each
  -- field on its own cycle
  local t, f = flows.build(spec)
  assert(spec.header_bytes == 42)
  assert(#t.bytes == 96 and t.bytes:sub(43, 48) == "SOTG\0\3", ("%q"):format(t.bytes:sub(43, 48)))
  assert(t.bytes:byte(14 + 8 + 1) == 9, "ttl")
  assert(f:count() == 12)   -- 3, 4, 2: their least common multiple
  local buf = ffi.new("uint8_t[96]")
  for k = 0, 11 do
    ffi.copy(buf, t.bytes, 96)
    f:next(buf)
    assert(buf[11] == (0xfe + k % 3) % 256, "src of packet " .. k)
    assert(buf[14 + 19] == 10 - 2 * (k % 4), "dst of packet " .. k)
    assert(buf[14 + 20 + 3] == (k % 2 == 0 and 7 or 9), "dport of packet " .. k)
    assert(buf[42] == 0x53 and buf[47] == 3, "the tag stays")
  end
end

-- rates, sizes and durations as the spec a port's task runs: bit/s over the mean frame, the
-- duration's pieces with their paths (otg/traffic.lua turns bytes into time at the port's speed)
function T.rate_size_duration_specs()
  local spec = compile({ { choice = "ethernet" }, { choice = "ipv4" }, { choice = "udp" } },
    { size = { choice = "increment", increment = { start = 68, ["end"] = 132, step = 32 } },
      rate = { choice = "mbps", mbps = 10 },
      duration = { choice = "burst", burst = { bursts = 3, packets = 5, inter_burst_gap = { choice = "microseconds",
        microseconds = 50 } } }, metrics = { enable = true, latency = { enable = true }, timestamps = true } })
  assert(spec.size == nil and spec.mean_bytes == 100, tostring(spec.mean_bytes))   -- 68, 100, 132
  assert(spec.rate.kind == "mbps" and spec.rate.value == 10 and spec.rate.path == "flows[0].rate.mbps")
  assert(spec.count == 15 and spec.burst == 5 and spec.ibg.unit == "microseconds" and spec.ibg.value == 50)
  assert(spec.latency and spec.timestamps and spec.probe)
  local t, _, sz = flows.build(spec)
  assert(#t.bytes == 128 and sz and sz:mean() == 96)
  assert(t.bytes:sub(43, 48) == "SOTG\0\3" and #spec.payload == 128 - 42)
  -- the probe after TCP over IPv6 in a VLAN: the checksum it keeps valid is that TCP's
  spec = compile({ { choice = "ethernet" }, { choice = "vlan" }, { choice = "ipv6" }, { choice = "tcp" } },
    { size = { choice = "fixed", fixed = 128 }, metrics = { enable = true, latency = { enable = true } } })
  assert(spec.latency and spec.header_bytes == 78)
  spec = compile({ { choice = "ethernet" } }, { duration = { choice = "fixed_seconds", fixed_seconds = { seconds = 2,
    delay = { choice = "bytes", bytes = 1250 } } } })
  assert(spec.count == -1 and spec.seconds == 2 and spec.delay.value == 1250
    and spec.delay.path == "flows[0].duration.fixed_seconds.delay.bytes")
end

-- Devices: the model's checks (formats, ranges, refusals by path), the
-- defaults filled, devices.lua's (names, ports), and a flow between two
-- devices takes their MACs and addresses (the frame's bytes).
local function dev_cfg(eth2, flowx)
  local e1 = { name = "e1", mac = "02:00:00:00:00:01", connection = { choice = "port_name", port_name = "p1" },
               ipv4_addresses = json.array({ { name = "i1", address = "10.0.0.1", gateway = "10.0.0.2" } }) }
  local e2 = { name = "e2", mac = "02:00:00:00:00:02", connection = { choice = "port_name", port_name = "p1" },
               ipv4_addresses = json.array({ { name = "i2", address = "10.0.0.2", gateway = "10.0.0.1" } }) }
  for k, v in pairs(eth2 or {}) do e2[k] = v end
  local f = { name = "f", tx_rx = { choice = "device", device = { tx_names = json.array({ "i1" }),
    rx_names = json.array({ "i2" }) } }, size = { choice = "fixed", fixed = 64 },
    packet = json.array({ { choice = "ethernet", ethernet = {} }, { choice = "ipv4", ipv4 = {} } }) }
  for k, v in pairs(flowx or {}) do f.tx_rx.device[k] = v end
  return { ports = json.array({ { name = "p1", location = "net_ring0" } }),
           devices = json.array({ { name = "d1", ethernets = json.array({ e1 }) },
                                  { name = "d2", ethernets = json.array({ e2 }) } }),
           flows = json.array({ f }) }
end

-- checked config, devices, and the errors of devices.lua and the flow compiler
local function dev_compile(cfg)
  local out, errs = schema.check(model.CONFIG, json.decode(json.encode(cfg)), "")
  if not out then return nil, nil, table.concat(errs, "\n") end
  local d, derrs = devices.compile(out, { p1 = true })
  if #derrs > 0 then return out, d, table.concat(derrs, "\n") end
  local ok, spec = pcall(flows.compile, out.flows[1], 0, { p1 = 0 }, "flows[0]", d)
  if not ok then return out, d, spec.path .. ": " .. spec.msg end
  return out, d, nil, spec
end

function T.devices_checked_and_defaults_filled()
  local out, d, err, spec = dev_compile(dev_cfg())
  assert(err == nil, err)
  local ip = out.devices[1].ethernets[1].ipv4_addresses[1]
  assert(ip.prefix == 24 and ip.gateway_mac.choice == "auto" and ip.gateway_mac.auto == "00:00:00:00:00:00")
  assert(out.devices[1].ethernets[1].mtu == 1500)
  assert(#d.entries == 2 and d.by_name.i2.gw == "10.0.0.1" and d.ports.p1[2].mac == "02:00:00:00:00:02")
  -- on the link: the peer device's MAC, no gateway needed; addresses from the devices
  assert(spec.dst_macs[1] == "02:00:00:00:00:02" and spec.gw_ks[1] == false and spec.tx == "p1" and spec.rx[1] == "p1")
  local t = flows.build(spec)
  local b = t.bytes
  assert(b:sub(1, 12) == "\2\0\0\0\0\2\2\0\0\0\0\1", "MACs")
  assert(b:sub(27, 34) == "\10\0\0\1\10\0\0\2", "IPv4 src, dst")
  -- off the link: the resolved gateway (read at start)
  local _, _, err2, spec2 = dev_compile(dev_cfg({ ipv4_addresses = json.array({ { name = "i2", address = "10.9.0.2",
    gateway = "10.9.0.1" } }) }))
  assert(err2 == nil and spec2.gw_ks[1] == 1 and spec2.dst_macs[1] == false, err2)
  -- refusals by path
  has(select(3, dev_compile(dev_cfg({ mac = "02:00:00:00:00" }))),
    "devices[1].ethernets[0].mac: '02:00:00:00:00' is not a MAC address")
  has(select(3, dev_compile(dev_cfg({ vlans = json.array({}) }))), "devices[1].ethernets[0].vlans: not implemented by surge")
  has(select(3, dev_compile(dev_cfg({ ipv4_addresses = json.array({ { name = "i2", address = "10.0.0.300",
    gateway = "10.0.0.1" } }) }))), "devices[1].ethernets[0].ipv4_addresses[0].address: '10.0.0.300' is not an IPv4")
  has(select(3, dev_compile(dev_cfg({ ipv6_addresses = json.array({ { name = "i6", address = "2001:db8::1",
    gateway = "2001:db8::2", prefix = 129 } }) }))), "devices[1].ethernets[0].ipv6_addresses[0].prefix: 129 outside 1..128")
  has(select(3, dev_compile(dev_cfg({ connection = { choice = "lag_name", lag_name = "l" } }))),
    "devices[1].ethernets[0].connection.lag_name: not implemented by surge")
  has(select(3, dev_compile(dev_cfg({ connection = { choice = "port_name", port_name = "p9" } }))),
    "devices[1].ethernets[0].connection.port_name: 'p9' is not a port of this config")
  has(select(3, dev_compile(dev_cfg({ name = "e1" }))), "devices[1].ethernets[0].name: 'e1' is the name of devices[0]")
  has(select(3, dev_compile(dev_cfg({ ipv4_addresses = json.array({ { name = "i2", address = "10.0.0.1",
    gateway = "10.0.0.2" } }) }))), "devices[1].ethernets[0].ipv4_addresses[0].address: 10.0.0.1 is the address of")
  has(select(3, dev_compile(dev_cfg(nil, { rx_names = json.array({ "nope" }) }))),
    "flows[0].tx_rx.device.rx_names[0]: 'nope' is no ethernet, ipv4 or ipv6 address of a device")
  has(select(3, dev_compile(dev_cfg(nil, { tx_names = json.array({ "i1", "i2" }) }))),
    "flows[0].tx_rx.device.rx_names[0]: 'i2' to itself: the model refuses a pair of one endpoint")
  has(select(3, dev_compile(dev_cfg(nil, { mode = "one_to_one", tx_names = json.array({ "i1", "i1" }) }))),
    "flows[0].tx_rx.device.rx_names: 1 names for 2 tx_names")
  has(select(3, dev_compile(dev_cfg({ mtu = 40 }))), "devices[1].ethernets[0].mtu: 40 outside 64..65535")
end

function T.states_request_choices()
  local sr = assert(schema.check(model.STATES_REQUEST, json.decode('{"choice":"ipv6_neighbors"}'), ""))
  assert(sr.choice == "ipv6_neighbors")
  local _, errs = schema.check(model.STATES_REQUEST, json.decode('{"choice":"isis_lsps"}'), "")
  has(table.concat(errs, "\n"), "isis_lsps: not implemented by surge")
  local out, d = dev_compile(dev_cfg())
  assert(out)
  local r = devices.states(d, sr)
  assert(r.choice == "ipv6_neighbors" and #r.ipv6_neighbors == 0)
  r = devices.states(d, { choice = "ipv4_neighbors", ipv4_neighbors = { ethernet_names = { "e2" } } })
  assert(#r.ipv4_neighbors == 1 and r.ipv4_neighbors[1].ipv4_address == "10.0.0.1"
         and r.ipv4_neighbors[1].link_layer_address == nil, "unresolved: no MAC")
  local ok, e = pcall(devices.states, d, { choice = "ipv4_neighbors", ipv4_neighbors = { ethernet_names = { "e2", "i1" } } })
  assert(not ok and e.status == 400, "a name that is no ethernet")
  has(e.errors[1], "ipv4_neighbors.ethernet_names[1]: 'i1' is not a device ethernet of the config")
end

return T
