-- port:close(): close a port from master, open it again, remove a vdev.
-- Run with --vdev net_ring0 --vdev net_null0,no-rx=1 (ports 0 and 1); the
-- vdevs added here have their own names (net_ring7, net_null7).
local surge = require("surge")
local ffi = require("ffi")

local T = {}

local errors = require("surge.vm.testrun").errors

local function port_id(name)
  local id = ffi.C.surge_port_find(name)
  return id >= 0 and id or nil
end

-- Sends n frames of `size` bytes on the ring and reads them back.
local function loop(p, pool, n, size)
  local tx, rx = pool:burst(n), pool:burst(32)
  assert(tx:alloc() == n)
  assert(p:txq(0):send(tx) == n)
  local got = p:rxq(0):recv(rx)
  for i = 0, got - 1 do assert(rx.len[i] == size, "length " .. rx.len[i]) end
  rx:free()
  return got
end

function T.close_and_open_again()
  local ports = surge.ports()
  local p = surge.port("net_ring0")
  local pool = surge.pool{ size = 255, template = surge.proto.udp{ size = 70 }, shared = true }
  assert(loop(p, pool, 10, 70) == 10)
  local s = p:txq(0):stats()
  assert(s.packets == 10 and s.bytes == 700, "counted before the close")
  -- five more stay queued in the ring: the close drains them to their pool
  local tx = pool:burst(5)
  tx:alloc()
  assert(p:txq(0):send(tx) == 5)
  assert(pool:info().avail == 250)
  local id = p:close()
  assert(id == p.id, "the ring came back under its number: " .. tostring(id))
  assert(pool:info().avail == 255, "the close returned the queued packets: " .. pool:info().avail)
  assert(surge.ports() == ports, "the port is still there")
  assert(p:info().rxq == 0 and p:info().txq == 0, "closed: no queues")
  errors("port 0 is not open", p.txq(p, 0).send, p:txq(0), pool:burst(1))
  errors("port 0 is not open", p.close, p)
  errors("port 0 has no open tx queue 0", p.txq(p, 0).stats, p:txq(0))
  -- open again, with other queue counts: fresh counters, traffic flows
  local p2 = surge.port("net_ring0", { rxq = 2, txq = 2 })
  assert(p2:info().txq == 2 and p2:info().rxq == 2)
  assert(p2:txq(0):stats().packets == 0, "counters start again")
  assert(p2:stats().opackets == 0, "the device's counters start again")
  assert(loop(p2, pool, 7, 70) == 7)
  assert(p2:txq(0):stats().packets == 7 and p2:stats().opackets == 7)
  assert(p2:close() == p2.id)
  assert(pool:info().avail == 255)
  surge.port("net_ring0")   -- left open: exit closes it (and checks its pool)
end

function T.vdev_close_remove_and_add_again()
  local ports = surge.ports()
  local id = surge.vdev("net_ring7")
  assert(surge.ports() == ports + 1)
  local p = surge.port(id)
  local pool = surge.pool{ size = 63, template = surge.proto.udp{ size = 64 }, shared = true }
  assert(loop(p, pool, 4, 64) == 4)
  errors("unknown option 'gone'", p.close, p, { gone = true })
  errors("expected a boolean", p.close, p, { remove = 1 })
  assert(p:close{ remove = true } == nil)
  assert(surge.ports() == ports, "the vdev is gone")
  assert(port_id("net_ring7") == nil, "no port named net_ring7 any more")
  errors("no port named 'net_ring7'", surge.port, "net_ring7")
  -- added again under the same name, it works as before
  local id2 = surge.vdev("net_ring7")
  local p2 = surge.port(id2)
  assert(loop(p2, pool, 4, 64) == 4)
  assert(p2:txq(0):stats().packets == 4, "a new device counts from 0")
  p2:close{ remove = true }
  assert(pool:info().avail == 63)
end

-- removing a port below another leaves a gap: surge.ports() still reaches
-- the last port, the gap is an error naming it
function T.remove_leaves_a_gap()
  local ports = surge.ports()
  local a = surge.port(surge.vdev("net_ring8"))
  local b = surge.vdev("net_ring9")
  assert(b == a.id + 1 and surge.ports() == ports + 2)
  a:close{ remove = true }
  assert(surge.ports() == ports + 2, "the last port is still counted")
  errors("port " .. a.id .. " does not exist", surge.port, a.id)
  local pb = surge.port(b)
  assert(pb:info().name == "net_ring9")
  pb:close{ remove = true }
  assert(surge.ports() == ports)
end

-- mbufs of the port's rx pool still out at the close: an error naming them,
-- the pool is kept (not freed under them) and checked again at the next open
function T.leak_at_close_is_an_error()
  local id = surge.vdev("net_null7")     -- net_null receives from the port's rx pool
  local p = surge.port(id, { rxq = 1, txq = 1 })
  local pool = surge.pool{ size = 63 }
  local rx = pool:burst(16)
  assert(p:rxq(0):recv(rx) == 16)
  errors("port " .. id .. " closed with a leak: 16 of its rx pool's mbufs are still out", p.close, p)
  errors("cannot open again: port " .. id .. " rx pool: 16 of %d+ mbufs not returned", surge.port, "net_null7")
  rx:free()
  local p2 = surge.port("net_null7")
  assert(p2.id == id)
  assert(p2:rxq(0):recv(rx) == 16)
  rx:free()
  p2:close{ remove = true }
end

function T.bad_close()
  errors("port 9 does not exist", surge.handles.port(9).close, surge.handles.port(9))
  errors("port 1 is not open", surge.handles.port(1).close, surge.handles.port(1))
  errors("port:close: expected port as self", surge.handles.port(1).close, {})
end

return T
