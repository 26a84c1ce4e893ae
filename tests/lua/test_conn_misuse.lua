-- surge.conn misused (issue 31 item 10): every public function and method
-- of surge.conn and surge.conn.http refuses a bad argument with one line at
-- this file's line naming the function and the parameter (surge.check, as
-- the rest of the API), never an error inside lua/surge/conn/ or a value
-- handed to C. The listed cases first, then the class: every function and
-- method found in the modules, called with a dot or a bad argument.
local surge = require("surge")
local conn = require("surge.conn")
local http = require("surge.conn.http")
local testrun = require("surge.vm.testrun")
local errors, at = testrun.errors, testrun.at

local T = {}

local port, pool
local function setup()
  port = port or surge.port(0, { rxq = 1, txq = 1 })
  pool = pool or surge.pool{ template = surge.proto.tcp{}, data_room = conn.data_room(), size = 255 }
  return port:rxq(0), port:txq(0), pool:burst(8), pool:burst(8)
end

local n = 0
local function client(o)
  n = n + 1
  o = o or {}
  o.src, o.server, o.prefix = o.src or "10.0.0.2", o.server or "10.0.0.1", o.prefix or ("mis_c%d"):format(n)
  return conn.client(o)
end

function T.issue_cases()
  local rxq, txq, rx, tx = setup()
  local e = client{ connections = 1 }
  local Q = "an rx queue (port:rxq(i))"
  errors(at("engine:poll: rxq: expected " .. Q .. ", got nil"), function() e:poll(nil, txq, rx, tx) end)
  errors(at('engine:poll: rx: expected a burst, got "x"'), function() e:poll(rxq, txq, "x", tx) end)
  errors(at("engine:poll: txq: expected a tx queue (port:txq(i)), got rxq(0,0)"), function() e:poll(rxq, rxq, rx, tx) end)
  errors(at("engine:poll: tx: expected a burst, got nil"), function() e:poll(rxq, txq, rx) end)
  errors(at("engine:poll: expected engine as self, got rxq(0,0) (call it with ':')"), function() e.poll(rxq, txq, rx, tx) end)
  errors(at("engine:abort: txq: expected a tx queue (port:txq(i)), got nil"), function() e:abort(nil) end)
  errors(at("engine:abort: tx: expected a burst, got nil"), function() e:abort(txq) end)
  errors(at("engine:run: rxq: expected " .. Q .. ", got nil"), function() e:run{} end)
  errors(at("engine:run: rxq: expected " .. Q .. ", got nil"), function() e:run() end)
  errors(at('engine:run: pool: expected a pool (surge.pool{...}), got "x"', 1),
    function() e:run{ rxq = rxq, txq = txq, pool = "x" } end)
  errors(at("engine:run: seconds: expected a number >= 0, got -1", 1),
    function() e:run{ rxq = rxq, txq = txq, pool = pool, seconds = -1 } end)
  errors(at("engine:run: neigh: expected a responder (surge.dut.neigh.new{...}), got a table", 1),
    function() e:run{ rxq = rxq, txq = txq, pool = pool, neigh = {} } end)
  errors(at("engine:run: iface: expected an integer in 1..65535, got 0", 1),
    function() e:run{ rxq = rxq, txq = txq, pool = pool, iface = 0 } end)
  errors(at("engine:run: opts: expected a table, got 5"), function() e:run(5) end)
  errors(at('engine:summary: seconds: expected a number >= 0, got "x"'), function() e:summary("x") end)
  errors(at("engine:summary: seconds: expected a number >= 0, got -1"), function() e:summary(-1) end)
  errors(at("surge.conn.format: t (engine:summary()'s): expected a table, got nil"), function() conn.format(nil) end)
  errors(at("surge.conn.format: t.attempted: expected an integer >= 0, got nil"), function() conn.format{ role = "client" } end)
  errors(at('surge.conn.data_room: mss: expected an integer in 0..9000, got "x"'), function() conn.data_room("x") end)
  errors(at("surge.conn.data_room: mss: expected an integer in 0..9000, got -5"), function() conn.data_room(-5) end)
  errors(at("surge.conn.client: prefix: expected a string, got a table"), function() client{ prefix = {} } end)
  errors(at('surge.conn.server: prefix: expected 1..48 characters of letters, digits, _ - . (its counters are '
    .. 'PREFIX.NAME), got "a b"', 1), function() conn.server{ addr = "10.0.0.1", prefix = "a b" } end)
  -- addresses: at the caller's line (the parser's error level was one frame short)
  errors(at("surge.conn.server: addr: '10.0.0' is not an IPv4 address"), function() conn.server{ addr = "10.0.0" } end)
  errors(at("surge.conn.server: addr: '2001:db8::x' is not an IPv6 address", 1),
    function() conn.server{ addr = "2001:db8::x" } end)
  errors(at("surge.conn.client: server: '10.0.0.256' is not an IPv4 address"), function() client{ server = "10.0.0.256" } end)
  errors(at("surge.conn.client: src: '10.0.0' is not an IPv4 address"), function() client{ src = "10.0.0" } end)
  errors(at("surge.conn.client: mac: 'x' is not a MAC address (aa:bb:cc:dd:ee:ff)"), function() client{ mac = "x" } end)
  -- a list of addresses (issue 33): a tail call's bad address still at the
  -- caller's line; no hole nor key skipped unsaid; stations' addresses only
  errors(at("surge.conn.server: addr: 'x' is not an IPv4 address"), function() return conn.server{ addr = { "x" } } end)
  errors(at("surge.conn.server: addr: expected a list of addresses (keys 1..1), got the key 3", 1),
    function() conn.server{ addr = { "10.0.0.1", nil, "10.0.0.3" } } end)
  errors(at('surge.conn.server: addr: expected a list of addresses (keys 1..1), got the key "x"', 1),
    function() conn.server{ addr = { "10.0.0.1", x = "10.0.0.2" } } end)
  errors(at("surge.conn.client: src: '224.0.0.1': 224.0.0.1 is a multicast address, no station's address", 1),
    function() client{ src = { "10.0.0.2", "224.0.0.1" } } end)
  errors(at("surge.conn.client: src: '223.255.255.255-224.0.0.1': 224.0.0.0 is a multicast address, no station's "
    .. "address", 1), function() client{ src = "223.255.255.255-224.0.0.1" } end)
  errors(at("surge.conn.server: addr: '255.255.255.250-255.255.255.255': 255.255.255.255 is the broadcast address, no "
    .. "station's address", 1), function() conn.server{ addr = "255.255.255.250-255.255.255.255" } end)
  errors(at("surge.conn.server: addr: '0.0.0.0': 0.0.0.0 is unspecified, no station's address", 1),
    function() conn.server{ addr = "0.0.0.0" } end)
  errors(at("surge.conn.server: addr: 'ff02::1-ff02::2': ff02::1 is a multicast address, no station's address", 1),
    function() conn.server{ addr = { "2001:db8::1", "ff02::1-ff02::2" } } end)
  errors(at("surge.conn.client: src 2001:db8::1-2001:db8::2 (2 addresses) and server 10.0.0.1 are not of one family", 1),
    function() client{ src = { "2001:db8::1", "2001:db8::2" }, server = "10.0.0.1" } end)
  errors(at("surge.conn.client: src 10.0.0.2-10.0.0.1 (2 addresses) holds the server's address 10.0.0.1", 1),
    function() client{ src = { "10.0.0.2", "10.0.0.1" } } end)
  errors(at("surge.conn.client: src 2001:db8::1 holds the server's address 2001:db8::1", 1),
    function() client{ src = "2001:db8::1", server = "2001:db8::1" } end)
  -- a client's rate: the errors name surge.conn.client
  errors(at("surge.conn.client: rate (connections per second): expected a number >= 0, got -1", 1),
    function() client{ rate = -1 } end)
  errors(at("surge.conn.client: rate 'x' does not start with a number (try 1mpps, 10gbit, 40%)", 1),
    function() client{ rate = "x" } end)
  errors(at("surge.conn.client: rate: unknown pattern 'zz' (constant, poisson, onoff, ramp)", 1),
    function() client{ rate = { rate = 5, pattern = "zz" } } end)
  errors(at("surge.conn.client: rate: unknown option 'speed' (catchup, gap, hw, max_late_us, off, on, over, pattern, "
    .. "rate, seed, to)", 1), function() client{ rate = { speed = 5 } } end)
  errors(at("surge.conn.client: rate: rate: expected a number >= 0, got -2", 1),
    function() client{ rate = { rate = -2, pattern = "poisson" } } end)
  -- a queue's own rate keeps its messages
  errors(at("rate: unknown pattern 'zz' (constant, poisson, onoff, ramp)"), function() txq:set_rate{ pattern = "zz" } end)
  errors(at('surge.conn.http.body: n: expected an integer in 0..1000000, got "x"'), function() http.body("x") end)
  rx:free()
  tx:free()
