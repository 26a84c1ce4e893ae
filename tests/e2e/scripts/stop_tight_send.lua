-- stop_tight_send.lua - tasks that loop on send/recv/alloc without
-- surge.running(): "run stopped" ends them as a normal end (issue 7.5).
local surge = require("surge")
function master()
  local port = surge.port(0, { txq = 1, rxq = 1 })
  surge.launch("tx", port:txq(0))
  surge.launch("rx", port:rxq(0))
  surge.wait()
  print("master: after wait")
end
function tx(q)
  local b = surge.pool{ template = surge.proto.udp{} }:burst(32)
  while true do b:alloc() q:send(b) end
end
function rx(q)
  local b = surge.pool{ size = 255 }:burst(32)
  while true do q:recv(b) end
end
