-- surge.conn from Lua (issue 21 item 2): the HTTP templates are what a
-- server and a client expect, misuse is one error at this file's line
-- naming the option, and an engine's handle is strict.
local surge = require("surge")
local conn = require("surge.conn")
local testrun = require("surge.vm.testrun")
local errors, at = testrun.errors, testrun.at

local T = {}

function T.http_templates()
  local g = conn.http_get{ host = "10.1.0.1", path = "/x" }
  assert(g == "GET /x HTTP/1.1\r\nHost: 10.1.0.1\r\nUser-Agent: surge\r\nAccept: */*\r\n\r\n", g)
  local r = conn.http_response{ body = 100 }
  local head, body = r:match("^(.-\r\n\r\n)(.*)$")
  assert(head:find("HTTP/1.1 200 OK\r\n", 1, true) == 1, head)
  assert(head:find("Content-Length: 100\r\n", 1, true), head)
  assert(#body == 100 and body:sub(1, 10) == "0123456789", body)
  assert(conn.http_response{ body = "hi", status = 404 }:find("^HTTP/1.1 404 Not Found\r\n.*\r\n\r\nhi$"))
end

function T.client_and_server_options()
  errors(at("surge.conn.client: src: expected a string, got nil"), function() conn.client{ server = "10.0.0.1" } end)
  errors(at("surge.conn.client: close = \"half\": \"fin\" or \"rst\"", 1),
    function() conn.client{ src = "10.0.0.2", server = "10.0.0.1", close = "half" } end)
  errors(at("surge.conn.client: capacity 65000 from sport 1024 over 1 source address: each address's connections "
    .. "use ports sport and up, so at most 64512", 2),
    function() conn.client{ src = "10.0.0.2", server = "10.0.0.1", capacity = 65000 } end)
  -- several source addresses (issue 21 item 1): a range or a list, one family, none twice
  errors(at("surge.conn.client: capacity 200000 from sport 1024 over 3 source addresses: each address's "
    .. "connections use ports sport and up, so at most 193536", 2),
    function() conn.client{ src = "10.0.0.2-10.0.0.4", server = "10.0.0.1", capacity = 200000 } end)
  errors(at("surge.conn.client: src: 10.0.0.3 is given twice", 1),
    function() conn.client{ src = { "10.0.0.2-10.0.0.4", "10.0.0.3" }, server = "10.0.0.1", capacity = 8 } end)
  errors(at("surge.conn.client: src: '2001:db8::1' is not of the family of the addresses before it", 1),
    function() conn.client{ src = { "10.0.0.2", "2001:db8::1" }, server = "10.0.0.1", capacity = 8 } end)
  errors(at("surge.conn.client: src: '10.0.0.0-10.16.0.0': more than 1048576 addresses", 1),
    function() conn.client{ src = "10.0.0.0-10.16.0.0", server = "10.0.0.1", capacity = 8 } end)
  errors(at("surge.conn.client: concurrency 20 over the capacity 10", 1),
    function() conn.client{ src = "10.0.0.2", server = "10.0.0.1", capacity = 10, concurrency = 20 } end)
  errors(at("surge.conn.client: rate \"1gbit\": connections per second, a plain number (or \"Npps\")", 1),
    function() conn.client{ src = "10.0.0.2", server = "10.0.0.1", rate = "1gbit" } end)
  -- a server's addresses (issue 33 item 4): the same forms and limit as a client's src
  local max = require("ffi").C.SURGE_CONN_ADDR_MAX
  local over = "10.0.0.0-" .. require("surge.proto.ip4").addr_text(0x0a000000 + max)
  errors(at("surge.conn.server: addr: '2001:db8::1' is not of the family of the addresses before it", 1),
    function() conn.server{ addr = { "10.0.0.1-10.0.0.3", "2001:db8::1" } } end)
  errors(at(("surge.conn.server: addr: '%s': more than %d addresses"):format(over, max), 1),
    function() conn.server{ addr = over } end)
  errors(at("surge.conn.server: addr: 10.0.0.2 is given twice", 1),
    function() conn.server{ addr = { "10.0.0.1-10.0.0.3", "10.0.0.2" } } end)
  errors(at("surge.conn.server: addr: an empty list of addresses"), function() conn.server{ addr = {} } end)
  errors(at("surge.conn.server: addr: expected a string, got 5"), function() conn.server{ addr = 5 } end)
  errors(at("surge.conn.server: response is 0 bytes: 1..1048576", 1),
    function() conn.server{ addr = "10.0.0.1", response = "" } end)
  errors(at("surge.conn.server: expect.length: expected an integer in 1..4294967295, got 0", 1),
    function() conn.server{ addr = "10.0.0.1", expect = { length = 0 } } end)
  errors("unknown option", function() conn.server{ addr = "10.0.0.1", bogus = 1 } end)
end

function T.engine_handle()
  local e = conn.server{ addr = "10.0.0.1", capacity = 8, prefix = "t_server" }
  local st = e:stats()
  assert(st.attempted == 0 and st.concurrent == 0 and st.failed == 0)
  assert(e:percentiles("response") == nil, "no sample yet")
  errors(at("engine:percentiles: which: expected \"connect\" or \"response\", got \"p99\""), function() e:percentiles("p99") end)
  errors(at("connection engine has no field 'nosuch'"), function() return e.nosuch end)
  local c = conn.client{ src = "10.0.0.2", server = "10.0.0.1", connections = 3, prefix = "t_client" }
  assert(not c:done(), "nothing opened yet")
  local t = c:template()
  assert(#t.bytes == 60)
end

-- issue 21 (speed against dperf): a poll never waits for room in a full TX
-- ring. Each side's RX and TX share one loop, so a send that waits for its
-- peer to drain, while the peer's send waits on it, held both ends for the
-- 1 s stall limit (push_all) at every full ring. Here the peer is the
-- engine itself: net_ring0 (port 0 of `surge test`) loops what it sends
-- back to its own RX, which only the next poll drains, so 4096 SYNs opened
-- unanswered fill the ring. What the ring does not take is dropped,
-- counted in tx_full and in the port's drops alike, and sent again by the
-- RTO; no open is made while the ring is full.
function T.full_tx_ring_is_not_waited_on()
  local port = surge.port(0, { rxq = 1, txq = 1 })
  local e = conn.client{ src = "10.0.0.2", server = "10.0.0.1", connections = 4096, concurrency = 4096,
    capacity = 4096, rto = 60, prefix = "t_ring" }
  local pool = surge.pool{ template = e:template(), data_room = e:data_room(), size = 8191 }
  local rx, tx = pool:burst(64), pool:burst(64)
  local rxq, txq = port:rxq(0), port:txq(0)
  local hz, longest = tonumber(surge.tsc_hz()), 0
  local st = e:stats()
  for _ = 1, 64 do
    local t0 = surge.tsc()
    e:poll(rxq, txq, rx, tx)
    longest = math.max(longest, tonumber(surge.tsc() - t0) / hz)
    rx:free()
    st = e:stats()
    if st.attempted == 4096 and (st.tx_full or 0) > 0 then break end
  end
  -- the wait this replaces was the 1 s stall limit: a poll that waits at
  -- all takes that long; one that does not, a few microseconds
  assert(longest < 0.5, ("a poll took %.3f s: it waited for room in the ring"):format(longest))
  assert(st.tx_full > 0, "the ring filled: " .. st.attempted .. " opened, nothing dropped")
  local drops = port:stats().tx_drops
  assert(drops == st.tx_full, ("the port dropped %d, the engine counted %d"):format(drops, st.tx_full))
  assert(st.tx_segments == st.attempted, "every open wrote its SYN, sent or dropped")
  while rxq:recv(rx) > 0 do rx:free() end
  e:abort(txq, tx)
  while rxq:recv(rx) > 0 do rx:free() end
end

-- issue 30.5: the libraries are layered (docs/architecture.md): conn sits
-- beside dut, not above it, so no module of surge.conn requires surge.dut
-- (the packet view it parses ARP with is surge.proto.view, below both).
function T.conn_requires_no_dut()
  local dir = package.surge_lua .. "/surge/conn/"
  local p = io.popen("ls " .. dir .. "*.lua")
  local n = 0
  for f in p:lines() do
    n = n + 1
    local src = assert(io.open(f)):read("*a")
    for line in src:gmatch("[^\n]+") do
      local mod = line:match("require%s*%(?%s*[\"']([%w_.]+)[\"']")
      assert(not (mod and mod:match("^surge%.dut")), f .. " requires " .. tostring(mod))
    end
  end
  p:close()
  assert(n >= 2, "found conn's modules in " .. dir)
  assert(require("surge.dut.view") == require("surge.proto.view"), "the old name is the same module")
end

return T