end

-- An engine is one port's: a txq of another port than the rxq, a queue of
-- another port than its first poll's, one burst as rx and tx were taken (C
-- takes one port for both queues: the frames went out of the rxq's port on
-- the txq's number, with the checksums of the first port).
function T.engine_is_one_ports()
  local rxq, txq, rx, tx = setup()
  local other = surge.port(1, { rxq = 1, txq = 1 })
  local e = client{ connections = 1 }
  errors(at("engine:poll: txq: expected a tx queue of port 0 (the rxq's: one engine, one port), got txq(1,0)", 1),
    function() e:poll(rxq, other:txq(0), rx, tx) end)
  errors(at("engine:poll: rx and tx: expected two bursts, got one burst twice"), function() e:poll(rxq, txq, rx, rx) end)
  assert(e:poll(rxq, txq, rx, tx) >= 0)
  rx:free()
  errors(at("engine:poll: rxq: expected a queue of port 0 (the engine's, since its first poll), got rxq(1,0)", 1),
    function() e:poll(other:rxq(0), other:txq(0), rx, tx) end)
  errors(at("engine:abort: txq: expected a queue of port 0 (the engine's, since its first poll), got txq(1,0)", 1),
    function() e:abort(other:txq(0), tx) end)
  errors(at("engine:run: txq: expected a tx queue of port 0 (the rxq's: one engine, one port), got txq(1,0)", 1),
    function() e:run{ rxq = rxq, txq = other:txq(0), pool = pool } end)
  errors(at("engine:run: rxq: expected a queue of port 0 (the engine's, since its first poll), got rxq(1,0)", 1),
    function() e:run{ rxq = other:rxq(0), txq = other:txq(0), pool = pool } end)
  assert(e:abort(txq, tx) >= 0, "its own port still works")
  -- summaries' counts: whole, >= 0, written whole (1e300 printed as a negative count)
  local t = e:summary(1)
  t.attempted = 1.5
  errors(at("surge.conn.format: t.attempted: expected an integer >= 0, got 1.5"), function() conn.format(t) end)
  t.attempted = 1e300
  assert(conn.format(t):find(("^client: %.0f attempted"):format(1e300)), conn.format(t))
  -- a header's value ends no line (it would start a header or a request of the caller's choice)
  local show = require("surge.check").show
  local CTL = ": a header's value holds no CR, LF or other control character"
  errors(at("surge.conn.http_get: host " .. show("a\r\nX: y") .. CTL), function() http.get{ host = "a\r\nX: y" } end)
  errors(at("surge.conn.http_response: content_type " .. show("t\r\n\r\nGET /") .. CTL, 1),
    function() http.response{ content_type = "t\r\n\r\nGET /" } end)
  errors(at('surge.conn.http_get: headers: "" is not a header line (Name: value)', 1),
    function() http.get{ headers = "X-A: 1\r\n\r\nGET /" } end)
  errors(at('surge.conn.http_get: headers: "junk" is not a header line (Name: value)', 1),
    function() http.get{ headers = "junk" } end)
  -- headers given without their last line end still end the head (the request never ended)
  assert(http.get{ host = "h", headers = "X-A: 1\nX-B: 2" } ==
    "GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: surge\r\nAccept: */*\r\nX-A: 1\r\nX-B: 2\r\n\r\n")
  rx:free()
  tx:free()
