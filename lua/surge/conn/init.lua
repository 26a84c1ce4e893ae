-- surge.conn - TCP connections: a client or server engine per task, its
-- per-packet loop in C (core/dataplane/conn_*.c), driven from Lua once per
-- burst (docs/connections.md).
--
--   local conn = require "surge.conn"
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
-- e:run{ ... } is that loop with the ARP answering (surge.dut.neigh) and the
-- counters (surge.counter "client.completed", ...) kept as it goes.
local ffi = require "ffi"
local core = require "surge.core"
local check = require "surge.check"
local eth = require "surge.proto.eth"
local ip4 = require "surge.proto.ip4"
local ip6 = require "surge.proto.ip6"
local http = require "surge.conn.http"
local addrs = require "surge.proto.addrs"

local C, rc_check = core.C, core.check
local M = { http_get = http.get, http_response = http.response }

local Engine = require("surge.class").new("connection engine", { "id", "role", "conf", "data", "st",
  "prefix", "cells", "gauges", "local_ip", "mac" })
Engine.__handle = function(e) return ("connection engine %d (%s)"):format(e.id, e.role) end
M.Engine = Engine

-- What surge_conn_stats holds, in its order: the counters published as
-- surge counters (PREFIX.NAME), concurrent ones as gauges.
M.FIELDS = { "attempted", "established", "completed", "failed_timeout", "failed_rst", "failed_bad", "refused",
  "retransmits", "requests", "responses", "rst_sent", "rst_rcvd", "rx_segments", "tx_segments", "rx_dropped",
  "rx_bad", "tx_nobufs", "time_wait", "concurrent", "concurrent_max", "rx_other", "bytes_sent", "bytes_rcvd",
  "tx_full" }
local GAUGES = { concurrent = true, concurrent_max = true }
local PUBLISHED = { "attempted", "established", "completed", "failed_timeout", "failed_rst", "failed_bad",
  "refused", "retransmits", "requests", "responses", "rst_sent", "rst_rcvd", "rx_dropped", "rx_bad", "tx_nobufs", "tx_full",
  "concurrent", "concurrent_max" }

local common = { mac = 1, peer_mac = 1, capacity = 1, mss = 1, window = 1, rto = 1, retries = 1, time_wait = 1,
                 idle = 1, requests = 1, prefix = 1 }
local client_keys = { src = 1, server = 1, port = 1, sport = 1, rate = 1, connections = 1, concurrency = 1,
                      request = 1, expect = 1, close = 1, think = 1 }
local server_keys = { addr = 1, port = 1, response = 1, expect = 1 }
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
local function set_addr(c, which, text, what)
  local v6 = text:find(":", 1, true) ~= nil
  if v6 then
    ffi.copy(which == "local" and c.local_ip6 or c.peer_ip6, ip6.addr(text, what, 4), 16)
  elseif which == "local" then
    c.local_ip4 = ip4.addr(text, what, 4)
  else
    c.peer_ip4 = ip4.addr(text, what, 4)
  end
  if which == "local" then
    c.ip_version = v6 and 6 or 4
    if c.mss == 0 then c.mss = v6 and 1440 or 1460 end      -- a 1500-byte MTU's
  end
  return v6
end

local function new_engine(c, data, role, prefix)
  c.data = data
  c.data_len = #data
  local id = rc_check(C.surge_conn_new(c), 3)
  local v6 = c.ip_version == 6
  return setmetatable({ id = id, role = role, conf = c, data = data, st = ffi.new("struct surge_conn_stats"),
                        prefix = prefix, cells = false, gauges = false,
                        local_ip = v6 and ip6.addr_text(ffi.string(c.local_ip6, 16)) or ip4.addr_text(c.local_ip4),
                        mac = ffi.string(c.local_mac, 6) }, Engine)
end

