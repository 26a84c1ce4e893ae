p = surge.port("net_ring0")
o = surge.port("net_null0")
a = launch("tx", p:txq(0), "0.1mpps")
r = launch("rx", p:rxq(0))
b = launch("tx", o:txq(0), "0.1mpps")
surge.sleep(0.3)
p:close()
stop(a)
a:wait(5)
p:close()
stop(r)
r:wait(5)
print("sent before close", p:txq(0):stats().packets)
n = o:txq(0):stats().packets
print("closed as port", p:close())
surge.sleep(0.3)
print("the other port kept sending", o:txq(0):stats().packets > n)
p = surge.port("net_ring0", { rxq = 1, txq = 1 })
print("fresh counters", p:txq(0):stats().packets, p:stats().opackets)
function send_n(q, count)
  local pool = surge.pool{ template = surge.proto.udp{ size = 60 }, shared = true }
  local bu = pool:burst(32)
  local sent = 0
  while surge.running() and sent < count do
    bu:alloc(math.min(32, count - sent))
    sent = sent + q:send(bu)
  end
  return sent
end
c = launch(send_n, p:txq(0), 1000)
c:wait(10)
mp = surge.pool{ size = 2047 }
mb = mp:burst(64)
got = 0
for i = 1, 100 do got = got + p:rxq(0):recv(mb) end
mb:free()
print("received after reopen", got, p:txq(0):stats().packets, p:stats().opackets)
