-- vxlan.lua - VXLAN-encapsulated UDP: many inner flows across several VNIs.
--
--   surge run --duration 5 examples/vxlan.lua
--   surge run examples/vxlan.lua --vnis 4 --inner-flows 1000 --count 8000
--   surge show --packets 4 examples/vxlan.lua --vnis 2
--
-- The frame is eth / IPv4 / UDP (dport 4789) / VXLAN / eth / IPv4 / UDP,
-- built once as a layer stack. A flow varies the VNI, the inner source
-- address and the outer UDP source port (entropy, as a VTEP would), keeping
-- the inner and outer checksums valid.
local surge = require("surge")

function configure(p)
  p:description("VXLAN: eth/ip4/udp/vxlan/eth/ip4/udp with flows over VNIs and inner sources.")
  p:option("--port", "port number or device name", "0")
  p:option("--size", "outer frame size in bytes (without FCS)", 128, "integer 14..9600")
  p:option("--vni", "first VNI", 42, "integer 0..16777215")
  p:option("--vnis", "number of VNIs", 4, "integer 1..16777216")
  p:option("--inner-flows", "inner source addresses per VNI", 256, "integer 1..16777216")
  p:option("--count", "send exactly this many packets, then stop (0 = no limit)", 0, "integer >=0")
  p:option("--burst", "packets per burst", 32, "integer 1..256")
end

local function template(args)
  local L = surge.proto.layer
  return surge.proto.stack{
    L.eth{ src = "02:00:00:00:01:01", dst = "02:00:00:00:01:02" },
    L.ip4{ src = "192.168.0.1", dst = "192.168.0.2" },
    L.udp{ sport = 49152 },                       -- dport 4789 from the vxlan layer
    L.vxlan{ vni = args.vni },
    L.eth{ src = "02:00:00:00:02:01", dst = "02:00:00:00:02:02" },
    L.ip4{ src = "10.0.0.1", dst = "10.0.1.1" },
    L.udp{ sport = 1024, dport = 5000 },
    size = args.size, payload = "inc",
  }
end

local function make_flow(args, t)
  local first = surge.proto.ip4.addr("10.0.0.1", "inner source")
  return surge.flow{ template = t, combine = "product", fields = {
    { "ip4#2.src", { range = { first, first + args.inner_flows - 1 } } },
    { "vxlan.vni", { range = { args.vni, args.vni + args.vnis - 1 } } },
    { "udp.sport", { range = { 49152, 49152 + 255 } } },
  } }
end

function master(args)
  if args.vnis < 1 or args.inner_flows < 1 then error("--vnis and --inner-flows must be at least 1", 0) end
  if args.vni < 0 or args.vni + args.vnis - 1 > 0xffffff then error("VNIs must lie in 0..16777215", 0) end
  local f = make_flow(args, template(args))
  print(("vxlan.lua: %d flows over %d VNIs"):format(f:count(), args.vnis))
  local port = surge.port(tonumber(args.port) or args.port, { txq = 1 })
  surge.launch("tx", port:txq(0), args)
  local sent = surge.wait()[1]
  print(("vxlan.lua: sent %d packets"):format(sent or 0))
end

function tx(q, args)
  local t = template(args)
  local f = make_flow(args, t)
  local burst = surge.pool{ template = t }:burst(args.burst)
  local left, sent = args.count > 0 and args.count or -1, 0
  while surge.running() and left ~= 0 do
    local n = burst:alloc((left > 0 and left < burst.cap) and left or burst.cap)
    f:apply(burst)
    sent = sent + q:send(burst)
    if left > 0 then left = left - n end
  end
  return sent
end

function show(args)
  return make_flow(args, template(args))
end
