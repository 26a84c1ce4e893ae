-- surge.conn - TCP connections: a client or server engine per task, its
-- per-packet loop in C (core/conn/), driven from Lua once per
-- burst (docs/connections.md).
--
--   local conn = require("surge.conn")
--   local e = conn.client{ src = "10.0.0.2", server = "10.0.0.1", port = 80,   -- src: or "A-B", a list
--                          mac = "02:..", peer_mac = "02:..",      -- the server's or gateway's
--                          rate = 1000, connections = 10000, concurrency = 64,
--                          request = conn.http_get{ host = "10.0.0.1" }, expect = { http = 200 } }
--   local pool = surge.pool{ template = e:template(), data_room = 2048 }
--   local rx, tx = pool:burst(64), pool:burst(64)
--   while surge.running() and not e:done() do
--     local n = e:poll(rxq, txq, rx, tx)       -- frames not for the engine stay in rx
--     for i = 0, n - 1 do ... neigh:handle(...) ... end
--     rx:free()
--   end
--   e:stats()   --> { attempted = .., established = .., completed = .., ... }
--
-- e:run{ ... } is that loop with the ARP answering (a responder such as
-- surge.dut.neigh's, given by the caller; conn itself requires no dut) and the
-- counters (surge.counter "client.completed", ...) kept as it goes.
--
-- Per-connection hooks (docs/connections.md, "Per-connection hooks"):
--   conn.client{ ..., templates = { conn.http_get{ path = "/b" } },  -- request 1 (0: `request`)
--     slots = 1,                                     -- int32 state per connection
--     on_response = function(c)                      -- after each poll, once per event
--       if c:status() == 200 and c:requests() == 1 then c:send(1) else c:close() end
--     end, on_established = .., on_close = .., on_fail = .. }
--   conn.server{ ..., templates = { conn.http_response{ status = 404 } },  -- response 1 (0: `response`)
--     on_request = function(c)                       -- once per request whole, its response waits
--       if c:path() == "/missing" then c:send(1) end -- or c:close() / c:close("rst"); nothing: 0
--     end }
local ffi = require("ffi")
local bit = require("bit")
local core = require("surge.core")
local check = require("surge.check")
local eth = require("surge.proto.eth")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")
local http = require("surge.conn.http")
local addrs = require("surge.proto.addrs")
local view = require("surge.proto.view")
local RxQueue, TxQueue = require("surge.port").RxQueue, require("surge.port").TxQueue

local C, rc_check = core.C, core.check
local M = { http_get = http.get, http_response = http.response }

local class = require("surge.class")
local rate = require("surge.rate")
local tcp = require("surge.proto.tcp")
local counter = require("surge.counter")
local poll_loop = require("surge.poll_loop")
local Engine = class.new("connection engine", { "id", "role", "conf", "data", "st",
  "prefix", "cells", "gauges", "local_ip", "mac", "hooks", "hook", "turn", "on", "tpl_keep" })
Engine.__handle = function(e) return ("connection engine %d (%s)"):format(e.id, e.role) end
M.Engine = Engine

-- the most addresses a client's src or a server's addr takes
M.ADDR_MAX = C.SURGE_CONN_ADDR_MAX

-- What surge_conn_stats holds, in its order: the counters published as
-- surge counters (PREFIX.NAME), concurrent ones as gauges.
M.FIELDS = { "attempted", "established", "completed", "failed_timeout", "failed_rst", "failed_bad", "refused",
  "retransmits", "requests", "responses", "rst_sent", "rst_rcvd", "rx_segments", "tx_segments", "rx_dropped",
  "rx_bad", "tx_nobufs", "time_wait", "concurrent", "concurrent_max", "rx_other", "bytes_sent", "bytes_rcvd",
  "tx_full", "aborted", "closed_other" }
local GAUGES = { concurrent = true, concurrent_max = true }
local PUBLISHED = { "attempted", "established", "completed", "failed_timeout", "failed_rst", "failed_bad",
  "refused", "retransmits", "requests", "responses", "rst_sent", "rst_rcvd", "rx_dropped", "rx_bad", "tx_nobufs", "tx_full",
  "aborted", "closed_other", "concurrent", "concurrent_max" }

local common = { mac = 1, peer_mac = 1, capacity = 1, mss = 1, window = 1, rto = 1, retries = 1, time_wait = 1,
                 idle = 1, requests = 1, prefix = 1 }
local client_keys = { src = 1, server = 1, port = 1, sport = 1, rate = 1, connections = 1, concurrency = 1,
                      request = 1, expect = 1, close = 1, think = 1, on_established = 1, on_response = 1,
                      templates = 1 }
local server_keys = { addr = 1, port = 1, response = 1, expect = 1, on_established = 1, on_request = 1,
                      templates = 1 }
for _, k in ipairs({ "on_close", "on_fail", "slots" }) do client_keys[k] = 1 server_keys[k] = 1 end
for k in pairs(common) do client_keys[k] = 1 server_keys[k] = 1 end

local function mac_into(dst, text, fn, key)
  if text == nil then return end
  check.expect(text, "string", fn, key)
  ffi.copy(dst, eth.mac(text, fn .. ": " .. key, 4), 6)
end

local function bytes_of(v, fn, key)
  check.expect(v, "string", fn, key)
  if #v == 0 or #v > C.SURGE_CONN_DATA_MAX then
    check.raise(("%s: %s is %d bytes: 1..%d"):format(fn, key, #v, C.SURGE_CONN_DATA_MAX))
  end
  return v
end

-- The parts both roles share; returns the conf cdata.
local function conf_common(o, fn, role)
  local c = ffi.new("struct surge_conn_conf")
  c.role = role
  mac_into(c.local_mac, o.mac or "02:00:00:00:00:01", fn, "mac")
  mac_into(c.peer_mac, o.peer_mac, fn, "peer_mac")
  c.mss = check.expect(o.mss, "integer? 64..9000", fn, "mss") or 0   -- 0: by family, set_addr
  c.window = check.expect(o.window, "integer? 1..65535", fn, "window") or 65535
  c.rto_us = (check.expect(o.rto, "number? 0.001..60", fn, "rto (seconds)") or 0.2) * 1e6
  c.retries = check.expect(o.retries, "integer? 1..255", fn, "retries") or 5
  c.time_wait_us = (check.expect(o.time_wait, "number? 0..600", fn, "time_wait (seconds)") or 0.5) * 1e6
  c.idle_us = (check.expect(o.idle, "number? 0.001..600", fn, "idle (seconds)") or 10) * 1e6
  return c
end

local function expect_into(c, e, fn, client)
  if e == nil or e == "http" then
    c.expect = C.SURGE_CONN_EXPECT_HTTP
    c.expect_status = client and 200 or 0
    return
  end
  check.expect(e, "table", fn, "expect ({ length = N }, { http = STATUS } or \"http\")")
  check.options(e, { length = 1, http = 1 }, fn .. ": expect")
  if e.length ~= nil then
    c.expect = C.SURGE_CONN_EXPECT_LEN
    c.expect_len = check.expect(e.length, "integer 1..4294967295", fn, "expect.length")
  else
    c.expect = C.SURGE_CONN_EXPECT_HTTP
    c.expect_status = check.expect(e.http, "integer? 0..999", fn, "expect.http (a status, 0 = any)") or 200
  end
end

-- An address (IPv4 or IPv6 text) into the conf's local_* or peer_*
-- fields; the conf's family is the first address's. Returns true for IPv6.
-- Called by surge.conn.client and .server only: a bad address is an error
-- at their caller's line (level 3 from the parser: set_addr, client, user).
local function set_addr(c, which, text, what)
  local v6 = text:find(":", 1, true) ~= nil
  if v6 then
    ffi.copy(which == "local" and c.local_ip6 or c.peer_ip6, ip6.addr(text, what, 3), 16)
  elseif which == "local" then
    c.local_ip4 = ip4.addr(text, what, 3)
  else
    c.peer_ip4 = ip4.addr(text, what, 3)
  end
  if which == "local" then
    c.ip_version = v6 and 6 or 4
    if c.mss == 0 then c.mss = v6 and 1440 or 1460 end      -- a 1500-byte MTU's
  end
  return v6
end

-- The handle a hook gets: one of HANDLES per engine, made with it and
-- handed out in turn, one per event (its event index `i` rewritten), read
-- through methods: nothing is made per event. Its methods are valid inside
-- the hook call only.
-- (the event's index and log2 of the slots' stride in an int32 cdata, at[0]
-- and at[1]: a Lua number field is a double, a conversion per event in the
-- dispatch loop's trace; a connection's slots start at conn << at[1], a
-- shift where a multiplication would be done in floating point)
local Hook = class.new("connection (in a hook)", { "hk", "at", "slots", "nslots", "ntpl", "client", "tpl_ok",
  "slot_ok" })
M.Hook = Hook
local EV_EST, EV_RESP, EV_FAIL, EV_CLOSE, EV_REQ = C.SURGE_CONN_EV_ESTABLISHED, C.SURGE_CONN_EV_RESPONSE,
  C.SURGE_CONN_EV_FAILED, C.SURGE_CONN_EV_CLOSED, C.SURGE_CONN_EV_REQUEST
local HEAD = C.SURGE_CONN_HEAD
-- a request's bytes at head + (i << HEAD_SHIFT): LuaJIT does not narrow a
-- multiplication, so i * HEAD would be a double multiply in the trace
local HEAD_SHIFT = math.floor(math.log(HEAD) / math.log(2) + 0.5)
assert(bit.lshift(1, HEAD_SHIFT) == HEAD, "SURGE_CONN_HEAD is a power of 2")
local REASONS = { [C.SURGE_CONN_FAIL_TIMEOUT] = "timeout", [C.SURGE_CONN_FAIL_RST] = "rst",
  [C.SURGE_CONN_FAIL_BAD] = "bad", [C.SURGE_CONN_END_COMPLETED] = "completed",
  [C.SURGE_CONN_END_FAILED] = "failed", [C.SURGE_CONN_END_OTHER] = "other" }
local KINDS = { [EV_EST] = "established", [EV_RESP] = "response", [EV_FAIL] = "fail", [EV_CLOSE] = "close",
  [EV_REQ] = "request" }

-- A handle is valid during its hook's call only (issue 31 item 5: one
-- kept and used later acted on whatever connection then held the event's
-- place): dispatch sets its event index (at[0]) for the call and -1 after
-- it, and every method reads the event through here (one test of at[0]).
-- A handle kept past its call holds -1 until its turn comes again,
-- HANDLES events later: used in a later hook of the same engine it is not
-- that hook's handle, so it is caught there too (one object for every
-- event could not tell them apart).
local HANDLES = 64
local function stale(what)
  check.raise(("%s: the connection's handle is valid during its hook's call only (kept after the hook returned)")
    :format(what))
end
local function index(h, what)
  local i = h.at[0]
  if i < 0 then stale(what) end
  return i
end
-- The event the handle h stands for; fn names the method for a wrong self
-- (c.status() with a dot) or a handle kept past its call: one metatable
-- compare and one index test, the checks every method of the handle makes.
local function event(h, fn)
  check.self(h, Hook, fn)
  local hk = h.hk
  return hk.ev[hk.cur][index(h, fn)]
end
-- the connection: its table index, 0..capacity-1 (reused once it closed)
function Hook:id() return event(self, "connection:id").conn end
function Hook:kind() return KINDS[event(self, "connection:kind").kind] end
-- on_response: the HTTP status (0 when the response is by length), its
-- bytes; on_request: the request's bytes
function Hook:status() return event(self, "connection:status").status end
function Hook:bytes() return event(self, "connection:bytes").bytes end
-- on_established: SYN to established; on_response: request to its last byte (microseconds)
function Hook:time_us() return event(self, "connection:time_us").time_us end
-- requests sent on the connection so far (a client's; a server's: received;
-- on_request: this request's number on it, 1 for the first)
function Hook:requests() return event(self, "connection:requests").requests end
-- the template of its last request (0: the `request`)
function Hook:template() return event(self, "connection:template").tpl end
-- on_fail: "timeout", "rst", "bad"; on_close: "completed", "failed", "other"
function Hook:reason() return REASONS[event(self, "connection:reason").reason] end

local function held(h, what)
  local ev = event(h, what)
  local kind = ev.kind
  if h.client and kind ~= EV_EST and kind ~= EV_RESP or not h.client and kind ~= EV_REQ then
    check.raise(("%s: in a client's on_established or on_response or a server's on_request only (this is %s's on_%s)")
      :format(what, h.client and "a client" or "a server", KINDS[kind]))
  end
  return ev
end

-- A request's event (on_request) and its first bytes
local function head(h, what)
  check.self(h, Hook, what)
  local hk = h.hk
  local i = index(h, what)
  local ev = hk.ev[hk.cur][i]
  if ev.kind ~= EV_REQ then
    check.raise(("%s: in a server's on_request only (this is %s's on_%s)"):format(what,
      h.client and "a client" or "a server", KINDS[ev.kind]))
  end
  return ev, hk.head[hk.cur] + bit.lshift(i, HEAD_SHIFT)
end

-- on_request: the path of the request line "METHOD PATH ..." (to a space,
-- a '?', a CR or the end of the first SURGE_CONN_HEAD bytes; found by the
-- engine): a Lua string, the one interned for a path seen before (no new
-- object for it)
function Hook:path()
  local ev, p = head(self, "connection:path")
  return ffi.string(p + ev.path_off, ev.path_len)
end

-- on_request: whether the request starts with the bytes of s (within its
-- first SURGE_CONN_HEAD), compared in place: no string made
function Hook:starts(s)
  local ev, p = head(self, "connection:starts")
  if type(s) ~= "string" then check.raise(("connection:starts: s: expected a string, got %s"):format(check.show(s))) end
  local m = #s
  if m > ev.head_len then return false end
  for i = 1, m do if p[i - 1] ~= s:byte(i) then return false end end
  return true
end

-- on_request: the request's first min(bytes, SURGE_CONN_HEAD) bytes, a string
function Hook:head()
  local ev, p = head(self, "connection:head")
  return ffi.string(p, ev.head_len)
end

-- A client: one more request on the connection, template k (0 or nil: the
-- `request`; k: templates[k]), even past `requests`. A server (on_request):
-- this request's response, template k (0 or nil: the `response`).
function Hook:send(k)
  local ev = held(self, "connection:send")
  k = k or 0
  if not self.tpl_ok[k] then
    check.raise(("connection:send: k: expected a template in 0..%d (0: the %s, k: templates[k]), got %s"):format(
      self.ntpl - 1, self.client and "request" or "response", check.show(k)))
  end
  ev.action = C.SURGE_CONN_ACT_SEND
  ev.tpl = k
end

-- Closes the connection now ("fin", the default, or "rst"), counted
-- completed (a client); a server (on_request): instead of answering this
-- request, a FIN after the answers before it, or an RST now.
function Hook:close(how)
  local ev = held(self, "connection:close")
  if how == nil or how == "fin" then ev.action = C.SURGE_CONN_ACT_FIN
  elseif how == "rst" then ev.action = C.SURGE_CONN_ACT_RST
  else check.raise(("connection:close: how: expected \"fin\" or \"rst\", got %s"):format(check.show(how))) end
end

local function slot(h, k, what)
  check.self(h, Hook, what)
  if not h.slot_ok[k] then
    check.raise(("%s: k: expected a slot in 1..%d (the engine's `slots`), got %s"):format(what, h.nslots, check.show(k)))
  end
  return bit.lshift(h.hk.ev[h.hk.cur][index(h, what)].conn, h.at[1]) + bit.tobit(k) - 1   -- an integer add, not a double one
end
-- The connection's user state: slots 1..`slots`, int32 each (an int32, not
-- a uint32: LuaJIT reads it as an integer), 0 when it opens.
function Hook:get(k) local i = slot(self, k, "connection:get") return self.slots[i] end
function Hook:set(k, v)
  check.self(self, Hook, "connection:set")
  if type(v) ~= "number" or v % 1 ~= 0 or v < -2147483648 or v > 2147483647 then
    check.raise(("connection:set: v: expected an integer in -2147483648..2147483647 (int32), got %s"):format(
      check.show(v)))
  end
  self.slots[slot(self, k, "connection:set")] = v
end

local HOOKS = { { "on_established", EV_EST }, { "on_response", EV_RESP }, { "on_fail", EV_FAIL },
                { "on_close", EV_CLOSE }, { "on_request", EV_REQ } }

-- Hooks from the options (fn's): nil when none is set.
local function hooks_of(o, fn, capacity)
  local on, mask = {}, 0
  for _, h in ipairs(HOOKS) do
    if check.expect(o[h[1]], "function?", fn, h[1]) then
      on[h[2]] = o[h[1]]
      mask = bit.bor(mask, bit.lshift(1, h[2]))
    end
  end
  local nslots = check.expect(o.slots, "integer? 0..16", fn, "slots") or 0
  local tpl = check.expect(o.templates, "table?", fn, "templates (a list of strings)") or {}
  for k, v in pairs(tpl) do
    if type(k) ~= "number" or k % 1 ~= 0 or k < 1 or k > #tpl then
      check.raise(("%s: templates: a list (1..n), not key %s"):format(fn, check.show(k)))
    end
    bytes_of(v, fn, ("templates[%d]"):format(k))
  end
  if #tpl + 1 > C.SURGE_CONN_TEMPLATES_MAX then
    check.raise(("%s: templates: %d, at most %d"):format(fn, #tpl, C.SURGE_CONN_TEMPLATES_MAX - 1))
  end
  if #tpl > 0 and fn == "surge.conn.server" and not on[EV_REQ] then
    check.raise(("%s: templates without on_request to choose them"):format(fn))
  end
  if mask == 0 then
    if nslots > 0 or #tpl > 0 then
      check.raise(("%s: %s without a hook (on_established, on_response, on_close, on_fail) to use them"):format(fn,
        nslots > 0 and "slots" or "templates"))
    end
    return nil
  end
  if nslots > 0 then mask = bit.bor(mask, bit.lshift(1, EV_CLOSE)) end   -- slots are zeroed at the close
  local shift = 0
  while bit.lshift(1, shift) < nslots do shift = shift + 1 end   -- a stride of 2^shift >= nslots
  return { on = on, mask = mask, nslots = nslots, shift = shift, tpl = tpl,
           slots = nslots > 0 and ffi.new("int32_t[?]", capacity * bit.lshift(1, shift)) or false }
end

-- The counters' prefix: PREFIX.NAME must be a counter name (surge.counter:
-- letters, digits, _ - ., at most 63 with the longest NAME, concurrent_max).
local function prefix_of(o, fn, default)
  local p = check.expect(o.prefix, "string?", fn, "prefix") or default
  if p == "" or #p > 48 or p:find("[^%w_%-%.]") then
    check.raise(("%s: prefix: expected 1..48 characters of letters, digits, _ - . (its counters are PREFIX.NAME), "
      .. "got %s"):format(fn, check.show(p)))
  end
  return p
end

-- The engine of conf c, made by fn from its options o: role "client" or
-- "server", the bytes it sends (data: a client's request, a server's
-- response), its counters' prefix and hooks from o. packed (set_local's)
-- is held until the engine has copied it.
local function new_engine(c, o, fn, role, data, packed)
  data = bytes_of(data, fn, role == "client" and "request" or "response")
  local prefix, hooks = prefix_of(o, fn, role), hooks_of(o, fn, c.capacity)
  c.data = data
  c.data_len = #data
  local id = rc_check(C.surge_conn_new(c), 3)
  if packed then c.local_addrs = nil end     -- copied by the engine
  local v6 = c.ip_version == 6
  local e = setmetatable({ id = id, role = role, conf = c, data = data, st = ffi.new("struct surge_conn_stats"),
                        prefix = prefix, cells = false, gauges = false, hooks = false, hook = false, turn = 0, on = false,
                        port = -1,   -- its port from its first poll (bind)
                        local_ip = v6 and ip6.addr_text(ffi.string(c.local_ip6, 16)) or ip4.addr_text(c.local_ip4),
                        mac = ffi.string(c.local_mac, 6) }, Engine)
  if hooks then
    local n = #hooks.tpl
    local ptrs, lens = ffi.new("const uint8_t *[?]", n + 1), ffi.new("uint32_t[?]", n + 1)
    for k = 1, n do ptrs[k - 1], lens[k - 1] = hooks.tpl[k], #hooks.tpl[k] end
    local out = ffi.new("struct surge_conn_hooks *[1]")
    rc_check(C.surge_conn_hooks(id, hooks.mask, ptrs, lens, n, out), 3)
    e.hooks, e.on, e.tpl_keep = out[0], hooks.on, hooks.tpl
    -- the valid template numbers and slots, looked up rather than
    -- compared: a number the hook took from a table is a double, and a
    -- range and integer test of it would be float work on every event
    local tpl_ok, slot_ok = {}, {}
    for k = 0, n do tpl_ok[k] = true end
    for k = 1, hooks.nslots do slot_ok[k] = true end
    local ring = {}
    for k = 1, HANDLES do
      local at = ffi.new("int32_t[2]")
      at[0], at[1] = -1, hooks.shift        -- no event: outside a hook's call (index)
      ring[k] = setmetatable({ hk = out[0], at = at, slots = hooks.slots, nslots = hooks.nslots, ntpl = n + 1,
                               client = role == "client", tpl_ok = tpl_ok, slot_ok = slot_ok }, Hook)
    end
    e.hook = ring
  end
  return e
end

-- The user's hooks for the last poll's events, in their order.
local function dispatch(self)
  local hk = self.hooks
  local n = hk.n
  if hk.lost > 0 then check.raise(("connection engine %d: %d events lost"):format(self.id, hk.lost)) end
  if n == 0 then return end
  local evs, on, ring, turn = hk.ev[hk.cur], self.on, self.hook, bit.tobit(self.turn)
  local first = ring[1]
  local slots, nslots, shift = first.slots, first.nslots, first.at[1]
  for i = 0, n - 1 do
    local kind = evs[i].kind
    local f = on[kind]
    local h = ring[bit.band(i + turn, HANDLES - 1) + 1]
    local at = h.at
    at[0] = i
    if f then f(h) end
    at[0] = -1                              -- the call is over: the handle is not valid (index)
    if kind == EV_CLOSE and nslots > 0 then
      local base = bit.lshift(evs[i].conn, shift)
      for k = 0, nslots - 1 do slots[base + k] = 0 end
    end
  end
  self.turn = bit.band(turn + n, HANDLES - 1)
end

-- The engine's addresses, option `key` of fn (one address, a range "A-B"
-- or a list: addrs.list's) into the conf: the first as local_ip4/6, all of
-- them packed when several. Returns the list, whether it is IPv6, and the
-- packed bytes, which the caller holds until the engine has copied them.
local function set_local(c, value, fn, key)
  if type(value) ~= "table" then check.expect(value, "string", fn, key) end
  local what = fn .. ": " .. key
  local list, six = addrs.list(value, what, C.SURGE_CONN_ADDR_MAX)
  set_addr(c, "local", six and ip6.addr_text(list[1]) or ip4.addr_text(list[1]), what)
  local packed = #list > 1 and addrs.pack(list, six) or nil
  if packed then
    c.local_addrs = packed
    c.local_count = #list
  end
  return list, six, packed
end

-- A client: connections from src (source ports sport, sport + 1, ...) to
-- server:port, opened at `rate` per second (a number or a surge.rate spec:
-- { rate = 1000, pattern = "poisson" }; 0 = as fast as concurrency allows).
function M.client(o)
  local fn = "surge.conn.client"
  o = check.options(o, client_keys, fn)
  local c = conf_common(o, fn, C.SURGE_CONN_CLIENT)
  -- connection i is on address i / ports (ascending), port sport + i %
  -- ports (docs/connections.md)
  local list, v6, packed = set_local(c, o.src, fn, "src")
  if set_addr(c, "peer", check.expect(o.server, "string", fn, "server"), fn .. ": server") ~= v6 then
    check.raise(("%s: src %s and server %s are not of one family"):format(fn, addrs.text(list, v6), o.server))
  end
  -- a connection from the server's own address would be one to itself
  local peer = v6 and ffi.string(c.peer_ip6, 16) or c.peer_ip4
  for _, a in ipairs(list) do
    if a == peer then check.raise(("%s: src %s holds the server's address %s"):format(fn, addrs.text(list, v6), o.server)) end
  end
  c.peer_port = check.expect(o.port, "integer? 1..65535", fn, "port") or 80
  c.local_port = check.expect(o.sport, "integer? 1..65535", fn, "sport") or 1024
  local most = math.min(#list * (65536 - c.local_port), 16777216)
  c.capacity = check.expect(o.capacity, "integer? 1..16777216", fn, "capacity") or most
  if math.ceil(c.capacity / #list) > 65536 - c.local_port then
    check.raise(("%s: capacity %d from sport %d over %d source address%s: each address's connections use "
      .. "ports sport and up, so at most %d"):format(fn, c.capacity, c.local_port, #list, #list == 1 and "" or "es",
      most))
  end
  c.concurrency = check.expect(o.concurrency, "integer? 1..16777216", fn, "concurrency") or c.capacity
  if c.concurrency > c.capacity then
    check.raise(("%s: concurrency %d over the capacity %d"):format(fn, c.concurrency, c.capacity))
  end
  c.connections = check.expect(o.connections, "integer? 0..9007199254740992", fn, "connections") or 0
  c.requests = check.expect(o.requests, "integer? 1..65535", fn, "requests") or 1
  c.think_us = (check.expect(o.think, "number? 0..600", fn, "think (seconds)") or 0) * 1e6
  local close = o.close or "fin"
  if close ~= "fin" and close ~= "rst" then
    check.raise(("%s: close = %s: \"fin\" or \"rst\""):format(fn, check.show(close)))
  end
  c.close = close == "rst" and C.SURGE_CONN_CLOSE_RST or C.SURGE_CONN_CLOSE_FIN
  expect_into(c, o.expect, fn, true)
  if type(o.rate) == "number" then check.expect(o.rate, "number >=0", fn, "rate (connections per second)") end
  if o.rate ~= nil and o.rate ~= 0 then
    local r = rate.build(o.rate, 2, fn)
    if r.unit ~= C.SURGE_RATE_PPS then
      check.raise(("%s: rate %s: connections per second, a plain number (or \"Npps\")"):format(fn,
        check.show(o.rate)))
    end
    c.rate = r
  end
  return new_engine(c, o, fn, "client", o.request or http.get{ host = o.server }, packed)
end

-- A server listening on addr:port, answering each request (HTTP: up to the
-- blank line; { length = N }: N bytes) with `response`. addr: one address,
-- a range "A-B" or a list, as a client's src; a connection's segments leave
-- from the address its SYN was sent to (docs/connections.md).
function M.server(o)
  local fn = "surge.conn.server"
  o = check.options(o, server_keys, fn)
  local c = conf_common(o, fn, C.SURGE_CONN_SERVER)
  local _, _, packed = set_local(c, o.addr, fn, "addr")
  c.local_port = check.expect(o.port, "integer? 1..65535", fn, "port") or 80
  c.capacity = check.expect(o.capacity, "integer? 1..16777216", fn, "capacity") or 65536
  c.requests = check.expect(o.requests, "integer? 0..65535", fn, "requests") or 0
  expect_into(c, o.expect, fn, false)
  return new_engine(c, o, fn, "server", o.response or http.response{ body = 0 }, packed)
end

-- A template for the engine's pool: its layout (Ethernet, IPv4, TCP) is
-- what lets a port with checksum offload compute the sums; the engine
-- writes every header field of every frame itself.
function Engine:template()
  check.self(self, Engine, "engine:template")
  local c = self.conf
  local dst = self.local_ip
  if c.role == C.SURGE_CONN_CLIENT then
    dst = c.ip_version == 6 and ip6.addr_text(ffi.string(c.peer_ip6, 16)) or ip4.addr_text(c.peer_ip4)
  end
  return tcp{ src = self.local_ip, dst = dst, sport = c.local_port,
    dport = c.peer_port ~= 0 and c.peer_port or 1, size = c.ip_version == 6 and 74 or 60 }
end

local HEADROOM = 128                       -- DPDK's mbuf headroom
local HEADERS = { [4] = 54, [6] = 74 }     -- Ethernet + IP + TCP, no options

-- The frame size the engine's pool must hold: its mbufs' data room.
function Engine:data_room()
  check.self(self, Engine, "engine:data_room")
  return self.conf.mss + HEADERS[self.conf.ip_version] + HEADROOM
end

-- The data room of a pool made before its engine (the pool answers ARP/NDP
-- while the peer's MAC, which the engine needs, is resolved): segments of
-- mss bytes (0 or nil: 1460, a 1500-byte MTU's) under either family's headers.
function M.data_room(mss)
  check.expect(mss, "integer? 0..9000", "surge.conn.data_room", "mss")
  return (mss and mss > 0 and mss or 1460) + HEADERS[6] + HEADROOM
end

-- An engine is one port's (C takes one port for both queues, and the first
-- poll decides the checksums by it): a txq of another port than the rxq, or
-- a queue of another port than the engine's first poll, would send on the
-- wrong queue or with the wrong sums without a word. rx and tx one burst: the
-- frames received would be overwritten by those sent.
local function bind(self, fn, rxq, txq, rx, tx)
  local p = rxq and rxq.port or txq.port
  if txq.port ~= p then
    check.raise(("%s: txq: expected a tx queue of port %d (the rxq's: one engine, one port), got %s"):format(fn, p,
      check.show(txq)))
  end
  if self.port == -1 then self.port = p
  elseif self.port ~= p then
    check.raise(("%s: %s: expected a queue of port %d (the engine's, since its first poll), got %s"):format(fn,
      rxq and "rxq" or "txq", self.port, check.show(rxq or txq)))
  end
  if rx == tx then check.raise(("%s: rx and tx: expected two bursts, got one burst twice"):format(fn)) end
end

-- One round (see surge_conn_poll): returns the frames left in rx, which the
-- caller looks at (ARP) and frees. With hooks set, then calls them for the
-- round's events (without: one field test here, none in C's per-segment path).
function Engine:poll(rxq, txq, rx, tx)
  -- once per burst: compares and type tests only (the JIT keeps them as guards)
  check.self(self, Engine, "engine:poll")
  check.handle(rxq, RxQueue, "engine:poll", "rxq", "an rx queue (port:rxq(i))")
  check.handle(txq, TxQueue, "engine:poll", "txq", "a tx queue (port:txq(i))")
  check.burst(rx, "engine:poll", "rx")
  check.burst(tx, "engine:poll", "tx")
  if rxq.port ~= self.port or txq.port ~= self.port or rx == tx then bind(self, "engine:poll", rxq, txq, rx, tx) end
  local n = C.surge_conn_poll(self.id, rxq.port, rxq.id, txq.id, rx, tx)
  if n < 0 then rc_check(n, 2) end
  if self.hooks then dispatch(self) end
  return n
end

-- true once a client opened every connection it was asked for and all ended.
function Engine:done()
  check.self(self, Engine, "engine:done")
  return rc_check(C.surge_conn_done(self.id), 2) == 1
end

-- Resets what is still open (an RST each): the end of a run cut short.
function Engine:abort(txq, tx)
  check.self(self, Engine, "engine:abort")
  check.handle(txq, TxQueue, "engine:abort", "txq", "a tx queue (port:txq(i))")
  check.burst(tx, "engine:abort", "tx")
  if txq.port ~= self.port then bind(self, "engine:abort", nil, txq, nil, tx) end
  return rc_check(C.surge_conn_abort(self.id, txq.port, txq.id, tx), 2)
end

-- The counters now, as a table of numbers (see M.FIELDS).
function Engine:stats()
  check.self(self, Engine, "engine:stats")
  local st = self.st
  rc_check(C.surge_conn_stats(self.id, st), 2)
  local t = {}
  for _, k in ipairs(M.FIELDS) do t[k] = tonumber(st[k]) end
  t.failed = t.failed_timeout + t.failed_rst + t.failed_bad
  -- every attempted connection ends counted once (docs/connections.md,
  -- "Counters"): those not yet are open
  t.ended = t.completed + t.failed + t.aborted + t.closed_other
  return t
end

local WHICH = { connect = 0, response = 1 }
-- Percentiles of a histogram ("connect": SYN to the first response byte;
-- "response": request to its last byte), in microseconds; nil when empty.
function Engine:percentiles(which)
  check.self(self, Engine, "engine:percentiles")
  local w = WHICH[which]
  if w == nil then
    check.raise(("engine:percentiles: which: expected \"connect\" or \"response\", got %s"):format(check.show(which)))
  end
  if C.surge_conn_percentile(self.id, w, 50) < 0 then return nil end
  local t = {}
  for _, q in ipairs({ { "p50", 50 }, { "p90", 90 }, { "p99", 99 }, { "p999", 99.9 }, { "max", 100 } }) do
    t[q[1]] = C.surge_conn_percentile(self.id, w, q[2]) / 1000
  end
  return t
end

-- Publishes the counters as surge counters PREFIX.NAME (the stats lines,
-- the summary, --output, telemetry, the prompt): sync() copies them.
function Engine:publish()
  check.self(self, Engine, "engine:publish")
  self.cells, self.gauges = counter.publish(self.prefix, PUBLISHED, GAUGES)
  return self
end

-- Copies the engine's counters into its published cells (no allocation).
function Engine:sync()
  check.self(self, Engine, "engine:sync")
  local cells = self.cells
  if not cells then return end
  local st = self.st
  C.surge_conn_stats(self.id, st)
  counter.copy(st, cells, self.gauges)
end

local run_keys = { rxq = 1, txq = 1, pool = 1, neigh = 1, iface = 1, seconds = 1, burst = 1 }

-- The loop: poll, answer ARP for the engine's address (o.neigh, a
-- surge.dut.neigh responder, interface o.iface), sync the counters; until
-- a client is done, o.seconds passed, or the run stops. What is still open
-- at the end is reset. Returns the counters (engine:stats()).
function Engine:run(o)
  local fn = "engine:run"
  check.self(self, Engine, fn)
  local rxq, txq, pool, nb, seconds
  o, rxq, txq, pool, nb, seconds = poll_loop.options(o, run_keys, fn)
  bind(self, fn, rxq, txq, nil, false)
  -- neigh: a responder with handle(iface, p, len, view), surge.dut.neigh's
  -- (not required here: conn does not depend on dut)
  local neigh = check.expect(o.neigh, "table?", fn, "neigh")
  if neigh and type(class.get(neigh, "handle")) ~= "function" then
    check.raise(("%s: neigh: expected a responder (surge.dut.neigh.new{...}), got %s"):format(fn, check.show(neigh)))
  end
  local ifaces = neigh and class.get(neigh, "ifaces")
  local iface = check.expect(o.iface, ("integer? 1..%d"):format(type(ifaces) == "table" and #ifaces or 65535), fn,
    "iface") or 1
  local rx, tx = pool:burst(nb), pool:burst(nb)
  local v = view.new()
  local client = self.role == "client"
  return poll_loop.run(self, seconds, 0.01, function()
    local n = self:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local p, len = rx.data[i], rx.len[i]
      if neigh and view.parse(v, p, len) then neigh:handle(iface, p, len, v) end
    end
    if n > 0 then rx:free() end
  end, function()
    return client and self:done()
  end, function()
    rx:free()
    if not self:done() then pcall(self.abort, self, txq, tx) end
  end)
end

-- A summary for people and for --output: the counters, the rates over
-- `seconds`, the percentiles (µs).
function Engine:summary(seconds)
  check.self(self, Engine, "engine:summary")
  check.expect(seconds, "number? >=0", "engine:summary", "seconds")
  local t = self:stats()
  t.role = self.role
  t.seconds = seconds
  if seconds and seconds > 0 then
    t.cps = t.established / seconds
    t.requests_per_s = (self.role == "client" and t.responses or t.requests) / seconds
  end
  t.connect_us = self:percentiles("connect")
  t.response_us = self:percentiles("response")
  return t
end

-- One line: "client: 10000 attempted, 10000 established, 10000 completed, 0 failed ..."
local FORMAT_NUMBERS = { "attempted", "established", "completed", "failed", "failed_timeout", "failed_rst",
  "failed_bad", "refused", "retransmits", "requests", "responses", "concurrent_max", "rx_dropped", "rx_bad" }
function M.format(t)
  local fn = "surge.conn.format"
  check.expect(t, "table", fn, "t (engine:summary()'s)")
  check.expect(t.role, "string", fn, "t.role")
  -- counts: whole and >= 0, written with %.0f (%d wrapped 1e300 to a negative count, cut 1.5 to 1)
  for _, k in ipairs(FORMAT_NUMBERS) do check.expect(t[k], "integer >=0", fn, "t." .. k) end
  check.expect(t.cps, "number?", fn, "t.cps")
  if t.cps then check.expect(t.requests_per_s, "number", fn, "t.requests_per_s") end
  if check.expect(t.response_us, "table?", fn, "t.response_us") then
    for _, k in ipairs({ "p50", "p99", "max" }) do check.expect(t.response_us[k], "number", fn, "t.response_us." .. k) end
  end
  local s = ("%s: %.0f attempted, %.0f established, %.0f completed, %.0f failed (timeout %.0f, rst %.0f, bad %.0f), "
    .. "%.0f refused, %.0f retransmits, %.0f requests, %.0f responses, concurrent max %.0f, rx dropped %.0f, "
    .. "rx bad %.0f")
    :format(t.role, t.attempted, t.established, t.completed, t.failed, t.failed_timeout, t.failed_rst,
      t.failed_bad, t.refused, t.retransmits, t.requests, t.responses, t.concurrent_max, t.rx_dropped, t.rx_bad)
  -- the ends counted nowhere else (docs/connections.md, "Counters")
  s = s .. (", %d aborted, %d closed other"):format(t.aborted or 0, t.closed_other or 0)
  if t.cps then s = s .. (", %.1f conn/s, %.1f req/s"):format(t.cps, t.requests_per_s) end
  local r = t.response_us
  if r then s = s .. (", response p50 %.0f us p99 %.0f us max %.0f us"):format(r.p50, r.p99, r.max) end
  return s
end

return M
