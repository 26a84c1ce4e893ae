-- trial.lua - the task side of surge.dut: one trial (send for a fixed time or
-- count at a rate, keep receiving for a settle time, count per flow), ARP/NDP
-- resolution and a stand-alone responder. Launched as module tasks
-- ("surge.dut.trial:run"), so they work from scripts, scenario names and the
-- REPL alike; surge.dut (init.lua) builds their plain-data specs.
--
-- One lcore sends and receives: every RX queue of the spec (test traffic and
-- the DUT's ARP/NDP requests) is polled after every send, so a trial needs
-- one free worker lcore.
local ffi = require("ffi")
local surge = require("surge")
local core = require("surge.core")
local view = require("surge.proto.view")
local eth = require("surge.proto.eth")
local neigh = require("surge.dut.neigh")
local counters = require("surge.dut.counters")
local frames = require("surge.dut.frames")

local C = core.C
local M = {}

local band, floor = require("bit").band, math.floor

-- Receiving side shared by trials and replays: polls every iface, counts
-- test traffic per flow and matches probes per class in one C pass a burst
-- (counters.lua's count_burst, core/dataplane/dutrx.c), answers ARP/NDP.
local Rx = require("surge.class").new("dut receiver side", { "ifaces", "n", "v", "burst", "responder", "counter",
  "other", "other_bytes", "rx_iface", "hz", "lat", "classes", "class_of", "lat_ids", "ivl",
  "ivl_c" })

-- A class's availability intervals (class spec interval_frames, intervals):
-- its frames in the order they were tagged, cut into intervals of
-- interval_frames frames each. A frame's place in that order is exact on
-- both sides: the tagger gives the j-th frame of a class flow j mod flows
-- and sequence number j div flows, so the receiver recovers j from the
-- frame (its 16-bit sequence number unwrapped per flow against the highest
-- one seen) and counts it in the interval it was sent in, however late it
-- arrives. Per interval: sent and received (unique) frames.
-- The received side is counted in C in the receiver's pass
-- (struct surge_dut_ivl, core/dataplane/dutrx.c: cs, this class's entry,
-- points at rx and hi), the sent side here as the tagger's frames leave.
local function intervals(c, cs)
  local n = c.intervals
  local iv = { per = c.interval_frames, n = n, flows = c.flows, first = c.first,
               sent = ffi.new("double[?]", n), rx = ffi.new("double[?]", n), hi = ffi.new("int64_t[?]", c.flows) }
  for f = 0, c.flows - 1 do iv.hi[f] = -1 end
  cs.per, cs.n, cs.first, cs.flows, cs.rx, cs.hi = iv.per, n, c.first, c.flows, iv.rx, iv.hi
  return iv
end

-- A frame's 16-bit sequence number s as the whole number nearest above or
-- below hi, the highest one its flow had so far (-1: none yet): the frame's
-- place in its flow, however many times the 16 bits wrapped (a late frame
-- lands behind hi, not 65536 ahead). C's ivl_add does the same per frame;
-- this is its rule for Lua (the unit tests check it on its own).
function M.unwrap(hi, s)
  local d = band(s - band(hi, 0xffff), 0xffff)
  if d >= 0x8000 then d = d - 0x10000 end
  return hi + d
end

local function interval_of(iv, j)
  local i = floor(j / iv.per)
  if i >= iv.n then return iv.n - 1 end
  return i
end

-- A poll takes up to RX_BURST frames: a trial's round sends 8, so 32
-- keeps up four times over, and a pure receiver spends ~4 % fewer cycles a
-- frame than with 64 (docs/performance.md, issue 20: the burst's mbufs and
-- frames stay in the closest cache).
local RX_BURST = 32

function M.rx(spec)
  local ctrl = spec.ctrl_pool
  local self = setmetatable({ ifaces = spec.ifaces, n = #spec.ifaces, v = view.new(),
                              burst = ctrl:burst(RX_BURST), responder = neigh.new(spec.ifaces, ctrl),
                              counter = counters.receiver{ flows = spec.total_flows, sport0 = spec.sport0,
                                                           dport = spec.dport, dports = spec.dports },
                              other = 0, other_bytes = 0, rx_iface = spec.rx_iface,
                              hz = surge.tsc_hz(), lat = {}, classes = spec.classes or {}, ivl = {} }, Rx)
  -- per class: flow range and latency receiver (the classes share one probe
  -- offset, so the probes are told apart by their flow's class) and
  -- availability intervals (per = 0 in ivl_c: none)
  local nclasses = #self.classes
  self.ivl_c = ffi.new("struct surge_dut_ivl[?]", nclasses + 1)
  self.class_of = ffi.new("int16_t[?]", spec.total_flows)
  self.lat_ids = ffi.new("int32_t[?]", nclasses + 1)
  self.lat_ids[0] = -1
  for k, c in ipairs(self.classes) do
    for f = c.first, c.first + c.flows - 1 do self.class_of[f] = k end
    self.lat_ids[k] = -1
    if (c.probe_every or 0) > 0 then
      self.lat[k] = surge.latency.receiver{ offset = c.probe_off }
      self.lat_ids[k] = self.lat[k].id
    end
    if (c.interval_frames or 0) > 0 then self.ivl[k] = intervals(c, self.ivl_c[k]) end
  end
  self.counter:probes(self.class_of, self.lat_ids, nclasses)
  if next(self.ivl) then self.counter:intervals(self.ivl_c) end
  return self
end

-- The frames of iface i's last burst that were not test traffic (k of
-- them, listed by the counter's poll): ARP/NDP for the responder, the rest
-- counted as other on the rx iface.
function Rx:others(i, k)
  local b, v, list = self.burst, self.v, self.counter.st.other
  local data, lens = b.data, b.len
  for j = 0, k - 1 do
    local x = list[j]
    local p, len = data[x], lens[x]
    view.parse(v, p, len)              -- listed frames hold an Ethernet header: true
    if not self.responder:handle(i, p, len, v) and (self.rx_iface or i) == i then
      self.other = self.other + 1
      self.other_bytes = self.other_bytes + len
    end
  end
end

-- One poll of iface i's RX queue; returns the packets seen.
function Rx:poll_iface(i)
  local n = self.counter:poll(self.ifaces[i].rxq, self.burst)
  local k = self.counter.st.n_other
  if k > 0 then self:others(i, k) end
  return n
end

-- One pass over every RX queue; returns the packets seen. A session has
-- one or two ifaces (tx, rx): no loop over them, whose one or two turns a
-- call made LuaJIT start a root trace there and abort it on leaving
-- ("leaving loop in root trace") again and again, in the steady state.
function Rx:poll()
  local seen = self:poll_iface(1)
  if self.n > 1 then
    seen = seen + self:poll_iface(2)
    for i = 3, self.n do seen = seen + self:poll_iface(i) end
  end
  return seen
end

function Rx:close() self.burst:free() end

-- Fails the trial when a watched port's link went down (surge.dut.l2's
-- trials too).
local function link_checker(ports)
  local pi = ffi.new("struct surge_port_info")
  return function(what)
    for _, p in ipairs(ports) do
      if C.surge_port_info(p, pi) == 0 and pi.link_up == 0 then
        error(("port %d: link went down during %s"):format(p, what), 0)
      end
    end
  end
end

M.link_checker = link_checker

-- Settle: after the last send, what the DUT still holds arrives now; loss
-- is counted after it. poll() until the TSC reaches settle_end, napping
-- `nap` seconds (0.2 ms by default) after a poll that saw nothing; the
-- trials here and surge.dut.l2's and surge.dut.mcast's.
local function settle(poll, settle_end, nap)
  nap = nap or 0.0002
  while surge.running() and tonumber(surge.tsc()) < settle_end do
    if poll() == 0 then surge.sleep(nap) end
  end
end
M.settle = settle

-- One receive on each iface's RX queue into burst, each non-empty burst
-- handed to on_burst(i, n, burst) (i: the iface's index); returns the
-- packets seen (the polls of surge.dut.l2 and surge.dut.mcast, which count
-- every port's frames themselves).
function M.recv_each(ifaces, burst, on_burst)
  local seen = 0
  for i = 1, #ifaces do
    local n = ifaces[i].rxq:recv(burst)
    if n > 0 then
      on_burst(i, n, burst)
      seen = seen + n
    end
  end
  return seen
end

-- Which class sends the next round: the one furthest behind its share of
-- everything sent so far. Exact for any shares: a fixed table of 100 slots
-- gave a class under 0.5 % of the traffic none (qos ef:10kpps beside
-- be:3mpps sent 0 frames).
local function next_class(tags, shares, n)
  local all = 0
  for k = 1, n do all = all + tags[k].total end
  local best, behind = 1, -math.huge
  for k = 1, n do
    local b = (all + 1) * shares[k] - tags[k].total
    if b > behind then best, behind = k, b end
  end
  return best
end

-- The send schedule of a trial: frame j (0-based) is due at t0 + j * gap;
-- a trial of D seconds at R pps has round(R * D) frames, the last one due
-- before t0 + D. The trial loop sends what is due without waiting and
-- polls RX every round, so a frame back from the DUT is seen within one
-- round of its arrival whatever the rate: the pacer's wait inside a send
-- (txq:set_rate) would hold the receiver for up to a burst of gaps and add
-- that to every latency (issue 22 item 1). Without a rate every round sends
-- a full burst.
local CATCHUP_S = 0.01
local function planned(spec)
  if spec.count then return spec.count end
  if spec.rate and spec.duration then return frames.planned(spec.rate, spec.duration) end
  return math.huge
end
M.planned = planned

-- spec: ifaces, ctrl_pool, tx_iface, classes = { { pool, l4, flows, first,
-- share, probe_every, probe_off } }, total_flows, sport0, dport, rate (pps,
-- nil = unpaced), duration (s) or count (packets), settle (s), watch (ports),
-- what (for messages). Returns the counts, with planned (frames the
-- schedule had), offered_pps (spec.rate) and rx_poll_ns (the mean time
-- between RX polls while sending: how late at most, on average, a frame
-- that arrived was seen; loopback latency is this much above the wire's).
function M.run(spec)
  -- the idle policy before the receivers: a latency receiver made first
  -- would choose it itself and say so, once per trial
  surge.idle{ mode = "pause" }
  local rx = M.rx(spec)
  local txq = spec.ifaces[spec.tx_iface].txq
  local classes = spec.classes
  local bursts, tags, marks, tagged = {}, {}, {}, {}
  -- 8 frames a round: surge's Lua work is about 1 us a frame (tag, parse,
  -- count), so a round, and a reply's wait for the next poll, stays near
  -- 10 us; 32 made it ~40 us for no more rate (measured on net_ring)
  local per_burst = spec.burst or 8
  for k, c in ipairs(classes) do
    bursts[k] = c.pool:burst(per_burst)
    tags[k] = counters.tagger{ l4 = c.l4, flows = c.flows, sport0 = spec.sport0 + c.first }
    tagged[k] = 0
    if (c.probe_every or 0) > 0 then
      marks[k] = surge.latency.marker{ offset = c.probe_off, every = c.probe_every }
    end
  end
  local shares, share_sum = {}, 0
  for _, c in ipairs(classes) do share_sum = share_sum + c.share end
  for k, c in ipairs(classes) do shares[k] = c.share / share_sum end
  local check_link = link_checker(spec.watch or {})
  local what = spec.what or "the trial"
  check_link(what)
  txq:set_rate(nil)
  local hz = surge.tsc_hz()
  local gap = spec.rate and hz / spec.rate
  local total = planned(spec)
  local t0 = tonumber(surge.tsc())
  local stop_at = spec.duration and t0 + spec.duration * hz or math.huge
  local next_link = t0 + hz / 20
  local sent, polls, last_poll, poll_cycles = 0, 0, t0, 0
  local last_tx = t0          -- when the last frames left: the end of the sending
  -- frames due before the end that a late round (a preempted core) left
  -- are sent up to CATCHUP_S past it, as the pacer's catch-up does
  local late_end = stop_at + (gap and CATCHUP_S * hz or 0)
  -- a planned schedule's frames per class: each class's share of the total,
  -- rounded so they add up (largest remainders first), and a class's rounds
  -- capped at what it has left, so a class sends its share exactly, not up
  -- to a burst more or less (y1564 counts a service's loss against it)
  local quota = {}
  if total < math.huge then
    local sum, rem = 0, {}
    for k = 1, #classes do
      quota[k] = math.floor(total * shares[k])
      rem[k], sum = total * shares[k] - quota[k], sum + quota[k]
    end
    while sum < total do
      local best = 1
      for k = 2, #classes do if rem[k] > rem[best] then best = k end end
      quota[best], rem[best], sum = quota[best] + 1, -1, sum + 1
    end
  end
  while surge.running() do
    local now = tonumber(surge.tsc())
    local left = total - sent
    if now >= stop_at and (left <= 0 or now >= late_end) then break end
    if left <= 0 and stop_at == math.huge then break end
    -- frames due by now: those whose departure time has come
    local due = gap and math.min(left, math.floor((now - t0) / gap) + 1 - sent) or left
    if due > 0 then
      local k = next_class(tags, shares, #classes)
      if quota[k] and tags[k].total >= quota[k] then
        for j = 1, #classes do if tags[j].total < quota[j] then k = j break end end
      end
      local b = bursts[k]
      local want = due < b.cap and due or b.cap
      if quota[k] and quota[k] - tags[k].total < want then want = quota[k] - tags[k].total end
      local n = b:alloc(want)
      if n > 0 then
        local nt = tags[k]:tag(b)
        if marks[k] then marks[k]:mark(b) end
        local s = txq:send(b)
        tags[k]:sent(s)
        sent = sent + s
        if s > 0 then last_tx = now end
        local iv = rx.ivl[k]
        if iv then   -- the sent prefix: tag order j .. j + s - 1, in the intervals they fall in
          local j, e = tagged[k], tagged[k] + s
          while j < e do
            local i = interval_of(iv, j)
            local stop = i == iv.n - 1 and e or math.min(e, (i + 1) * iv.per)
            iv.sent[i] = iv.sent[i] + (stop - j)
            j = stop
          end
        end
        tagged[k] = tagged[k] + nt
      end
    end
    rx:poll()
    local after = tonumber(surge.tsc())
    poll_cycles, polls, last_poll = poll_cycles + (after - last_poll), polls + 1, after
    if now >= next_link then check_link(what) next_link = now + hz / 20 end
  end
  local t1 = tonumber(surge.tsc())
  settle(function() return rx:poll() end, t1 + (spec.settle or 0.5) * hz)
  check_link(what)
  for _, b in ipairs(bursts) do b:free() end
  -- received: unique frames; a DUT's copies are duplicated, not received
  local res = { sent = sent, received = rx.counter.total, reordered = rx.counter.reordered,
                duplicated = rx.counter.duplicated, planned = total < math.huge and total or nil,
                offered_pps = spec.rate, rx_poll_ns = polls > 0 and poll_cycles / polls * 1e9 / hz or nil,
                seconds = (t1 - t0) / hz, other = rx.other, answered = rx.responder.answered,
                classes = {} }
  res.tx_pps = res.seconds > 0 and sent / res.seconds or 0
  -- the time the frames were sent over: to the last one's slot (paced), not
  -- to the end of the loop's last round (a round preempted after the last
  -- frame left would stretch it; a rate over it would read low)
  res.send_seconds = gap and sent > 0 and (last_tx - t0 + gap) / hz or res.seconds
  for k, c in ipairs(classes) do
    local recv, reord, dup = 0, 0, 0
    for f = c.first, c.first + c.flows - 1 do
      local r, o, d = rx.counter:flow(f)
      recv, reord, dup = recv + r, reord + o, dup + d
    end
    local cr = { sent = tags[k].total, received = recv, reordered = reord, duplicated = dup }
    if rx.lat[k] then cr.latency, cr.latency_id = rx.lat[k]:summary(), rx.lat[k].id end
    local iv = rx.ivl[k]
    if iv then
      cr.intervals = { sent = {}, received = {} }
      for i = 0, iv.n - 1 do cr.intervals.sent[i + 1], cr.intervals.received[i + 1] = iv.sent[i], iv.rx[i] end
    end
    res.classes[k] = cr
  end
  rx:close()
  return res
end

-- Replays a pcap reader through the DUT. spec: ifaces, ctrl_pool, tx_iface,
-- rx_iface, reader, pool, rate (pps; nil: the reader's timing), settle,
-- dst_mac/src_mac (rewrite every frame's MACs). Counts every frame that
-- comes back on rx_iface that is not ARP/NDP.
function M.replay(spec)
  local ffi_copy = ffi.copy
  local rx = M.rx{ ifaces = spec.ifaces, ctrl_pool = spec.ctrl_pool, total_flows = 1, sport0 = 1, dport = 0,
                   rx_iface = spec.rx_iface }
  local txq = spec.ifaces[spec.tx_iface].txq
  local r = spec.reader
  local b = spec.pool:burst(32)
  local dst = spec.dst_mac and eth.mac(spec.dst_mac, "replay: dst_mac")
  local src = spec.src_mac and eth.mac(spec.src_mac, "replay: src_mac")
  surge.idle{ mode = "pause" }
  if spec.rate then txq:set_rate(spec.rate) else r:pace(txq) end
  local hz = surge.tsc_hz()
  local t0 = tonumber(surge.tsc())
  local sent, bytes = 0, 0
  while surge.running() do
    local n = r:fill(b)
    if n == 0 then break end
    for i = 0, n - 1 do
      if dst then ffi_copy(b.data[i], dst, 6) ffi_copy(b.data[i] + 6, src, 6) end
      bytes = bytes + b.len[i]
    end
    local s = txq:send(b)
    if s < n then bytes = -1 end      -- not all left: the byte count would lie
    sent = sent + s
    rx:poll()
  end
  local t1 = tonumber(surge.tsc())
  txq:set_rate(nil)
  settle(function() return rx:poll() end, t1 + (spec.settle or 0.5) * hz)
  b:free()
  local res = { sent = sent, sent_bytes = bytes >= 0 and bytes or nil, received = rx.other + rx.counter.total,
                received_bytes = rx.other_bytes, seconds = (t1 - t0) / hz }
  rx:close()
  return res
end

-- spec: ifaces, ctrl_pool, iface, addr, timeout. Returns the MAC text, or
-- raises the reason (one line).
function M.resolve(spec)
  local n = neigh.new(spec.ifaces, spec.ctrl_pool)
  local b = spec.ctrl_pool:burst(64)
  n:set_rx_burst(b)
  local mac, err = n:resolve(spec.iface, spec.addr, spec.timeout or 2)
  if not mac then error(err, 0) end
  return mac
end

-- Answers ARP/NDP on every iface until the run stops or `seconds` pass.
-- While nothing arrives it sleeps longer after each empty round, up to
-- RESPOND_NAP_MAX (an answer may take that long: ARP and NDP wait seconds),
-- so an idle responder wakes ~100 times a second instead of holding a core
-- (what that costs: docs/performance.md, "Idle policies"); a packet brings
-- the naps back to nothing.
local RESPOND_NAP_MIN, RESPOND_NAP_MAX = 0.0002, 0.01
function M.respond(spec)
  local rx = M.rx{ ifaces = spec.ifaces, ctrl_pool = spec.ctrl_pool, total_flows = 1, sport0 = 1, dport = 0 }
  local hz = surge.tsc_hz()
  local stop_at = spec.seconds and tonumber(surge.tsc()) + spec.seconds * hz or math.huge
  local nap = 0
  surge.idle{ mode = "pause" }          -- the naps below are this loop's own sleep
  while surge.running() do
    local now = tonumber(surge.tsc())
    if now >= stop_at then break end
    if rx:poll() > 0 then
      nap = 0
    else
      nap = math.min(math.max(nap * 2, RESPOND_NAP_MIN), RESPOND_NAP_MAX, (stop_at - now) / hz)
      surge.sleep(nap)
    end
  end
  local answered = rx.responder.answered
  rx:close()
  return answered
end

return M
