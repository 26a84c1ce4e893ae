-- flows.lua - UDP/IPv4 over many flows: source addresses x source ports x
-- destination addresses, every combination (product) or all advancing
-- together (--zip), from one TX task.
--
--   surge run examples/flows.lua --flows-src 65536 --flows-port 16      # 1M flows
--   surge run examples/flows.lua --flows-src 10 --flows-port 4 --count 4000
--   surge run examples/flows.lua --flows-src 5 --flows-port 3 --zip --count 500
--   surge show --packets 6 examples/flows.lua --flows-src 3 --flows-port 2
--
-- The flow definition is compiled once into a function that rewrites the
-- three fields of each packet and keeps the IPv4 and UDP checksums valid
-- (see docs/flows.md).
local surge = require("surge")
local flow = require("surge.flow")

function configure(p)
  p:description("UDP/IPv4 over many flows: --flows-src addresses x --flows-port source ports x " ..
                "--flows-dst addresses (every combination, or --zip).")
  p:option("--port", "port number or device name", "0")
  p:option("--size", "frame size in bytes, without FCS (60..data room)", 60, "integer 14..9600")
  p:option("--flows-src", "number of IPv4 source addresses, counting up from --src", 256, "integer 1..16777216")
  p:option("--flows-port", "number of UDP source ports, counting up from --sport", 16, "integer 1..65536")
  p:option("--flows-dst", "number of IPv4 destination addresses, counting up from --dst", 1, "integer 1..16777216")
  p:flag("--zip", "advance the fields together (flows = the largest count) instead of every combination")
  p:option("--burst", "packets per burst (1..256)", 32, "integer 1..256")
  p:option("--count", "send exactly this many packets, then stop (0 = no limit)", 0, "integer >=0")
  p:option("--src", "first IPv4 source address", "10.0.0.1")
  p:option("--dst", "first IPv4 destination address", "10.1.0.1")
  p:option("--sport", "first UDP source port", 1024, "integer 0..65535")
  p:option("--dport", "UDP destination port", 5000, "integer 0..65535")
end

local function template(args)
  return surge.proto.udp{ src = args.src, dst = args.dst, sport = args.sport, dport = args.dport, size = args.size }
end

-- The flow definition: plain data, so master checks it and the task builds it.
local function make_flow(args, t)
  local ip4 = surge.proto.ip4
  local function span(first, n, what)
    if n < 1 then error(("--flows-%s %d: give 1 or more"):format(what, n), 0) end
    return { range = { first, first + n - 1 } }
  end
  local src = ip4.addr(args.src, "--src", 2)
  local dst = ip4.addr(args.dst, "--dst", 2)
  -- a list keeps this order: the source address varies fastest
  local fields = { { "ip4.src", span(src, args.flows_src, "src") },
                   { "udp.sport", span(args.sport, args.flows_port, "port") } }
  if args.flows_dst ~= 1 then fields[3] = { "ip4.dst", span(dst, args.flows_dst, "dst") } end
  return flow{ template = t or template(args), combine = args.zip and "zip" or "product", fields = fields }
end

function master(args)
  if args.count < 0 then error("--count must be 0 (no limit) or more", 0) end
  local ok, f = pcall(make_flow, args)
  if not ok then error((tostring(f):gsub("^[^\n]-:%d+: ", "")), 0) end
  print(("flows.lua: %d flows (%s of %d source addresses, %d source ports, %d destination addresses)"):format(
    f:count(), args.zip and "zip" or "product", args.flows_src, args.flows_port, args.flows_dst))
  local port = surge.port(tonumber(args.port) or args.port, { txq = 1, rxq = 1 })
  surge.launch("tx", port:txq(0), args)
  local sent = surge.wait()[1]
  if sent == nil then return 1 end
  return 0
end

function tx(q, args)
  local t = template(args)
  local f = make_flow(args, t)
  local pool = surge.pool{ template = t }
  local burst = pool:burst(args.burst)
  local left = args.count > 0 and args.count or -1
  local cap, sent = burst.cap, 0
  local n = burst:alloc(left > 0 and left < cap and left or cap)
  while surge.running() and left ~= 0 do
    f:apply(burst)
    if left > 0 then left = left - n end
    -- the send and the next burst's allocation in one call (as many as are left)
    sent = sent + q:send_alloc(burst, nil, left >= 0 and left < cap and left or cap)
    n = burst.n
  end
  burst:free()     -- allocated when the run stopped: never sent
  return sent
end

-- `surge show examples/flows.lua ...` prints the first packets of the flow.
function show(args)
  return make_flow(args)
end
