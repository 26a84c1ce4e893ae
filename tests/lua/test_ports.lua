-- Ports, queues, pools and bursts from Lua, in the main VM. Run with
-- --vdev net_ring0 (port 0, its own loopback) --vdev net_null0,no-rx=1.
local surge = require("surge")
local ffi = require("ffi")

local T = {}

local ring
local function ring_port()
  ring = ring or surge.port("net_ring0", { rxq = 1, txq = 1, clones = true })
  return ring
end

local null
local function null_port()
  null = null or surge.port("net_null0", { txq = 1, rxq = 1 })
  return null
end

local errors = require("surge.vm.testrun").errors

function T.port_info()
  local info = ring_port():info()
  assert(info.driver == "net_ring" and info.name == "net_ring0", info.driver)
  assert(info.rxq == 1 and info.txq == 1 and info.clones == true and info.fast_free == false)
end

function T.bad_ports_are_errors()
  errors("port 9 does not exist", surge.port, 9)
  errors("no port named 'nope0'", surge.port, "nope0")
  errors("unknown option 'queues'", surge.port, 1, { queues = 2 })
  errors("expected an integer", surge.port, 1, { txq = -1 })
  ring_port()
  errors("already open with other options: clones = true %(asked false%)", surge.port, "net_ring0", { clones = false })
  assert(surge.port("net_ring0").id == ring_port().id)   -- no options: the open port (tests/lua/test_port_reuse.lua)
end

function T.loopback_clones_and_counters()
  local p = ring_port()
  local pool = surge.pool{ size = 127, template = surge.proto.udp{ size = 80 }, shared = true }
  local tx = pool:burst(4)
  assert(tx:alloc() == 4)
  for i = 0, 3 do tx.data[i][40] = i end       -- tell the four apart
  local q0 = p:txq(0):stats()
  assert(p:txq(0):send(tx, { clones = 3 }) == 12)
  assert(tx.n == 0, "a sent burst is empty")
  local rx = pool:burst(32)
  assert(p:rxq(0):recv(rx) == 12)
  for i = 0, 11 do
    assert(rx.len[i] == 80 and rx.data[i][40] == math.floor(i / 3), "order of clones at " .. i)
    assert(rx:refcnt(i) == 3, "refcnt " .. rx:refcnt(i))
    assert(rx.mbuf[i] == rx.mbuf[i - i % 3], "clones share one mbuf")
  end
  rx:free()
  assert(pool:info().avail == 127, "pool full again")
  local q1 = p:txq(0):stats()
  assert(q1.packets - q0.packets == 12 and q1.bytes - q0.bytes == 960)
end

function T.single_owner_pool_refused_on_ring()
  -- master pools are shared; ask the C API for a single-owner pool directly
  local conf = ffi.new("struct surge_pool_conf", { size = 63, single_owner = 1 })
  local id = ffi.C.surge_pool_create(conf)
  assert(id >= 0)
  local b = require("surge.pool").burst(id, 2)
  assert(b:alloc() == 2)
  errors("make the pool with shared = true", function() ring_port():txq(0):send(b) end)
  b:free()
end

function T.clone_send_refused_without_clones()
  local p = null_port()
  local pool = surge.pool{ size = 63, template = surge.proto.udp{} }
  local b = pool:burst(8)
  b:alloc()
  errors("opened without clones", function() p:txq(0):send(b, 2) end)
  assert(b.n == 8, "refused burst keeps its packets")
  assert(p:txq(0):send(b) == 8)
  assert(pool:info().avail == 63)
  errors("no tx queue 3", function() p:txq(3):send(b) end)
end

function T.empty_pool_gives_short_bursts()
  local pool = surge.pool{ size = 40, cache = 1, template = surge.proto.udp{} }
  local a, b, c = pool:burst(32), pool:burst(32), pool:burst(32)
  assert(a:alloc() == 32)
  local got = b:alloc()
  assert(got > 0 and got <= 8, "short burst: " .. got)
  assert(c:alloc() == 0 or got + c.n <= 8)
  assert(pool:info().alloc_fail >= 1, "short allocations are counted")
  a:free(); b:free(); c:free()
  assert(pool:info().avail == 40)
end