-- A client: connections from src (source ports sport, sport + 1, ...) to
-- server:port, opened at `rate` per second (a number or a surge.rate spec:
-- { rate = 1000, pattern = "poisson" }; 0 = as fast as concurrency allows).
function M.client(o)
  local fn = "surge.conn.client"
  o = check.options(o, client_keys, fn)
  local c = conf_common(o, fn, C.SURGE_CONN_CLIENT)
  if type(o.src) ~= "table" then check.expect(o.src, "string", fn, "src") end
  -- one address, a range "A-B" or a list: connection i is on address
  -- i / ports (ascending), port sport + i % ports (docs/connections.md)
  local list, six = addrs.list(o.src, fn .. ": src", C.SURGE_CONN_ADDR_MAX)
  local v6 = set_addr(c, "local", six and ip6.addr_text(list[1]) or ip4.addr_text(list[1]), fn .. ": src")
  local packed = #list > 1 and addrs.pack(list, six) or nil
  if packed then
    c.local_addrs = packed
    c.local_count = #list
  end
  if set_addr(c, "peer", check.expect(o.server, "string", fn, "server"), fn .. ": server") ~= v6 then
    check.raise(("%s: src %s and server %s are not of one family"):format(fn, o.src, o.server))
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
  if o.rate ~= nil and o.rate ~= 0 then
    local r = require("surge.rate").build(o.rate, 2)
    if r.unit ~= C.SURGE_RATE_PPS then
      check.raise(("%s: rate %s: connections per second, a plain number (or \"Npps\")"):format(fn,
        check.show(o.rate)))
    end
    c.rate = r
  end
  local req = bytes_of(o.request or http.get{ host = o.server }, fn, "request")
  local e = new_engine(c, req, "client", o.prefix or "client")
  if packed then c.local_addrs = nil end     -- copied by the engine (packed held till here)
  return e
end

-- A server listening on addr:port, answering each request (HTTP: up to the
-- blank line; { length = N }: N bytes) with `response`.
function M.server(o)
  local fn = "surge.conn.server"
  o = check.options(o, server_keys, fn)
  local c = conf_common(o, fn, C.SURGE_CONN_SERVER)
  set_addr(c, "local", check.expect(o.addr, "string", fn, "addr"), fn .. ": addr")
  c.local_port = check.expect(o.port, "integer? 1..65535", fn, "port") or 80
  c.capacity = check.expect(o.capacity, "integer? 1..16777216", fn, "capacity") or 65536
  c.requests = check.expect(o.requests, "integer? 0..65535", fn, "requests") or 0
  expect_into(c, o.expect, fn, false)
  local resp = bytes_of(o.response or http.response{ body = 0 }, fn, "response")
  return new_engine(c, resp, "server", o.prefix or "server")
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
  return require("surge.proto.tcp"){ src = self.local_ip, dst = dst, sport = c.local_port,
    dport = c.peer_port ~= 0 and c.peer_port or 1, size = c.ip_version == 6 and 74 or 60 }
end

local HEADROOM = 128                       -- DPDK's mbuf headroom
local HEADERS = { [4] = 54, [6] = 74 }     -- Ethernet + IP + TCP, no options

-- The frame size the engine's pool must hold: its mbufs' data room.
function Engine:data_room()
  return self.conf.mss + HEADERS[self.conf.ip_version] + HEADROOM
end

