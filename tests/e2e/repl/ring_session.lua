p = surge.port(0, { txq = 2, rxq = 2 })
a = launch("tx", p:txq(0), "0.2mpps")
b = launch("tx", p:txq(1), "0.2mpps")
r = launch("rx", p:rxq(0), p:rxq(1))
surge.sleep(0.5)
stop(a)
n1 = p:txq(1):stats().packets
surge.sleep(0.5)
print("other task moved", p:txq(1):stats().packets > n1)
print("stopped task", a:state())
function burst_tx(q, count)
  local pool = surge.pool{ template = surge.proto.udp{ size = 60 }, shared = true }
  local bu = pool:burst(32)
  local sent = 0
  while surge.running() and sent < count do
    bu:alloc(math.min(32, count - sent))
    sent = sent + q:send(bu)
  end
  return sent
end
c = launch(burst_tx, p:txq(0), 10000)
surge.sleep(0.5)
print("typed task", c:state())
x = = 1
nosuch()
function boom() error("typed failure") end
launch(boom)
surge.sleep(0.3)
print("still here")
stop(b)
surge.sleep(0.5)
tasks()
