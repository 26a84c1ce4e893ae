-- tap_send.lua - UDP (or TCP over IPv6) flows on a net_tap port, for
-- test_csum_offload.sh: prints which checksum offloads the port took, gives
-- the test's capture time to start, then sends --count packets.
local surge = require("surge")

function configure(p)
  p:option("--count", "packets", 1000, "integer")
  p:option("--kind", "udp4 or tcp6", "udp4")
  p:option("--go", "wait until this file exists (the capture is running)", "")
  p:flag("--software", "open the port with checksum_offload = false")
end

function master(args)
  local port = surge.port(0, { txq = 1, rxq = 1, checksum_offload = not args.software })
  local c = port:info().checksum_offload
  print(("offload ip4 %s udp %s tcp %s"):format(tostring(c.ip4), tostring(c.udp), tostring(c.tcp)))
  io.stdout:flush()
  for _ = 1, 300 do                    -- 15 s at most
    local f = args.go ~= "" and io.open(args.go) or nil
    if f then f:close() break end
    surge.sleep(0.05)
  end
  surge.launch("tx", port:txq(0), args)
  print("sent " .. surge.wait()[1])
  surge.sleep(1)                       -- let the kernel take them before the tap goes
end

function tx(q, args)
  local t
  if args.kind == "tcp6" then
    t = surge.proto.tcp{ src = "fd00::1", dst = "fd00::2", sport = 1000, dport = 5000, size = 90 }
  else
    t = surge.proto.udp{ src = "10.9.0.1", dst = "10.9.0.2", sport = 1000, dport = 5000, size = 70 }
  end
  local f = surge.flow{ template = t, fields = { [args.kind == "tcp6" and "tcp.sport" or "udp.sport"] =
    { range = { 1000, 1009 } } } }
  local burst = surge.pool{ template = t }:burst(32)
  local left, sent = args.count, 0
  while surge.running() and left > 0 do
    local n = burst:alloc(math.min(left, 32))
    f:apply(burst)
    sent = sent + q:send(burst)
    left = left - n
  end
  return sent
end
