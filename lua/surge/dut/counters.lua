-- counters.lua - per-flow TX/RX counters for test traffic through a DUT.
--
-- Each test flow is a UDP source port (sport0 .. sport0 + flows - 1): a
-- field routers keep. Each packet also carries a 16-bit per-flow sequence
-- number in the first two payload bytes (the latency probe, when any, sits
-- right after it), so the receiver counts loss, reordering and duplicates
-- per flow, and per class when classes use separate port ranges.
--
-- Received means unique: a frame whose flow and sequence number were
-- already counted (a DUT or link that sends a frame twice) is a duplicate,
-- counted apart, so loss = sent - received cannot be hidden by copies. Each
-- flow remembers which of the WINDOW sequence numbers before the next one
-- expected it counted (a bit each, by seq mod WINDOW, in the flow's record):
-- a frame behind the newest one by less than WINDOW is a duplicate when its
-- bit is set, else a late (reordered) frame; one further behind cannot be
-- told apart and counts as reordered.
--
--   local tag = counters.tagger{ l4 = t.l4, flows = 64, sport0 = 1024 }
--   local n = tag:tag(burst)          -- before send: rotates flows, writes seqs
--   tag:sent(burst_sent_count)        -- after send: counts the packets that left
--   local rx = counters.receiver{ flows = 64, sport0 = 1024, dport = 3842 }
--   rx:count_burst(b)                 -- after recv: counts the burst's test frames (C, one pass)
--   rx:count(p, v)                    -- true when the parsed frame is test traffic
--   rx.total, rx.reordered, rx.duplicated   -- received (unique), of them late, copies
--   rx:flow(f) -> received (unique), reordered, duplicated
--
-- Checksums stay valid (RFC 1624 updates), so a DUT that checks them forwards.
local ffi = require("ffi")
local bit = require("bit")
local cs = require("surge.proto.checksum")
local core = require("surge.core")

local C = core.C
local band, rshift = bit.band, bit.rshift
local update16 = cs.update16
-- MAX_FLOWS: the flows one receiver counts (a trial's classes together).
local M = { SEQ_LEN = 2, MAX_FLOWS = 60000, WINDOW = C.SURGE_DUT_WINDOW }   -- C counts: its window

local class = require("surge.class")
local Tagger = class.new("dut tagger", { "l4", "flows", "sport0", "next", "seq", "tx", "last", "last_n", "total" })

local function int(v, lo, hi, what)
  if type(v) ~= "number" or v ~= math.floor(v) or v < lo or v > hi then
    error(("counters: %s = %s outside %d..%d"):format(what, tostring(v), lo, hi), 3)
  end
  return v
end

-- opts: l4 (UDP header offset in the frame), flows, sport0.
function M.tagger(opts)
  local flows = int(opts.flows or 1, 1, M.MAX_FLOWS, "flows")
  local sport0 = int(opts.sport0 or 1024, 1, 65535 - flows + 1, "sport0")
  return setmetatable({ l4 = int(opts.l4, 14, 9000, "l4"), flows = flows, sport0 = sport0, next = 0,
                        seq = ffi.new("uint32_t[?]", flows), tx = ffi.new("double[?]", flows),
                        last = ffi.new("uint16_t[256]"), last_n = 0, total = 0 }, Tagger)
end

-- Writes flow (source port) and sequence number into every packet of the
-- burst; returns the count.
function Tagger:tag(burst)
  local l4, flows, sport0, seq, last = self.l4, self.flows, self.sport0, self.seq, self.last
  local f = self.next
  -- burst.data read once: each read goes through the handle's __index,
  -- which inside the loop keeps the JIT from compiling it (~0.8 us a frame)
  local n, data = burst.n, burst.data
  for i = 0, n - 1 do
    local u = data[i] + l4
    local sp = sport0 + f
    local old = u[0] * 256 + u[1]
    u[0] = rshift(sp, 8); u[1] = band(sp, 0xff)
    update16(u + 6, old, sp, true)
    local s = band(seq[f], 0xffff)
    old = u[8] * 256 + u[9]
    u[8] = rshift(s, 8); u[9] = band(s, 0xff)
    update16(u + 6, old, s, true)
    seq[f] = seq[f] + 1
    last[i] = f
    f = f + 1
    if f == flows then f = 0 end
  end
  self.next, self.last_n = f, n
  return n
end

-- Counts the first `sent` packets of the last tagged burst as sent (a send
-- hands the driver a prefix of the burst).
function Tagger:sent(sent)
  local tx, last = self.tx, self.last
  for i = 0, sent - 1 do
    local f = last[i]
    tx[f] = tx[f] + 1
  end
  self.total = self.total + sent
end

function Tagger:flow(f) return self.tx[f] end

local Receiver = class.new("dut receiver", { "flows", "sport0", "dport", "dport_of", "per_flow", "flow_mem", "st",
                                             "total", "reordered", "duplicated" })

-- opts: flows, sport0, dport (the test traffic's destination port),
-- dports (optional: { { first, flows, dport } } ranges of flows whose
-- traffic goes to another destination port: a class told apart by its UDP
-- destination port, y1564's port=N services; then every flow has its one
-- destination port in dport_of, so a frame counts only at its own). The
-- counting itself is C's (core/dataplane/dutrx.c): per burst in the
-- receiving loop (Receiver:count_burst), per frame for a parsed view
-- (Receiver:count); Lua owns the arrays, st points C at them.
function M.receiver(opts)
  local flows = int(opts.flows or 1, 1, M.MAX_FLOWS, "flows")
  local dport = int(opts.dport, 0, 65535, "dport")
  local dport_of   -- nil when every flow has dport: C's fast path compares the port with the layout
  if opts.dports and #opts.dports > 0 then
    dport_of = ffi.new("uint16_t[?]", flows)
    for f = 0, flows - 1 do dport_of[f] = dport end
    for _, r in ipairs(opts.dports) do
      local d = int(r.dport, 0, 65535, "dport")
      for f = int(r.first, 0, flows - 1, "first"), math.min(flows, r.first + r.flows) - 1 do dport_of[f] = d end
    end
  end
  -- a record a flow, each in a cache line of its own: the records from a
  -- 64-byte boundary of a zeroed block (empty windows)
  local line = ffi.sizeof("struct surge_dut_flow")
  local flow_mem = ffi.new("uint8_t[?]", (flows + 1) * line)
  local at = ffi.cast("uintptr_t", flow_mem)
  local per_flow = ffi.cast("struct surge_dut_flow *", at + (line - at % line) % line)
  for f = 0, flows - 1 do per_flow[f].expect = -1 end   -- nothing seen yet, the first packet sets it
  local self = setmetatable({ flows = flows, sport0 = int(opts.sport0 or 1024, 1, 65535, "sport0"),
                              dport = dport, dport_of = dport_of, per_flow = per_flow, flow_mem = flow_mem,
                              st = ffi.new("struct surge_dut_rx"), total = 0, reordered = 0, duplicated = 0 },
                            Receiver)
  local st = self.st
  st.flows, st.sport0, st.dport, st.flow = flows, self.sport0, self.dport, per_flow
  st.dport_of = dport_of
  return self
end

-- r.total, r.reordered, r.duplicated: C's totals, copied after each count
-- (plain numbers for the scripts that read them).
local function sync(self)
  local st = self.st
  self.total, self.reordered, self.duplicated = st.total, st.reordered, st.duplicated
end

-- Latency probes per class: class_of (int16_t[flows], 1-based class of each
-- flow, 0 for none) and lat (int32_t[nclasses + 1], each class's latency
-- receiver id, -1 for none); both kept alive by the caller.
function Receiver:probes(class_of, lat, nclasses)
  local st = self.st
  st.class_of, st.lat, st.nclasses = class_of, lat, nclasses
end

-- Availability intervals per class (after probes, whose class_of they
-- use): ivl, a struct surge_dut_ivl[nclasses + 1] (per = 0: a class
-- without), each unique frame counted in its class's interval in the same
-- C pass; kept alive, with its arrays, by the caller.
function Receiver:intervals(ivl)
  self.st.ivl = ivl
end

-- v: a parsed view (surge.proto.view) of the frame at p. Counts it when it is
-- test traffic of this receiver's flows and returns true.
function Receiver:count(p, v)
  if v.proto ~= 17 or v.l4 < 0 or v.l4 + 10 > v.len then return false end
  local rc = C.surge_dut_count_udp(self.st, p + v.l4, v.len - v.l4)
  if rc < 0 then core.check(rc) end
  if rc == 0 then return false end
  sync(self)
  return true
end

-- Counts the test frames of a received burst (and their latency probes);
-- returns how many frames were not test traffic: their indices are
-- st.other[0 .. n - 1].
function Receiver:count_burst(b)
  local n = C.surge_dut_rx_count(self.st, b)
  if n < 0 then core.check(n) end
  sync(self)
  return n
end

-- Receives a burst from rxq into b and counts its test frames (one C
-- call: surge_dut_rx_poll); returns the packets received. How many were
-- not test traffic: st.n_other, their indices st.other[0 .. n_other - 1];
-- b.data[x] and b.len[x] are set for those x only (the C pass parses the
-- rest straight from their mbufs).
function Receiver:poll(rxq, b)
  local n = C.surge_dut_rx_poll(rxq.port, rxq.id, b, self.st)
  if n < 0 then core.check(n) end
  if n > 0 then sync(self) end
  return n
end

function Receiver:flow(f)
  local r = self.per_flow[f]
  return r.rx, r.reord, r.dup
end

-- Sums flows [first, first + n) of a tagger and a receiver: a class.
function M.class_totals(tagger, receiver, first, n)
  local sent, recv, reord, dup = 0, 0, 0, 0
  for f = first, first + n - 1 do
    local r = receiver.per_flow[f]
    sent = sent + tagger.tx[f]
    recv, reord, dup = recv + r.rx, reord + r.reord, dup + r.dup
  end
  return sent, recv, reord, dup
end

return M
