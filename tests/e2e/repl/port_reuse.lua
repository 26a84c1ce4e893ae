-- port_reuse.lua - master opens port 0 with two tx queues and sends on
-- queue 0 from a task; the prompt (run -i) or an attached client then
-- reaches the same port with surge.port(0) (issue 23 item 6).
local surge = require("surge")

function tx(q)
  local pool = surge.pool{ template = surge.proto.udp{ size = 60 } }
  local b = pool:burst(32)
  q:set_rate("100kpps")
  while surge.running() do b:alloc(); q:send(b) end
  return "sent"
end

function master()
  local port = surge.port(0, { txq = 2 })
  surge.launch("tx", port:txq(0))
  print("ready")
  io.stdout:flush()
  surge.wait()
  print("master: wait returned")
end