-- pool:refill: an idle pool takes another template (every mbuf, its length
-- too); refused while an mbuf is out (surge otg reuses its pools so)
function T.refill_idle_pool()
  local pool = surge.pool{ size = 20, cache = 1, template = surge.proto.udp{ size = 60, dport = 7 } }
  local b = pool:burst(20)
  assert(b:alloc() == 20)
  errors("in use", pool.refill, pool, surge.proto.tcp{ size = 80 })
  b:free()
  pool:refill(surge.proto.tcp{ size = 80, dport = 9 })
  assert(pool:info().template_len == 80)
  assert(b:alloc() == 20)
  for i = 0, 19 do
    assert(b.len[i] == 80 and b.data[i][23] == 6, "packet " .. i .. " holds the TCP template")
    assert(b.data[i][36] == 0 and b.data[i][37] == 9)
  end
  b:free()
  errors("pool:refill: t .a template from surge.proto.: expected a table", pool.refill, pool, "x")
end

function T.template_function_fills_each_mbuf()
  local calls = 0
  local pool = surge.pool{ size = 15, cache = 1, fill = 64, template = function(buf, len, i)
    assert(len == 64)
    buf[0] = i
    buf[63] = 0xab
    calls = calls + 1
  end }
  assert(calls == 15, "called once per mbuf: " .. calls)
  local b = pool:burst(15)
  assert(b:alloc() == 15)
  local seen = {}
  for i = 0, 14 do
    assert(b.len[i] == 64 and b.data[i][63] == 0xab)
    seen[b.data[i][0]] = true
  end
  for i = 0, 14 do assert(seen[i], "mbuf " .. i .. " has its own bytes") end
  b:free()
  errors("needs fill", surge.pool, { template = function() end })
  errors("unknown option 'colour'", surge.pool, { colour = 1 })
end

function T.mtu_bounds_frame_length()
  -- port 1 is the null sink, opened without mtu: its 1500 allows 1522-byte
  -- frames (two VLAN tags) and refuses longer ones, however big the mbufs
  local q = null_port():txq(0)
  assert(null_port():info().mtu == 1500)
  local pool = surge.pool{ size = 63, data_room = 9216, template = surge.proto.udp{ size = 1522 } }
  local b = pool:burst(2)
  b:alloc()
  assert(q:send(b) == 2)
  b:alloc()
  b.len[1] = 1523
  errors("is 1523 bytes: port 1's MTU 1500 allows 1522", function() q:send(b) end)
  b:free()
  assert(pool:info().avail == 63)
end

function T.bad_lengths_refused()
  local q = null_port():txq(0)
  local pool = surge.pool{ size = 63, template = surge.proto.udp{} }
  local b = pool:burst(4)
  local before = q:stats().packets
  for _, bad in ipairs({ 5, pool:info().data_room + 1 }) do
    assert(b:alloc() == 4)
    b.len[2] = bad
    errors("packet 2 of the burst has length " .. bad, function() q:send(b) end)
    assert(b.n == 4)
  end
  b.len[2] = 60
  assert(q:send(b) == 4 and q:stats().packets - before == 4)
  assert(pool:info().avail == 63)
end

-- surge.cpu_wait() is the time this thread waited for a CPU: with a busy
-- process pinned to the CPU master runs on, half a second of spinning
-- waits a good part of it (CFS shares the CPU ~50/50); without it, less.
function T.cpu_wait_counts_time_taken_by_others()
  local f = assert(io.open("/proc/thread-self/status"))
  local cpu = f:read("*a"):match("Cpus_allowed_list:%s*(%d+)")
  f:close()
  local function spin(s)
    local w0, stop = surge.cpu_wait(), surge.tsc() + s * surge.tsc_hz()
    while surge.tsc() < stop do end
    return surge.cpu_wait() - w0
  end
  -- "alone" is whatever else the machine runs (other tests, builds): the
  -- busy process pinned beside it must add a clear share on top of that
  local alone = spin(0.6)
  assert(alone >= 0 and alone < 0.6, "waited " .. alone .. " s of 0.6 s")
  assert(os.execute(("taskset -c %s timeout 2 sh -c 'while :; do :; done' &"):format(cpu)) == 0)
  local shared = spin(0.6)
  os.execute("pkill -f \"sh -c while :; do :; done\" 2>/dev/null")
  assert(shared - alone > 0.05, ("waited %.3f s of 0.6 s beside a busy process on CPU %s, %.3f s without it"):format(
    shared, cpu, alone))
end

return T
