-- Per-connection hooks of surge.conn (issue 21 item 2: "per-connection
-- hooks in Lua where the user wants them, JIT-compiled, without
-- allocation"; docs/connections.md, "Per-connection hooks"): a surge
-- client and a surge server on one net_ring0 port (port 0 of `surge test`,
-- its own loopback: each engine takes the frames to its address and leaves
-- the others, which go back on the ring), with hooks counting, choosing
-- request templates and closing. Each hook is called once per event, its
-- counts equal to the engines' counters; what a hook chose is what went on
-- the wire (the frames read between the two engines).
local surge = require("surge")
local ffi = require("ffi")
local conn = require("surge.conn")
local testrun = require("surge.vm.testrun")
local errors, at = testrun.errors, testrun.at

local T = {}

local SRV, CLI = "10.0.0.1", "10.0.0.2"
local RESPONSE = conn.http_response{ body = 100 }

local ring, pool, rx, tx, rxq, txq
local function setup()
  if ring then return end
  ring = surge.port(0, { rxq = 1, txq = 1 })
  rxq, txq = ring:rxq(0), ring:txq(0)
  pool = surge.pool{ template = surge.proto.tcp{ src = CLI, dst = SRV, size = 60 }, data_room = conn.data_room(),
                     size = 8191 }
  rx, tx = pool:burst(64), pool:burst(64)
end

local function server(o)
  o = o or {}
  o.addr, o.capacity, o.time_wait = SRV, o.capacity or 1024, 0
  o.response = o.response or RESPONSE
  return conn.server(o)
end

local function client(o)
  o.src, o.server, o.capacity, o.time_wait = CLI, SRV, o.capacity or 1024, 0
  o.peer_mac = "02:00:00:00:00:01"
  return conn.client(o)
end

-- The TCP payload of frame i of b (IPv4, no options), or nil.
local function payload(b, i)
  local p, len = b.data[i], b.len[i]
  if len < 54 or p[12] ~= 0x08 or p[13] ~= 0x00 or p[23] ~= 6 then return nil end
  local ihl = bit.band(p[14], 15) * 4
  local tot = p[16] * 256 + p[17]
  local off = 14 + ihl + bit.rshift(p[14 + ihl + 12], 4) * 4
  local n = 14 + tot - off
  return n > 0 and ffi.string(p + off, n) or nil
end

-- Both engines until the client is done (or `rounds` pass): the client's
-- round, then the frames on the ring read (tap(b, i) for each) and put
-- back, then the server's round (and with a tap, its frames read too);
-- frames an engine leaves go back too.
local function pump(cl, sv, tap, rounds)
  for _ = 1, rounds or 100000 do
    if cl:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    local n = rxq:recv(rx)
    if n > 0 then
      if tap then for i = 0, n - 1 do tap(rx, i) end end
      txq:send(rx)
    end
    if sv:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    n = tap and rxq:recv(rx) or 0        -- the server's frames, on their way to the client
    if n > 0 then
      for i = 0, n - 1 do tap(rx, i) end
      txq:send(rx)
    end
    if cl:done() and cl:stats().concurrent == 0 and sv:stats().concurrent == 0 then return end
  end
  error("the pair did not finish: " .. conn.format(cl:summary()) .. " / " .. conn.format(sv:summary()))
end

-- Each hook once per event, its values right, its counts the counters'.
function T.hooks_once_per_event()
  setup()
  local N = 300
  local k = { est = 0, resp = 0, fail = 0, close = 0, completed = 0, s_est = 0, s_close = 0, first = 0 }
  local seen = {}
  local sv = server{ prefix = "h1s",
    on_established = function(c) k.s_est = k.s_est + 1 end,
    on_close = function(c) k.s_close = k.s_close + 1 assert(c:reason() == "completed", c:reason()) end }
  local cl = client{ prefix = "h1c", connections = N, concurrency = 64, requests = 2,
    on_established = function(c)
      k.est = k.est + 1
      assert(c:kind() == "established" and c:requests() == 0 and c:time_us() >= 0)
      assert(not seen[c:id()], "established twice before its close: " .. c:id())
      seen[c:id()] = true
    end,
    on_response = function(c)
      k.resp = k.resp + 1
      assert(c:status() == 200 and c:bytes() == #RESPONSE, c:status() .. " " .. c:bytes())
      if c:requests() == 1 then k.first = k.first + 1 end
    end,
    on_fail = function() k.fail = k.fail + 1 end,
    on_close = function(c)
      k.close = k.close + 1
      assert(seen[c:id()], "closed without its established: " .. c:id())
      seen[c:id()] = nil
      if c:reason() == "completed" then k.completed = k.completed + 1 end
    end }
  pump(cl, sv)
  local c, s = cl:stats(), sv:stats()
  assert(c.completed == N and c.failed == 0, conn.format(cl:summary()))
  assert(k.est == c.established and k.est == N, k.est .. " on_established, " .. c.established .. " established")
  assert(k.resp == c.responses and k.resp == 2 * N, k.resp .. " on_response, " .. c.responses .. " responses")
  assert(k.first == N, k.first .. " first responses")
  assert(k.close == N and k.completed == c.completed, k.close .. " on_close, " .. k.completed .. " completed")
  assert(k.fail == 0 and next(seen) == nil)
  assert(k.s_est == s.established and k.s_close == s.completed and s.completed == N,
    ("server: %d on_established (%d), %d on_close (%d completed)"):format(k.s_est, s.established, k.s_close,
      s.completed))
end

-- on_fail once per failed count, with its reason: a port nobody listens on
-- (the server resets every SYN).
function T.on_fail_counts_failures()
  setup()
  local N, fails, closes = 50, 0, 0
  local sv = server{ prefix = "h2s" }
  local cl = client{ prefix = "h2c", connections = N, port = 81,
    on_fail = function(c) assert(c:reason() == "rst", c:reason()) fails = fails + 1 end,
    on_close = function(c) assert(c:reason() == "failed", c:reason()) closes = closes + 1 end }
  pump(cl, sv)
  local c = cl:stats()
  assert(c.failed_rst == N and fails == N and closes == N, ("%d failed_rst, %d on_fail, %d on_close"):format(
    c.failed_rst, fails, closes))
end

-- A hook that closes after the first response: requests = 5 asked, one
-- sent on each connection, each counted completed; with "rst", RSTs.
function T.hook_closes_after_first_response()
  setup()
  for _, how in ipairs({ "fin", "rst" }) do
    local N = 100
    local sv = server{ prefix = "h3s" .. how }
    local cl = client{ prefix = "h3c" .. how, connections = N, requests = 5,
      on_response = function(c) c:close(how) end }
    pump(cl, sv)
    local c, s = cl:stats(), sv:stats()
    assert(c.completed == N and c.failed == 0 and c.responses == N and c.requests == N,
      how .. ": " .. conn.format(cl:summary()))
    assert(s.requests == N, how .. ": the server received " .. s.requests)
    assert(c.rst_sent == (how == "rst" and N or 0), how .. ": rst_sent " .. c.rst_sent)
  end
end

-- Hooks choosing templates: on_established picks each connection's first
-- request (/a on even ids, the `request` / on odd), on_response the second
-- by the first's template (/a -> /b, / -> /c); the requests on the wire
-- are those, and the server received their bytes.
function T.hooks_choose_templates()
  setup()
  local N = 200
  local get = function(path) return conn.http_get{ host = SRV, path = path } end
  local sv = server{ prefix = "h4s" }
  local cl = client{ prefix = "h4c", connections = N, concurrency = 32, request = get("/"),
    templates = { get("/a"), get("/b"), get("/c") },
    on_established = function(c) if c:id() % 2 == 0 then c:send(1) end end,
    on_response = function(c)
      if c:requests() == 1 then c:send(c:template() == 1 and 2 or 3) end
    end }
  local wire = {}
  pump(cl, sv, function(b, i)
    local p = payload(b, i)
    local path = p and p:match("^GET (%S+) HTTP/1.1\r\n")
    if path then wire[path] = (wire[path] or 0) + 1 end
  end)
  local c, s = cl:stats(), sv:stats()
  assert(c.completed == N and c.failed == 0 and c.responses == 2 * N, conn.format(cl:summary()))
  for path, n in pairs({ ["/"] = N / 2, ["/a"] = N / 2, ["/b"] = N / 2, ["/c"] = N / 2 }) do
    assert(wire[path] == n, ("%s: %s on the wire, %d expected"):format(path, tostring(wire[path]), n))
  end
  local bytes = N / 2 * (#get("/") + #get("/a") + #get("/b") + #get("/c"))
  assert(s.bytes_rcvd == bytes and c.bytes_sent == bytes, ("server received %d bytes, client sent %d, %d expected")
    :format(s.bytes_rcvd, c.bytes_sent, bytes))
end

-- Per-connection state: slots, 0 at each open, kept across the events.
function T.slots_per_connection()
  setup()
  local N, bad = 150, 0
  local sv = server{ prefix = "h5s" }
  local cl = client{ prefix = "h5c", connections = N, concurrency = 16, capacity = 16, requests = 3, slots = 2,
    on_established = function(c)
      if c:get(1) ~= 0 or c:get(2) ~= 0 then bad = bad + 1 end
      c:set(2, 1000 + c:id())
    end,
    on_response = function(c) c:set(1, c:get(1) + 1) end,
    on_close = function(c)
      if c:get(1) ~= 3 or c:get(2) ~= 1000 + c:id() then bad = bad + 1 end
    end }
  pump(cl, sv)
  assert(cl:stats().completed == N and bad == 0, bad .. " connections with the wrong state")
end

-- Bad hook values: one error at the user's line.
function T.bad_hooks()
  setup()
  errors(at("surge.conn.client: on_response: expected a function, got 5", 1),
    function() client{ connections = 1, on_response = 5 } end)
  errors(at("surge.conn.server: on_close: expected a function, got \"x\"", 1),
    function() server{ on_close = "x" } end)
  errors("unknown option 'on_response'", function() server{ on_response = function() end } end)
  errors(at("surge.conn.client: templates without a hook (on_established, on_response, on_close, on_fail) to use them", 1),
    function() client{ connections = 1, templates = { "x" } } end)
  errors(at("surge.conn.client: templates[1]: expected a string, got 1", 1),
    function() client{ connections = 1, templates = { 1 }, on_response = function() end } end)
  -- misuse inside a hook: raised at the hook's line, out of the poll
  local function run_with(o)
    local sv = server{ prefix = "h6s" .. tostring(o.prefix) }
    o.connections = 1
    local cl = client(o)
    local ok, err = pcall(pump, cl, sv)
    while rxq:recv(rx) > 0 do rx:free() end
    cl:abort(txq, tx)
    sv:abort(txq, tx)
    while rxq:recv(rx) > 0 do rx:free() end
    return ok, err
  end
  -- "FILE:LINE: MSG", LINE the hook's
  local line
  local function raised(o, msg)
    local ok, err = run_with(o)
    local want = (":%d: %s"):format(line, msg)
    assert(not ok and err:sub(-#want) == want, tostring(err) .. " (expected " .. want .. ")")
  end
  raised({ prefix = "a", templates = { "GET /x HTTP/1.1\r\n\r\n" },
    on_response = function(c) line = debug.getinfo(1, "l").currentline c:send(2) end },
    "connection:send: k: expected a template in 0..1 (0: the request, k: templates[k]), got 2")
  raised({ prefix = "b", on_close = function(c) line = debug.getinfo(1, "l").currentline c:close() end },
    "connection:close: in a client's on_established or on_response or a server's on_request only "
      .. "(this is a client's on_close)")
  raised({ prefix = "c", slots = 1, on_response = function(c)
    line = debug.getinfo(1, "l").currentline c:set(2, 1) end }, "connection:set: k: expected a slot in 1..1 (the engine's `slots`), got 2")
  raised({ prefix = "d", templates = { "GET /x HTTP/1.1\r\n\r\n" },
    on_response = function(c) line = debug.getinfo(1, "l").currentline c:send(0.5) end },
    "connection:send: k: expected a template in 0..1 (0: the request, k: templates[k]), got 0.5")
  raised({ prefix = "e", templates = { "GET /x HTTP/1.1\r\n\r\n" },
    on_response = function(c) line = debug.getinfo(1, "l").currentline c:send("1") end },
    "connection:send: k: expected a template in 0..1 (0: the request, k: templates[k]), got \"1\"")
  raised({ prefix = "f", slots = 1, on_response = function(c)
    line = debug.getinfo(1, "l").currentline c:get(0 / 0) end }, "connection:get: k: expected a slot in 1..1 (the engine's `slots`), got nan")
end

-- Issue 21 (server hooks that act): on_request chooses each request's
-- response among `templates` by its path, or closes (FIN, RST). The
-- client's connection i asks for /a, /b, /c or /d (i mod 4): /a gets the
-- `response` (200, 100 bytes), /b templates[1] (404, 10 bytes), /c a FIN
-- (the client fails it: closed before an answer), /d an RST. The
-- responses on the wire are those, byte for byte, and the hook's counts
-- are the engines' counters.
local NOTFOUND = conn.http_response{ status = 404, body = 10 }
local get = function(path) return conn.http_get{ host = SRV, path = path } end

local function route(k)
  return function(c)
    k.req = k.req + 1
    local path = c:path()
    k.paths[path] = (k.paths[path] or 0) + 1
    assert(c:bytes() == #get(path) and c:starts("GET " .. path .. " HTTP/1.1\r\n"), c:head())
    assert(c:kind() == "request")
    k.nums[c:requests()] = (k.nums[c:requests()] or 0) + 1
    if path == "/a" then c:send()
    elseif path == "/b" then c:send(1)
    elseif path == "/c" then c:close()
    elseif path == "/d" then c:close("rst")
    else c:send(2) end
  end
end

-- the server's TCP payload in the tapped frames, per client port, in order
local function server_stream(streams)
  return function(b, i)
    local p = payload(b, i)
    local d = b.data[i]
    if p and d[34] * 256 + d[35] == 80 then
      local port = d[36] * 256 + d[37]
      streams[port] = (streams[port] or "") .. p
    end
  end
end

function T.on_request_chooses_responses()
  setup()
  local N = 200
  local k = { req = 0, paths = {}, nums = {} }
  local sv = server{ prefix = "h7s", templates = { NOTFOUND, "unused" }, on_request = route(k) }
  local cl = client{ prefix = "h7c", connections = N, concurrency = 32, request = get("/a"), expect = { http = 0 },
    templates = { get("/b"), get("/c"), get("/d") },
    on_established = function(c) local m = c:id() % 4 if m > 0 then c:send(m) end end }
  local streams = {}
  pump(cl, sv, server_stream(streams))
  local c, s = cl:stats(), sv:stats()
  assert(k.req == N and s.requests == N and k.nums[1] == N, ("%d on_request, %d requests"):format(k.req, s.requests))
  for _, path in ipairs({ "/a", "/b", "/c", "/d" }) do
    assert(k.paths[path] == N / 4, path .. ": " .. tostring(k.paths[path]))
  end
  assert(c.completed == N / 2 and c.failed_bad == N / 4 and c.failed_rst == N / 4 and c.responses == N / 2,
    conn.format(cl:summary()))
  assert(s.responses == N / 2 and s.rst_sent == N / 4 and s.completed == N / 2, conn.format(sv:summary()))
  local got = { [RESPONSE] = 0, [NOTFOUND] = 0, [""] = 0 }
  for _, v in pairs(streams) do got[v] = (got[v] or 0) + 1 end
  assert(got[RESPONSE] == N / 4 and got[NOTFOUND] == N / 4, ("%d 200s, %d 404s on the wire"):format(got[RESPONSE],
    got[NOTFOUND]))
  local n = 0
  for _ in pairs(streams) do n = n + 1 end
  assert(n == N / 2, n .. " connections with response bytes (those closed got none)")
end

-- Pipelined requests (SURGE_CONN_PIPELINE of them in one segment), each
-- answered in order with its own choice: /b /a /b /a gets 404 200 404 200.
function T.on_request_pipelined_in_order()
  setup()
  local N = 64
  local k = { req = 0, paths = {}, nums = {} }
  local sv = server{ prefix = "h8s", templates = { NOTFOUND }, on_request = route(k) }
  local req = get("/b") .. get("/a") .. get("/b") .. get("/a")
  local want = NOTFOUND .. RESPONSE .. NOTFOUND .. RESPONSE
  local cl = client{ prefix = "h8c", connections = N, concurrency = 16, request = req,
    expect = { length = #want }, requests = 2 }
  local streams = {}
  pump(cl, sv, server_stream(streams))
  local c, s = cl:stats(), sv:stats()
  assert(c.completed == N and c.failed == 0, conn.format(cl:summary()))
  assert(k.req == 8 * N and s.requests == 8 * N and s.responses == 8 * N,
    ("%d on_request, %d requests, %d responses"):format(k.req, s.requests, s.responses))
  for r = 1, 8 do assert(k.nums[r] == N, ("request %d: %s"):format(r, tostring(k.nums[r]))) end
  local n = 0
  for port, v in pairs(streams) do
    n = n + 1
    assert(v == want .. want, ("port %d: %d bytes, not the 4 responses in order twice"):format(port, #v))
  end
  assert(n == N)
end

-- on_request's misuse: one error at the user's line.
function T.on_request_misuse()
  setup()
  errors("unknown option 'on_request'", function() client{ connections = 1, on_request = function() end } end)
  errors(at("surge.conn.server: templates without on_request to choose them", 1),
    function() server{ templates = { "x" }, on_close = function() end } end)
  errors(at("surge.conn.server: on_request: expected a function, got 1", 1),
    function() server{ on_request = 1 } end)
  local function raised(o, msg)
    local sv = server(o)
    local cl = client{ prefix = "h9c" .. o.prefix, connections = 1 }
    local ok, err = pcall(pump, cl, sv)
    while rxq:recv(rx) > 0 do rx:free() end
    cl:abort(txq, tx)
    sv:abort(txq, tx)
    while rxq:recv(rx) > 0 do rx:free() end
    local want = (":%d: %s"):format(o.line, msg)
    assert(not ok and err:sub(-#want) == want, tostring(err) .. " (expected " .. want .. ")")
  end
  local o = { prefix = "h9a", templates = { NOTFOUND } }
  o.on_request = function(c) o.line = debug.getinfo(1, "l").currentline c:send(2) end
  raised(o, "connection:send: k: expected a template in 0..1 (0: the response, k: templates[k]), got 2")
  o = { prefix = "h9b" }
  o.on_established = function(c) o.line = debug.getinfo(1, "l").currentline c:path() end
  raised(o, "connection:path: in a server's on_request only (this is a server's on_established)")
  o = { prefix = "h9c" }
  o.on_request = function(c) o.line = debug.getinfo(1, "l").currentline c:close("x") end
  raised(o, "connection:close: how: expected \"fin\" or \"rst\", got \"x\"")
  o = { prefix = "h9d" }
  o.on_request = function(c) o.line = debug.getinfo(1, "l").currentline c:starts(5) end
  raised(o, "connection:starts: s: expected a string, got 5")
end

return T
