-- setter-loop.lua - scripts/bench's reference row for a hand-written loop:
-- the UDP source port over --flows values, one checked udp.set_sport call a
-- packet (the checksum kept valid), the counter a plain Lua number. This is
-- what examples/udp-flood.lua did before it used surge.flow; the bench keeps
-- it to measure what the checked setters and a double-typed counter cost
-- against the generated loop (docs/performance.md).
local surge = require("surge")
local udp = surge.proto.udp

function configure(p)
  p:option("--size", "frame size in bytes, without FCS", 60, "integer 42..9600")
  p:option("--flows", "UDP source ports to cycle through", 1024, "integer 1..64512")
  p:option("--burst", "packets per burst", 32, "integer 1..256")
end

function master(args)
  local port = surge.port(0, { txq = 1, rxq = 1 })
  surge.launch("tx", port:txq(0), args)
  return surge.wait()[1] and 0 or 1
end

function tx(q, args)
  local t = udp{ sport = 1024, size = args.size }
  local burst = surge.pool{ template = t }:burst(args.burst)
  local l4, flows, set_sport = t.l4, args.flows, udp.set_sport
  local flow, sent = 0, 0
  while surge.running() do
    local n = burst:alloc()
    for i = 0, n - 1 do
      set_sport(burst.data[i] + l4, 1024 + flow)
      flow = flow + 1
      if flow == flows then flow = 0 end
    end
    sent = sent + q:send(burst)
  end
  return sent
end
