-- port.lua - ports and their queues.
--
--   local port = surge.port(0, { rxq = 1, txq = 1, clones = false })
--   local q = port:txq(0)          -- pass q to a task with surge.launch
--   q:send(burst)                  -- in the task's loop
--   q:send_due(burst)              -- a paced queue's due packets; the rest stay in burst
local ffi = require("ffi")
local bit = require("bit")
local core = require("surge.core")
local check = require("surge.check")

local rate = require("surge.rate")
local C, rc_check = core.C, core.check
local M = {}

local class = require("surge.class")
local results = require("surge.results")
-- gap: the per-packet gap function of a rate spec (set_rate); false: none
local Port, TxQueue, RxQueue = class.new("port", { "id" }), class.new("txq", { "port", "id", "gap" }),
  class.new("rxq", { "port", "id" })
Port.__handle = function(p) return ("port(%d)"):format(p.id) end
TxQueue.__handle = function(q) return ("txq(%d,%d)"):format(q.port, q.id) end
RxQueue.__handle = function(q) return ("rxq(%d,%d)"):format(q.port, q.id) end
Port.__tostring = function(p) return ("port %d"):format(p.id) end

local function wrap(id) return setmetatable({ id = id }, Port) end

function M.txq(port, id)
  check.expect(id, "integer 0..1023", "port:txq", "i")
  return setmetatable({ port = port, id = id, gap = false }, TxQueue)
end
function M.rxq(port, id)
  check.expect(id, "integer 0..1023", "port:rxq", "i")
  return setmetatable({ port = port, id = id }, RxQueue)
end
M.wrap = wrap
M.TxQueue, M.RxQueue = TxQueue, RxQueue   -- for checks elsewhere (check.handle: surge.pcap pacing, surge.conn)

local known = { rxq = 1, txq = 1, rxd = 1, txd = 1, promisc = 1, clones = 1, link_timeout = 1, mtu = 1,
                checksum_offload = 1 }

-- The settings surge.port compares on a port already open: option name,
-- field of struct surge_port_conf, how a value reads. rxd, txd and mtu given
-- as 0 mean "the default", which agrees with any; link_timeout is how long
-- the open waited, not a setting of the port.
local bool = function(v) return v == 1 end
local settings = {
  { "rxq", "rxq" }, { "txq", "txq" }, { "rxd", "rxd", zero_any = true }, { "txd", "txd", zero_any = true },
  { "promisc", "promisc", bool }, { "clones", "clones", bool }, { "mtu", "mtu", zero_any = true },
  { "checksum_offload", "csum_offload", bool },
}