end

-- The class: each method of an engine and of the hook's handle, called with
-- a dot (self missing), names itself; each function of the modules, given
-- a string where it takes something else, names itself and the parameter.
function T.every_method_checks_self()
  local seen = 0
  for _, c in ipairs({ { conn.Engine, "engine" }, { conn.Hook, "connection" } }) do
    local names = {}
    for k, v in pairs(c[1]) do
      if type(v) == "function" and not k:match("^__") then names[#names + 1] = k end
    end
    table.sort(names)
    for _, k in ipairs(names) do
      local msg = ("%s:%s: expected %s as self, got nil (call it with ':')"):format(c[2], k, c[2])
      errors(at(msg), function() c[1][k](nil) end)
      errors(at((msg:gsub("got nil", "got 5"))), function() c[1][k](5) end)
      seen = seen + 1
    end
  end
  assert(seen >= 26, seen .. " methods")   -- 11 of an engine, 15 of the handle today
end

-- What each module function is called with, and the start of what it must say.
local BAD = {
  [conn] = { client = 'surge.conn.client: opts: expected a table, got "x"',
             server = 'surge.conn.server: opts: expected a table, got "x"',
             data_room = 'surge.conn.data_room: mss: expected an integer in 0..9000, got "x"',
             format = 'surge.conn.format: t (engine:summary()\'s): expected a table, got "x"',
             http_get = 'surge.conn.http_get: opts: expected a table, got "x"',
             http_response = 'surge.conn.http_response: opts: expected a table, got "x"' },
  [http] = { get = 'surge.conn.http_get: opts: expected a table, got "x"',
             response = 'surge.conn.http_response: opts: expected a table, got "x"',
             body = 'surge.conn.http.body: n: expected an integer in 0..1000000, got "x"' },
}

function T.every_function_checks_its_argument()
  for mod, want in pairs(BAD) do
    for k, v in pairs(mod) do
      if type(v) == "function" then
        assert(want[k], "a public function without a case here: " .. k)
        errors(at(want[k]), function() mod[k]("x") end)
      end
    end
  end
end

-- Methods that take arguments: a wrong one names the method and the parameter.
function T.engine_methods_arguments()
  local e = conn.server{ addr = "10.0.0.1", capacity = 4, prefix = "mis_s" }
  errors(at('engine:percentiles: which: expected "connect" or "response", got nil'), function() e:percentiles() end)
  errors(at("engine:summary: seconds: expected a number >= 0, got nan"), function() e:summary(0 / 0) end)
  errors(at("engine:summary: seconds: expected a number >= 0, got inf"), function() e:summary(math.huge) end)
  local t = e:summary(2)
  assert(t.role == "server" and t.seconds == 2 and t.cps == 0, "a right call still works")
  assert(conn.format(t):find("^server: 0 attempted, 0 established"), conn.format(t))
  assert(conn.data_room() == 1460 + 74 + 128 and conn.data_room(0) == conn.data_room() and conn.data_room(9000) == 9202)
end

return T
