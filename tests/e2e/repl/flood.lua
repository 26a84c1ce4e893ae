-- flood.lua - tasks the REPL tests launch from the prompt.
local surge = require("surge")

-- Sends 60-byte UDP frames on q (paced when rate is given) until stopped,
-- or until `count` packets were sent when given.
function tx(q, rate, count)
  local pool = surge.pool{ template = surge.proto.udp{ size = 60 }, shared = true }
  local burst = pool:burst(32)
  local sent = 0
  if rate then q:set_rate(rate) end
  while surge.running() and (not count or sent < count) do
    burst:alloc(count and math.min(32, count - sent) or 32)
    sent = sent + q:send(burst)
  end
  return "sent"
end

-- Receives on the queues given until stopped; returns the packets seen.
function rx(...)
  local qs = { ... }
  local pool = surge.pool{ size = 4096 }
  local burst = pool:burst(32)
  local n = 0
  while surge.running() do
    for i = 1, #qs do n = n + qs[i]:recv(burst) end
  end
  burst:free()
  return n
end

-- For `surge run -i`: one paced sender, then the prompt (at surge.wait).
function master()
  local port = surge.port(0)
  surge.launch("tx", port:txq(0), "1mpps")
  surge.wait()
  print("master: wait returned")
end
