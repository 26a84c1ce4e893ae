-- surge otg's model checks and flow compiler, without HTTP: every refusal
-- names its JSON path, defaults are the model's, a flow's packet (read by
-- otg/packet.lua) gives the frames its patterns mean, and the frame carries
-- the flow's tag right after its headers (docs/otg.md).
local ffi = require "ffi"
local json = require "surge.results.json"
local schema = require "surge.otg.schema"
local model = require "surge.otg.model"
local flows = require "surge.otg.flows"

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
    "metric tags: not implemented by surge otg yet")
  -- several errors of one request, all listed
  local e = errors_of({ lags = json.array({}), layer1 = json.array({}), x = 1 })
  has(e, "lags: not")
  has(e, "layer1: not")
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

return T
