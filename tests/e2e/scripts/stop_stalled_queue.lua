-- stop_stalled_queue.lua - sends 4800 packets into a net_ring nobody reads:
-- the ring takes 1023 and then nothing. Each send must end (a stalled
-- queue's sends give up, what is left counts as drops), so the loop ends.
local surge = require("surge")

function tx(q, n)
  local pool = surge.pool{ template = surge.proto.udp{ size = 60 }, shared = true }
  local b = pool:burst(32)
  local sent = 0
  for _ = 1, n / 32 do
    b:alloc()
    sent = sent + q:send(b)
  end
  return sent
end

function master()
  local p = surge.port(0, { rxq = 1, txq = 1 })
  surge.launch("tx", p:txq(0), 4800)
  local sent = surge.wait()[1]
  local st = p:txq(0):stats()
  print(("stalled: sent %d drops %d"):format(sent, st.drops))
end
