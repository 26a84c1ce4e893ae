-- udp-flood.lua - UDP/IPv4 flood from one TX task, optionally over many flows.
--
--   surge run examples/udp-flood.lua --size 64 --flows 256 --count 1000000
--
-- master() opens the port and starts tx() on a free lcore; tx() fills a pool
-- with one template frame and, per burst, rewrites only the UDP source port
-- (when --flows > 1), keeping the UDP checksum valid incrementally.
local surge = require "surge"
local udp = surge.proto.udp

function configure(p)
  p:description("UDP/IPv4 flood; --flows varies the UDP source port over N values.")
  p:option("--port", "port number or device name", "0")
  p:option("--size", "frame size in bytes, without FCS (42..data room)", 60, "integer 14..9600")
  p:option("--flows", "number of flows (UDP source ports) to cycle through", 1, "integer 1..65536")
  p:option("--clones", "send each packet this many times (refcount clones)", 1, "integer 1..1024")
  p:option("--burst", "packets per burst (1..256)", 32, "integer 1..256")
  p:option("--queues", "TX queues, one task (lcore) each; --count is per queue", 1, "integer 1..64")
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

function tx(q, args)
  local t = udp{ src = args.src, dst = args.dst, sport = args.sport, dport = args.dport, size = args.size }
  local pool = surge.pool{ template = t }
  local burst = pool:burst(args.burst)
  local l4, flows, base, clones = t.l4, args.flows, args.sport, args.clones
  local set_sport = udp.set_sport
  -- count is in packets on the wire; each allocated packet goes out `clones` times
  local left = args.count > 0 and args.count / clones or -1
  local flow, sent = 0, 0
  while surge.running() and left ~= 0 do
    local want = burst.cap
    if left > 0 and left < want then want = left end
    local n = burst:alloc(want)
    if flows > 1 then
      for i = 0, n - 1 do
        set_sport(burst.data[i] + l4, base + flow)
        flow = flow + 1
        if flow == flows then flow = 0 end
      end
    end
    sent = sent + q:send(burst, clones)
    if left > 0 then left = left - n end
  end
  return sent
end

-- `surge show examples/udp-flood.lua --flows 3` prints the first packets.
function show(args)
  local t = udp{ src = args.src, dst = args.dst, sport = args.sport, dport = args.dport, size = args.size }
  local frames = {}
  local ffi = require "ffi"
  local buf = ffi.new("uint8_t[?]", t.size)
  for k = 0, 7 do
    ffi.copy(buf, t.bytes, t.size)
    udp.set_sport(buf + t.l4, args.sport + k % args.flows)
    frames[#frames + 1] = ffi.string(buf, t.size)
  end
  return frames
end
