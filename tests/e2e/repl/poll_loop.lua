-- poll_loop.lua - a master that never calls surge.wait(): it loops on
-- surge.poll() (--mode poll) or on surge.sleep() (--mode sleep) while one
-- task sends. Under --control, attached clients are served there too.
local surge = require("surge")

function configure(p)
  p:option("--mode", "poll: spin on surge.poll(); sleep: surge.sleep(0.2) in a loop", "poll")
end

function tx(q)
  local pool = surge.pool{ template = surge.proto.udp{ size = 60 } }
  local burst = pool:burst(32)
  q:set_rate("100kpps")
  while surge.running() do
    burst:alloc()
    q:send(burst)
  end
end

function master(args)
  surge.launch("tx", surge.port(0):txq(0))
  if args.mode == "poll" then
    while surge.poll() > 0 do end
  else
    while surge.running() do surge.sleep(0.2) end
  end
  print("master: loop ended")
end
