-- loopback.lua - a TX task and an RX task on one port; RX must see every packet.
--
--   surge run --vdev net_ring0 examples/loopback.lua --count 100000
--
-- A single net_ring port is its own loopback: what it sends it receives. The
-- TX task's pool is shared (shared = true) because the RX lcore frees the
-- mbufs it receives back into it.
local surge = require("surge")

function configure(p)
  p:description("Send on a port and receive on the same port (net_ring loopback).")
  p:option("--port", "port number or device name", "0")
  p:option("--count", "packets to send (0 = until --duration or Ctrl-C)", 100000, "integer >=0")
  p:option("--size", "frame size in bytes", 60, "integer 14..9600")
  p:option("--burst", "packets per burst", 32, "integer 1..256")
end

function master(args)
  local port = surge.port(tonumber(args.port) or args.port, { rxq = 1, txq = 1 })
  local rx_task = surge.launch("rx", port:rxq(0), args.count, args.burst)
  local tx_task = surge.launch("tx", port:txq(0), args)
  local sent = surge.wait(tx_task)
  -- give the receiver a moment for what is still in flight, then stop it
  local received, err = surge.wait(rx_task, 2.0)
  if err then
    surge.stop()
    received = surge.wait(rx_task)
  end
  -- a run ended by --duration or Ctrl-C stops the receiver with packets
  -- still in the ring: its queue is free again, so master takes them
  local rest = surge.pool{ size = 63 }:burst(32)
  for _ = 1, 100000 do
    local n = port:rxq(0):recv(rest)
    if n == 0 then break end
    received = received + n
  end
  rest:free()
  print(("loopback: sent %d received %d"):format(sent, received))
  if sent ~= received then error(("lost %d packets"):format(sent - received), 0) end
end

function tx(q, args)
  local pool = surge.pool{ template = surge.proto.udp{ size = args.size }, shared = true }
  local burst = pool:burst(args.burst)
  local left, sent = args.count > 0 and args.count or -1, 0
  while surge.running() and left ~= 0 do
    local n = burst:alloc((left > 0 and left < burst.cap) and left or burst.cap)
    sent = sent + q:send(burst)
    if left > 0 then left = left - n end
  end
  return sent
end

function rx(q, expect, burst_size)
  local burst = surge.pool{ size = 63 }:burst(burst_size)   -- recv needs no template
  local got = 0
  while surge.running() and (expect == 0 or got < expect) do
    got = got + q:recv(burst)
    burst:free()
  end
  return got
end
