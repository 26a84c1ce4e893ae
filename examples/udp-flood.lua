-- udp-flood.lua - UDP/IPv4 flood from one TX task, optionally over many flows.
--
--   surge run examples/udp-flood.lua --size 64 --flows 256 --count 1000000
--   surge run examples/udp-flood.lua --rate 100kpps     # paced: any rate spec (pps, bit/s, % of link)
--
-- master() opens the port and starts tx() on a free lcore; tx() fills a pool
-- with one template frame and, per burst, rewrites only the UDP source port
-- (when --flows > 1, with surge.flow), keeping the UDP checksum valid
-- incrementally.
local surge = require("surge")
local udp = surge.proto.udp

function configure(p)
  p:description("UDP/IPv4 flood; --flows varies the UDP source port over N values.")
  p:option("--port", "port number or device name", "0")
  p:option("--size", "frame size in bytes, without FCS (42..data room)", 60, "integer 14..9600")
  p:option("--flows", "number of flows (UDP source ports) to cycle through", 1, "integer 1..65536")
  p:option("--clones", "send each packet this many times (refcount clones)", 1, "integer 1..1024")
  p:option("--burst", "packets per burst (1..256)", 32, "integer 1..256")
  p:option("--queues", "TX queues, one task (lcore) each; --count is per queue", 1, "integer 1..64")
  p:option("--rate", "rate per queue, e.g. 100kpps, 1gbit or 50% (default: as fast as the port takes)", "")
  p:option("--count", "send exactly this many packets, then stop (0 = no limit)", 0, "integer >=0")
  p:option("--src", "IPv4 source address", "10.0.0.1")
  p:option("--dst", "IPv4 destination address", "10.0.0.2")
  p:option("--sport", "first UDP source port", 1024, "integer 0..65535")
  p:option("--dport", "UDP destination port", 5000, "integer 0..65535")
end

function master(args)
  -- single options are range-checked by their declared kinds; here what they mean together
  if args.flows > 65536 - args.sport then
    error(("--flows %d: need 1..%d with --sport %d"):format(args.flows, 65536 - args.sport, args.sport), 0)
  end
  if args.count % args.clones ~= 0 then
    error(("--count %d is not a multiple of --clones %d"):format(args.count, args.clones), 0)
  end
  local port = surge.port(tonumber(args.port) or args.port,
                          { txq = args.queues, rxq = 1, clones = args.clones > 1 })
  -- set here, before the tasks send: a bad spec is one line naming --rate;
  -- the prompt (surge attach) re-rates the same queues with q:set_rate
  if args.rate ~= "" then
    for q = 0, args.queues - 1 do
      local ok, err = pcall(port:txq(q).set_rate, port:txq(q), args.rate)
      if not ok then error(("--rate %s: %s"):format(args.rate, tostring(err):gsub("^[^\n]-:%d+: ", "")), 0) end
    end
  end
  for q = 0, args.queues - 1 do surge.launch("tx", port:txq(q), args) end
  if args.count > 0 then                    -- a line with an ETA on stderr
    local total = args.count * args.queues
    surge.progress.watch("sent", total, function()
      local n = 0
      for q = 0, args.queues - 1 do n = n + port:txq(q):stats().packets end
      return n
    end)
  end
  local sent = surge.wait()
  for q = 1, args.queues do
    if sent[q] == nil then return 1 end
  end
  return 0
end

-- The flows: surge.flow compiles the source port's sequence into the loop
-- that rewrites it in every packet of a burst, checksum kept valid
-- (docs/flows.md); nil for one flow, where the template is sent as it is.
local function flows(t, args)
  if args.flows == 1 then return nil end
  return surge.flow{ template = t,
    fields = { { "udp.sport", { range = { args.sport, args.sport + args.flows - 1 } } } } }
end

local function template(args)
  return udp{ src = args.src, dst = args.dst, sport = args.sport, dport = args.dport, size = args.size }
end

function tx(q, args)
  local t = template(args)
  local pool = surge.pool{ template = t }
  local burst = pool:burst(args.burst)
  local f, clones = flows(t, args), args.clones
  -- count is in packets on the wire; each allocated packet goes out `clones` times
  local left = args.count > 0 and args.count / clones or -1
  local cap, sent = burst.cap, 0
  local n = burst:alloc(left > 0 and left < cap and left or cap)
  while surge.running() and left ~= 0 do
    if f then f:apply(burst) end
    if left > 0 then left = left - n end
    -- the send and the next burst's allocation in one call (as many as are left)
    sent = sent + q:send_alloc(burst, clones, left >= 0 and left < cap and left or cap)
    n = burst.n
  end
  burst:free()     -- allocated when the run stopped: never sent
  return sent
end

-- `surge show examples/udp-flood.lua --flows 3` prints the first packets.
function show(args)
  local t = template(args)
  local f = flows(t, args)
  return f and f:frames(8) or { t.bytes }
end