-- surge.port on a port that is open (the script's, from the prompt or an
-- attached client, which run in master's VM but not its code): its handle
-- when every option given agrees with how it runs, else an error naming
-- each one that differs. The registry is C's, so this holds whichever VM
-- or code path opened it.
local function reopen(id, opts, cur)
  local differ = {}
  for _, s in ipairs(settings) do
    local v = opts[s[1]]
    if v ~= nil and not (s.zero_any and v == 0) then
      local have = cur[s[2]]
      if s[3] then have = s[3](have) else have = tonumber(have) end
      if v ~= have then differ[#differ + 1] = ("%s = %s (asked %s)"):format(s[1], tostring(have), tostring(v)) end
    end
  end
  if #differ > 0 then
    check.raise(("surge.port: port %d is already open with other options: %s (surge.port(%d) with no options "
      .. "gives its handle; close it first to open it with others)"):format(id, table.concat(differ, ", "), id))
  end
  return wrap(id)
end

-- Opens a port by number or device name; opts: rxq, txq, rxd, txd, promisc,
-- clones (tx queues may send clones; turns MBUF_FAST_FREE off), link_timeout (s),
-- mtu (frames longer than MTU + 22 bytes are refused; default the port's MTU).
-- A port already open: its handle (see reopen).
function M.open(id, opts)
  check.expect(id, "integer|string 0..65535", "surge.port", "id (a port number or device name)")
  opts = check.options(opts, known, "surge.port")
  if type(id) == "string" then id = rc_check(C.surge_port_find(id), 2) end
  local f = "surge.port"
  local conf = ffi.new("struct surge_port_conf")
  conf.rxq = check.field(opts, "rxq", "integer? 0..1024", f, 1)
  conf.txq = check.field(opts, "txq", "integer? 0..1024", f, 1)
  conf.rxd = check.field(opts, "rxd", "integer? 0..65535", f, 0)
  conf.txd = check.field(opts, "txd", "integer? 0..65535", f, 0)
  conf.promisc = check.field(opts, "promisc", "boolean?", f, true) and 1 or 0
  conf.clones = check.field(opts, "clones", "boolean?", f, false) and 1 or 0
  conf.mtu = check.field(opts, "mtu", "integer? 0..65535", f, 0)
  conf.csum_offload = check.field(opts, "checksum_offload", "boolean?", f, true) and 1 or 0
  conf.link_timeout_ms = math.floor(check.field(opts, "link_timeout", "number? 0..3600", f, 2) * 1000)
  if C.surge_is_main() ~= 0 then   -- (a task is refused by the open, as ever)
    local cur = ffi.new("struct surge_port_conf")
    if rc_check(C.surge_port_conf(id, cur), 2) == 1 then return reopen(id, opts, cur) end
  end
  rc_check(C.surge_port_open(id, conf), 2)
  return wrap(id)
end

function M.count() return C.surge_port_count() end

-- The handles of the ports open now, from C's registry, for the prompt's
-- views (tasks(), stats(), showing a port): unlike surge.port(N), which
-- opens a port that is not, it never opens or touches one.
function M.opened()
  local out, cur = {}, ffi.new("struct surge_port_conf")
  for id = 0, C.surge_port_count() - 1 do
    if C.surge_port_conf(id, cur) == 1 then out[#out + 1] = wrap(id) end
  end
  return out
end

function Port:txq(i) check.self(self, Port, "port:txq") return M.txq(self.id, i or 0) end
function Port:rxq(i) check.self(self, Port, "port:rxq") return M.rxq(self.id, i or 0) end

-- Closes the port (master, while other ports keep running); refused while a
-- running task uses one of its queues. Its rx pool must be full again. The
-- port is then unopened: surge.port() opens it again (by name: its number
-- can change when devices were added meanwhile). opts.remove: detach the
-- device too (a vdev from surge.vdev or --vdev; surge.vdev adds it again).
-- Returns the port's number, or nil after a remove.
function Port:close(opts)
  check.self(self, Port, "port:close")
  opts = check.options(opts, { remove = 1 }, "port:close")
  local remove = check.field(opts, "remove", "boolean?", "port:close", false)
  local id = rc_check(C.surge_port_close(self.id, remove and 1 or 0), 2)
  if remove then return nil end
  return id
end

function Port:info()
  check.self(self, Port, "port:info")
  local pi = ffi.new("struct surge_port_info")
  rc_check(C.surge_port_info(self.id, pi), 2)
  local mac = {}
  for i = 0, 5 do mac[#mac + 1] = ("%02x"):format(pi.mac[i]) end
  return {
    name = ffi.string(pi.name), driver = ffi.string(pi.driver), mac = table.concat(mac, ":"),
    link_up = pi.link_up == 1, speed_mbps = pi.link_speed_mbps, socket = pi.socket,
    rxq = pi.rxq, txq = pi.txq, fast_free = pi.fast_free == 1, clones = pi.clones == 1,
    mtu = pi.mtu, max_rxq = pi.max_rxq, max_txq = pi.max_txq,
    checksum_offload = {
      ip4 = bit.band(pi.tx_offloads, 2) ~= 0, udp = bit.band(pi.tx_offloads, 4) ~= 0,
      tcp = bit.band(pi.tx_offloads, 8) ~= 0,
    },
  }
end

-- Driver counters plus surge's own per-queue totals.
function Port:stats()
  check.self(self, Port, "port:stats")
  local s = ffi.new("struct surge_port_stats")
  rc_check(C.surge_port_stats(self.id, s), 2)
  local r = {
    ipackets = tonumber(s.ipackets), opackets = tonumber(s.opackets),
    ibytes = tonumber(s.ibytes), obytes = tonumber(s.obytes), imissed = tonumber(s.imissed),
    ierrors = tonumber(s.ierrors), oerrors = tonumber(s.oerrors), rx_nombuf = tonumber(s.rx_nombuf),
    tx_packets = 0, tx_bytes = 0, tx_drops = 0, tx_unsent = 0, rx_packets = 0, rx_bytes = 0,
  }
  local info = self:info()
  local q = ffi.new("struct surge_queue_stats")
  for i = 0, info.txq - 1 do
    rc_check(C.surge_txq_stats(self.id, i, q), 2)
    r.tx_packets = r.tx_packets + tonumber(q.packets)
    r.tx_bytes = r.tx_bytes + tonumber(q.bytes)
    r.tx_drops = r.tx_drops + tonumber(q.drops)
    r.tx_unsent = r.tx_unsent + tonumber(q.unsent)
  end
  for i = 0, info.rxq - 1 do
    rc_check(C.surge_rxq_stats(self.id, i, q), 2)
    r.rx_packets = r.rx_packets + tonumber(q.packets)
    r.rx_bytes = r.rx_bytes + tonumber(q.bytes)
  end
  return r
end

local function qstats(fn, q)
  local s = ffi.new("struct surge_queue_stats")
  rc_check(fn(q.port, q.id, s), 3)
  return { packets = tonumber(s.packets), bytes = tonumber(s.bytes), drops = tonumber(s.drops),
           unsent = tonumber(s.unsent), bursts = tonumber(s.bursts), lcore = s.lcore }
end

-- send's and send_alloc's arguments, checked (fn: which, for messages):
-- the queue, the burst and clones; returns the clone count.
local function send_args(self, burst, clones, fn)
  check.self(self, TxQueue, fn)
  check.burst(burst, fn)
  if clones == nil then return 1 end
  if type(clones) == "table" then clones = clones.clones end
  return check.number(clones, 1, 1024, true, fn, "clones")
end

-- A queue paced by a gap function (q:set_rate with gaps): each packet's
-- gap, asked of the function before the core sends the burst.
local function fill_gaps(self, burst, fn)
  local gap = self.gap
  if gap then
    for i = 0, burst.ro_n - 1 do
      burst.gap_ns[i] = check.number(gap(), 0, 4294967295, false, fn, "the gap function's result (ns)")
    end
  end
end

-- Sends the burst; `clones` (a number, or a table { clones = N } made once
-- outside the loop) sends each packet N times with one refcount add.
-- Returns the packets handed to the driver; the burst is empty afterwards.
function TxQueue:send(burst, clones)
  clones = send_args(self, burst, clones, "txq:send")
  fill_gaps(self, burst, "txq:send")
  local rc = C.surge_tx_send(self.port, self.id, burst, clones)
  if rc < 0 then rc_check(rc) end
  return rc
end

-- q:send(burst, clones), then burst:alloc(n) (n = 0: none), in one call into
-- the core: a TX loop's send and next allocation fused. Returns what the
-- send returned; burst.n is what the allocation got.
function TxQueue:send_alloc(burst, clones, n)
  clones = send_args(self, burst, clones, "txq:send_alloc")
  check.number(n, 0, burst.ro_cap, true, "txq:send_alloc", "n (at most the burst's capacity)")
  fill_gaps(self, burst, "txq:send_alloc")
  local rc = C.surge_tx_send_alloc(self.port, self.id, burst, clones, n)
  if rc < 0 then rc_check(rc) end
  if n > 0 and burst.ro_n == 0 then core.check_run() end   -- an empty pool, or a stopped run
  return rc
end

-- Sends what a paced queue has due now and keeps the rest in the burst (at
-- its front; burst.n says how many) for a later call, instead of waiting for
-- their departures: one task feeding several paced queues, each with its own
-- rate, gives each its burst in turn and none waits on another's schedule.
-- Alloc only an empty burst (alloc frees what a burst holds). An unpaced
-- queue sends the whole burst, as send does. Returns the packets sent.
function TxQueue:send_due(burst)
  check.self(self, TxQueue, "txq:send_due")
  check.burst(burst, "txq:send_due")
  if self.gap then
    check.raise("txq:send_due: the queue paces by a gap function (q:set_rate with gaps): use q:send")
  end
  local rc = C.surge_tx_send_due(self.port, self.id, burst)
  if rc < 0 then rc_check(rc) end
  return rc
end

function TxQueue:stats() check.self(self, TxQueue, "txq:stats") local s = qstats(C.surge_txq_stats, self) return s end

-- Paces the queue (see surge/rate.lua for specs); takes effect at its next
-- send, also when called from master while a task is sending.
function TxQueue:set_rate(spec)
  check.self(self, TxQueue, "txq:set_rate")
  local r, gap = rate.build(spec, 2)
  rc_check(C.surge_txq_set_rate(self.port, self.id, r), 2)
  self.gap = gap or false
  -- a mark on `surge plot`'s time axis (master and the prompt; see results.event)
  results.event("set_rate", ("port %d queue %d: rate %s"):format(self.port, self.id,
    rate.describe(spec)), { port = self.port, queue = self.id })
  return self
end

-- What the queue achieved since its rate was set.
function TxQueue:rate_stats()
  check.self(self, TxQueue, "txq:rate_stats")
  local s = ffi.new("struct surge_rate_stats")
  rc_check(C.surge_txq_rate_stats(self.port, self.id, s), 2)
  return { packets = tonumber(s.packets), bytes = tonumber(s.bytes), seconds = s.seconds,
           pps = s.pps, l1_bps = s.l1_bps, target_pps = s.target_pps, late = tonumber(s.late),
           skipped_s = s.skipped_s, unsent = tonumber(s.unsent),
           catchup = rate.catchup_names[s.catchup], max_late_us = s.max_late_us }
end

-- Receives into the burst (its old packets are freed first); returns the count.
function RxQueue:recv(burst)
  check.self(self, RxQueue, "rxq:recv")
  check.burst(burst, "rxq:recv")
  local rc = C.surge_rx_recv(self.port, self.id, burst)
  if rc < 0 then rc_check(rc) end
  return rc
end

function RxQueue:stats() check.self(self, RxQueue, "rxq:stats") local s = qstats(C.surge_rxq_stats, self) return s end

return M