-- The data room of a pool made before its engine (the pool answers ARP/NDP
-- while the peer's MAC, which the engine needs, is resolved): segments of
-- mss bytes (0 or nil: 1460, a 1500-byte MTU's) under either family's headers.
function M.data_room(mss)
  return (mss and mss > 0 and mss or 1460) + HEADERS[6] + HEADROOM
end

-- One round (see surge_conn_poll): returns the frames left in rx, which the
-- caller looks at (ARP) and frees.
function Engine:poll(rxq, txq, rx, tx)
  local n = C.surge_conn_poll(self.id, rxq.port, rxq.id, txq.id, rx, tx)
  if n < 0 then rc_check(n, 2) end
  return n
end

-- true once a client opened every connection it was asked for and all ended.
function Engine:done()
  return rc_check(C.surge_conn_done(self.id), 2) == 1
end

-- Resets what is still open (an RST each): the end of a run cut short.
function Engine:abort(txq, tx)
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
  return t
end

local WHICH = { connect = 0, response = 1 }
-- Percentiles of a histogram ("connect": SYN to the first response byte;
-- "response": request to its last byte), in microseconds; nil when empty.
function Engine:percentiles(which)
  check.self(self, Engine, "engine:percentiles")
  local w = WHICH[which]
  if w == nil then check.raise(("engine:percentiles: %s: \"connect\" or \"response\""):format(check.show(which))) end
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
  local counter = require "surge.counter"
  local cells, gauges = {}, {}
  for _, k in ipairs(PUBLISHED) do
    local name = self.prefix .. "." .. k
    if GAUGES[k] then
      local g = counter.gauge(name)
      g:set(0)
      gauges[#gauges + 1] = { k, g.cell }
    else
      local c = counter.counter(name)
      c:add(0)
      cells[#cells + 1] = { k, c.cell }
    end
  end
  self.cells, self.gauges = cells, gauges
  return self
end

-- Copies the engine's counters into its published cells (no allocation).
function Engine:sync()
  local cells = self.cells
  if not cells then return end
  local st = self.st
  C.surge_conn_stats(self.id, st)
  for i = 1, #cells do local c = cells[i] c[2][0] = st[c[1]] end
  local g = self.gauges
  for i = 1, #g do local c = g[i] c[2][0] = tonumber(st[c[1]]) end
end

local run_keys = { rxq = 1, txq = 1, pool = 1, neigh = 1, iface = 1, seconds = 1, burst = 1 }

-- The loop: poll, answer ARP for the engine's address (o.neigh, a
-- surge.dut.neigh responder, interface o.iface), sync the counters; until
-- a client is done, o.seconds passed, or the run stops. What is still open
-- at the end is reset. Returns the counters (engine:stats()).
function Engine:run(o)
  check.self(self, Engine, "engine:run")
  o = check.options(o, run_keys, "engine:run")
  local surge = require "surge"
  local view = require "surge.dut.view"
  local pool = o.pool
  local nb = check.expect(o.burst, "integer? 1..256", "engine:run", "burst") or 64
  local rx, tx = pool:burst(nb), pool:burst(nb)
  local rxq, txq, neigh, iface = o.rxq, o.txq, o.neigh, o.iface or 1
  if not self.cells then self:publish() end
  local v = view.new()
  local hz = tonumber(surge.tsc_hz())
  local deadline = o.seconds and tonumber(surge.tsc()) + o.seconds * hz or math.huge
  local client = self.role == "client"
  local next_sync = 0
  local ok, err = pcall(function()
    while surge.running() do
      local n = self:poll(rxq, txq, rx, tx)
      for i = 0, n - 1 do
        local p, len = rx.data[i], rx.len[i]
        if neigh and view.parse(v, p, len) then neigh:handle(iface, p, len, v) end
      end
      if n > 0 then rx:free() end
      local now = tonumber(surge.tsc())
      if now >= next_sync then
        self:sync()
        next_sync = now + hz / 100
        if client and self:done() then break end
        if now >= deadline then break end
      end
    end
  end)
  rx:free()
  if not self:done() then pcall(self.abort, self, txq, tx) end
  self:sync()
  if not ok and err ~= core.STOPPED then error(err, 0) end
  return self:stats()
end

-- A summary for people and for --output: the counters, the rates over
-- `seconds`, the percentiles (µs).
function Engine:summary(seconds)
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
function M.format(t)
  local s = ("%s: %d attempted, %d established, %d completed, %d failed (timeout %d, rst %d, bad %d), "
    .. "%d refused, %d retransmits, %d requests, %d responses, concurrent max %d, rx dropped %d, rx bad %d")
    :format(t.role, t.attempted, t.established, t.completed, t.failed, t.failed_timeout, t.failed_rst,
      t.failed_bad, t.refused, t.retransmits, t.requests, t.responses, t.concurrent_max, t.rx_dropped, t.rx_bad)
  if t.cps then s = s .. (", %.1f conn/s, %.1f req/s"):format(t.cps, t.requests_per_s) end
  local r = t.response_us
  if r then s = s .. (", response p50 %.0f us p99 %.0f us max %.0f us"):format(r.p50, r.p99, r.max) end
  return s
end

return M
