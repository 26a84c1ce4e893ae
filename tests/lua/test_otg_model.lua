-- surge otg's model checks and flow compiler, without HTTP: every refusal
-- names its JSON path, defaults are the model's, OTG patterns become the
-- surge.flow fields they mean, and the frame a spec builds carries the
-- flow's tag at its end (docs/otg.md).
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

function T.refusals_name_their_path()
  has(errors_of({ devices = json.array({ { name = "d", bgp = {} } }) }), "devices[0].bgp: not implemented by surge")
  has(errors_of({ lags = json.array({}) }), "lags: not implemented by surge")
  has(errors_of({ colour = 1 }), "colour: unknown field (not in the OTG 1.3.0 model)")
  has(errors_of(flow({ size = { choice = "fixed", fixed = "big" } })), "flows[0].size.fixed: expected an integer")
  has(errors_of(flow({ size = { choice = "fixed", fixed = 63 } })), "flows[0].size.fixed: 63 outside 64..9600")
  has(errors_of(flow({ rate = { choice = "fast" } })), "flows[0].rate.choice: 'fast' is not one of")
  has(errors_of(flow({ rate = { choice = "gbps", gbps = 1 } })), "flows[0].rate.gbps: not implemented by surge")
  has(errors_of(flow({ duration = { choice = "continuous", continuous = { gap = 5 } } })),
    "flows[0].duration.continuous.gap: 5: surge implements only 12 (the model's default)")
  has(errors_of(flow({ metrics = { enable = true, latency = { enable = true } } })),
    "flows[0].metrics.latency: not implemented by surge")
  has(errors_of(flow({ packet = json.array({ { choice = "ethernet", ethernet = { pfc_queue = { value = 1 } } } }) })),
    "flows[0].packet[0].ethernet.pfc_queue: not implemented by surge")
  has(errors_of(flow({ packet = json.array({ { choice = "ethernet" }, { choice = "ipv4", ipv4 = {
    src = { choice = "value", value = "10.0.0.256" } } } }) })), "flows[0].packet[1].ipv4.src.value: '10.0.0.256' is "
    .. "not an IPv4 address")
  has(errors_of(flow({ packet = json.array({ { choice = "ethernet" }, { choice = "ipv4", ipv4 = {
    src = { choice = "random" } } } }) })), "flows[0].packet[1].ipv4.src.random: not implemented by surge")
  -- several errors of one request, all listed
  local e = errors_of({ lags = json.array({}), layer1 = json.array({}), x = 1 })
  has(e, "lags: not")
  has(e, "layer1: not")
  has(e, "x: unknown field")
end

function T.defaults_are_the_models()
  local out = assert(schema.check(model.CONFIG, json.decode(json.encode(flow())), ""))
  local f = out.flows[1]
  assert(f.size.choice == "fixed" and f.size.fixed == 64)
  assert(f.rate.choice == "pps" and f.rate.pps == 1000)
  assert(f.duration.choice == "continuous" and f.duration.continuous.gap == 12)
  assert(f.metrics.enable == false)
  -- int64s may come as text (snappi sends rate.pps so)
  out = assert(schema.check(model.CONFIG, json.decode(json.encode(flow({ rate = { choice = "pps", pps = "250" } }))),
    ""))
  assert(out.flows[1].rate.pps == 250)
end

local function compile(packet, extra)
  extra = extra or {}
  extra.packet = json.array(packet)
  local out, errs = schema.check(model.CONFIG, json.decode(json.encode(flow(extra))), "")
  assert(out, errs and table.concat(errs, "\n"))
  return flows.compile(out.flows[1], 3, { p1 = 0 }, "flows[0]")
end

function T.patterns_become_flow_fields()
  local spec = compile({ { choice = "ethernet", ethernet = { src = { choice = "increment",
                             increment = { start = "02:00:00:00:00:fe", step = "00:00:00:00:00:01", count = 3 } } } },
                         { choice = "ipv4", ipv4 = { dst = { choice = "decrement",
                             decrement = { start = "10.0.0.10", step = "0.0.0.2", count = 4 } },
                             time_to_live = { choice = "value", value = 9 } } },
                         { choice = "udp", udp = { dst_port = { choice = "values", values = json.array({ 7, 9 }) } } } },
                       { size = { choice = "fixed", fixed = 100 }, metrics = { enable = true } })
  assert(spec.size == 96 and spec.tag and spec.index == 3)
  local by = {}
  for _, f in ipairs(spec.fields) do by[f[1]] = f[2] end
  assert(by["eth#1.src"].range[1] == 0x0200000000fe and by["eth#1.src"].range[2] == 0x020000000100)
  assert(by["ip4#1.dst"].range[1] == 0x0a00000a and by["ip4#1.dst"].range[2] == 0x0a000004 and
         by["ip4#1.dst"].step == -2)
  assert(by["udp#1.dport"].list[1] == 7 and by["udp#1.dport"].list[2] == 9)
  assert(spec.layers[2].opts.ttl == 9 and spec.layers[2].opts.dst == "10.0.0.10")
  -- the frame: 96 bytes, the tag and the flow's number last, the flow cycles each field on its own
  local t, f = flows.build(spec)
  assert(#t.bytes == 96 and t.bytes:sub(-6) == "SOTG\0\3", ("%q"):format(t.bytes:sub(-6)))
  assert(f:count() == 12)   -- 3, 4, 2: their least common multiple
  local buf = ffi.new("uint8_t[96]")
  for k = 0, 11 do
    ffi.copy(buf, t.bytes, 96)
    f:next(buf)
    local src = buf[11]
    local dst = buf[14 + 19]
    local dport = buf[14 + 20 + 3]
    assert(src == (0xfe + k % 3) % 256, "src of packet " .. k)
    assert(dst == 10 - 2 * (k % 4), "dst of packet " .. k)
    assert(dport == (k % 2 == 0 and 7 or 9), "dport of packet " .. k)
  end
end

function T.what_surge_cannot_build_is_refused_with_its_path()
  local function fails(packet, extra, needle)
    local ok, e = pcall(compile, packet, extra)
    assert(not ok and type(e) == "table", "compiled: " .. json.encode(packet))
    has(e.path .. ": " .. e.msg, needle)
  end
  fails({ { choice = "ethernet" }, { choice = "ipv4", ipv4 = { src = { choice = "increment",
    increment = { start = "255.255.255.250", step = "0.0.0.1", count = 10 } } } } }, nil,
    "flows[0].packet[1].ipv4.src.increment: start 255.255.255.250 + 9 x step 0.0.0.1 leaves the field's range")
  fails({ { choice = "ethernet" }, { choice = "vlan", vlan = { cfi = { choice = "values", values = json.array({ 0, 1 })
    } } }, { choice = "ipv4" } }, nil, "flows[0].packet[1].vlan.cfi: a varying value is not implemented by surge")
  fails({ { choice = "ipv4" } }, nil, "flows[0].packet[0].ipv4: the first header must be ethernet")
  local ok, e = pcall(flows.build, compile({ { choice = "ethernet" }, { choice = "vlan" }, { choice = "ipv4" },
    { choice = "tcp" } }, { metrics = { enable = true } }))
  assert(not ok and e:find("size 64 leaves 2 bytes after the headers: the flow's metrics need 6", 1, true), e)
end

return T
