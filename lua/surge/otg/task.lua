-- otg/task.lua - the task of one port while OTG traffic runs (launched as
-- "surge.otg.task:port" by otg/traffic.lua): it sends the flows whose tx
-- port this is and counts what the port receives per flow (the tag
-- otg/flows.lua puts right after a frame's headers), with each timed
-- flow's latency probe into its surge.latency receiver.
--
-- Sending: the port's flows are spread over its TX queues (as many as the
-- device has, up to one a flow); each queue is paced by surge's pacer at
-- the sum of its flows' rates, and send_due keeps any queue from waiting on
-- another's schedule. Flows sharing a queue take turns a burst at a time,
-- the one furthest behind its rate first (sent / rate smallest): over a
-- run each gets its own rate within a burst. When a flow ends, waits (its
-- delay, the gap after one of its bursts) or starts again, its queue is
-- re-paced at what the others ask.
--
-- Counts go to memory master owns (otg/stats.lua): per flow the frames and
-- bytes sent and whether all are sent (this task alone writes them), per
-- port and flow the frames and bytes received (this port's task alone
-- writes its row). Aligned 8-byte stores: master reads whole values.
local common = require("surge.otg.common")
local latency = require("surge.latency")
local neigh = require("surge.dut.neigh")
local view = require("surge.proto.view")
local eth = require("surge.proto.eth")
local ffi, surge, core, C, pool = common.ffi, common.surge, common.core, common.C, common.pool
local flows, stats, capture = common.flows, common.stats, common.capture

local M = {}

local BURST = 32
-- A round with nothing to send or receive sleeps (the lcore may be shared:
-- floating lcores), longer while nothing comes, up to IDLE_MAX_US: a 1024-frame
-- ring fills in no less than ~1 ms at 1 Mpps
local IDLE_US, IDLE_MAX_US = 20, 200
local DRAIN_ROUNDS = 1024     -- receives at most at a task's end: what its queues still hold
-- While a port's queues receive nothing, rounds that send poll them less
-- often: after 1, 3, 7, 15 skipped rounds (doubling), at most RX_SENT_MAX
-- frames handed to the driver between two polls (half of surge's default
-- 1024-descriptor RX ring, so a loopback's own frames cannot overflow it)
-- and at most RX_GAP_US between two polls (a device slow to send, like
-- af_packet, makes long rounds: a peer at 10 Gbit/s line rate sends ~150
-- 64-byte frames in that time); a poll that gets frames makes every round
-- poll again, and a round that sends nothing always polls. An empty poll
-- is a quarter of a 64-byte send's cost on a TX-only port
-- (docs/performance.md, the OTG row).
local RX_SENT_MAX, RX_GAP_US = 512, 10

-- The port's device addresses (otg/devices.lua's entries) as one
-- surge.dut.neigh responder: an interface an address (its ethernet's MAC),
-- on the port's first queues. nil when the port has no device.
local function responder(nb, rxq, txq)
  if nb == nil or #nb.entries == 0 then return nil end
  local ifaces = {}
  for i, e in ipairs(nb.entries) do
    ifaces[i] = { rxq = rxq, txq = txq, mac = e.mac, ip4 = e.kind == 4 and e.addr or nil,
                  ip6 = e.kind == 6 and e.addr or nil, echo = true }
  end
  return { n = neigh.new(ifaces, nb.ctrl_pool), count = #ifaces, v = view.new() }
end

-- Answers the frame at p when it is an ARP request, a neighbour
-- solicitation or an echo request (ICMP, ICMPv6) for one of the port's addresses (each interface of the
-- responder looks at it: they share the port). A compare of the ethertype
-- (and of IPv4's protocol) for any other frame.
local function answer(r, p, len)
  local et = len >= 24 and p[12] * 256 + p[13] or 0
  if et ~= 0x0806 and et ~= 0x86dd and et ~= 0x8100 and (et ~= 0x0800 or p[23] ~= 1) then return end
  local v = r.v
  if not view.parse(v, p, len) then return end
  if r.n:handle(1, p, len, v) then
    for i = 2, r.count do r.n:handle(i, p, len, v) end
  end
end
M.responder, M.answer = responder, answer     -- otg/ping.lua's task answers as this one does

-- a: { rxq, txq, neigh = { entries, ctrl_pool, block } } - the task of a
-- port with devices between traffic runs: resolves each address's gateway
-- (surge.dut.neigh's resolve: a request every 0.25 s, answering meanwhile),
-- again every RETRY_S for one that did not answer, and answers requests
-- for the addresses until stopped. What it resolved goes to the block.
-- (While resolve waits on one gateway it answers for that address alone:
-- RESOLVE_S short, so an absent gateway holds the others' answers little.)
local RESOLVE_S, RETRY_S = 0.3, 1
function M.neigh(a)
  local nb = a.neigh
  local r = responder(nb, a.rxq, a.txq)
  local block = stats.neigh_view(nb.block)
  local rxb = pool.burst(-1, BURST)
  r.n:set_rx_burst(rxb)
  local hz = surge.tsc_hz()
  local next_try = 0
  local idle = IDLE_US
  while surge.running() do
    local now = tonumber(surge.tsc())
    if now >= next_try then
      for i, e in ipairs(nb.entries) do
        if block[e.k].resolved == 0 and not e.gw_mac and surge.running() then
          local mac = r.n:resolve(i, e.gw, RESOLVE_S)
          if mac then
            local b = eth.mac(mac, "surge otg: resolved")
            for j = 0, 5 do block[e.k].mac[j] = b:byte(j + 1) end
            block[e.k].resolved = 1
          end
        end
      end
      next_try = tonumber(surge.tsc()) + RETRY_S * hz
    end
    local n = a.rxq:recv(rxb)
    for j = 0, n - 1 do answer(r, rxb.data[j], rxb.len[j]) end
    if n > 0 then idle = IDLE_US
    else
      C.surge_sleep_us(idle)
      if idle < IDLE_MAX_US * 10 then idle = idle * 2 end
    end
  end
  rxb:free()
  return true
end

-- Whether flow x may send at TSC t: not done, not paused, not waiting.
local function due(x, t) return x.left ~= 0 and x.s.paused == 0 and x.wait <= t end

-- Paces group g's queue at the sum of what its sendable flows ask, and
-- notes when this next changes by itself (a wait or a fixed_seconds end).
local function pace(g, t)
  local pps, wake = 0, math.huge
  for _, x in ipairs(g.flows) do
    if due(x, t) then pps = pps + x.pps end
    if x.left ~= 0 then
      if x.wait > t and x.wait < wake then wake = x.wait end
      if x.stop_at < wake then wake = x.stop_at end
    end
  end
  -- a fresh schedule each time (after a wait the old one would owe a catch-up burst)
  if pps > 0 then g.q:set_rate(("%.6fpps"):format(pps)) end
  g.pps, g.wake = pps, wake
end

-- The flow of group g to send next (nil: none): the one furthest behind its rate.
local function pick(g, t)
  local best, key
  for _, x in ipairs(g.flows) do
    if due(x, t) then
      local k = x.s.tx_frames / x.pps
      if best == nil or k < key then best, key = x, k end
    end
  end
  return best
end

local function frame_bytes(b)
  local sum, len = 0, b.len
  for i = 0, b.n - 1 do sum = sum + len[i] end
  return sum + b.n * flows.FCS
end

-- A tagged flow's sent frames by tag value (core/dataplane/tag_count.c):
-- a burst's frames read and counted in the flow's sent row as they wait,
-- in one pass, then those send_due kept (it sends the first ones and moves
-- the rest to the front) taken back: they are read again with the next
-- send. (Reading after the send is too late: the driver has the frames.)
-- One burst's at a time: this task's.
local sent_values = ffi.new("struct surge_otg_tx")

-- A struct surge_otg_tagger from reader r (otg/flows.lua's tag_readers).
local function tagger(r, out)
  if r.n > C.SURGE_OTG_TAGS_MAX then error(("surge otg: %d metric tags in a flow, at most %d"):format(r.n,
    C.SURGE_OTG_TAGS_MAX)) end
  out.at, out.hb, out.n = r.at, r.hb, r.n
  for i = 1, r.n do
    local t = out.tag[i - 1]
    t.byte, t.bit, t.len = r.b[i], r.bit[i], r.len[i]
  end
  return out
end

-- The slots readers tg count in at most (their rows' ends): where the caller does not say.
local function slots_of(tg)
  local top = 0
  for _, r in pairs(tg) do
    local bits = 0
    for i = 1, r.n do bits = bits + r.len[i] end
    top = math.max(top, r.at + 2 ^ bits)
  end
  return top
end

-- One send on group g at TSC t; returns the packets sent.
local function send(g, t)
  local x = g.cur
  -- a queue of one flow keeps it while it is due (no pick: a division a burst)
  if x == nil or (x.burst.n == 0 and (g.many or not due(x, t))) then
    x = pick(g, t)
    g.cur = x
    if x == nil then return 0 end
  end
  if x.burst.n == 0 then   -- (a flow re-paced away from keeps what it had not sent, for its next turn)
    local n, left = BURST, x.left
    if left > 0 and left < n then n = left end
    if x.per_burst and x.in_burst < n then n = x.in_burst end
    -- the burst is this task's and n at most its capacity: burst:alloc's checks without the call
    if C.surge_burst_alloc(x.burst, n) == 0 then core.check_run() end   -- an empty pool, a stopped run
    if x.f then x.f:apply(x.burst) end
    if x.sz then x.sz:apply(x.burst) end
    if x.probes then x.probes:mark(x.burst) end
  end
  local before = x.sz and frame_bytes(x.burst) or 0
  local tg = x.tg
  if tg then C.surge_otg_tx_read(sent_values, tg, x.burst, x.tags, x.nslots) end   -- counted as sent
  -- txq:send_due's call without its argument checks (the queue and burst are this task's); a
  -- failure leaves the burst as it was, so the checked call then raises its error
  local sent = C.surge_tx_send_due(g.port, g.qid, x.burst)
  if sent < 0 then
    if tg then C.surge_otg_tx_unsent(sent_values, tg, x.tags, x.nslots, 0) end
    sent = g.q:send_due(x.burst)
  end
  if tg and sent < sent_values.n then C.surge_otg_tx_unsent(sent_values, tg, x.tags, x.nslots, sent) end
  if sent > 0 then
    local s = x.s
    s.tx_frames = s.tx_frames + sent
    s.tx_bytes = s.tx_bytes + (x.sz and before - frame_bytes(x.burst) or sent * x.bytes)
    local repace = false
    if x.left > 0 then
      x.left = x.left - sent
      if x.left == 0 then s.done = 1 repace = true end
    end
    if x.per_burst then
      x.in_burst = x.in_burst - sent
      if x.in_burst == 0 then       -- the burst is out: the gap after it, then the next
        x.in_burst = x.per_burst
        if x.ibg > 0 then x.wait = t + x.ibg repace = true end
      end
    end
    if repace then g.cur = nil pace(g, t) end
  end
  return sent
end

-- What a port's task counts of what it receives (core/dataplane/tag_count.c,
-- a burst a call): a frame carrying a flow's tag at one of offs (the
-- config's header lengths) adds to rx[flow] (frames, bytes with the FCS,
-- first and last TSC), and its probe, if the flow is timed (lat[flow] a
-- surge.latency receiver, else -1), goes to that receiver. tg (optional):
-- flow index -> its tag reader for this port's row of tags (the slots,
-- otg/stats.lua; ntags of them): a tagged flow's frame is counted there
-- too by the value of its tagged bits, when its tag is at the flow's own
-- header length (where the tagged bits are). Returns the struct surge_otg_rx
-- and what it points at (kept alive with it).
local function rx_counts(rx, lat, offs, nflows, hz, tg, tags, ntags)
  tg = tg or {}
  local st = ffi.new("struct surge_otg_rx")
  local o = ffi.new("uint16_t[?]", math.max(#offs, 1))
  for i, off in ipairs(offs) do o[i - 1] = off end
  st.nflows, st.noffs, st.offs, st.rx, st.lat, st.ns_per_cycle = nflows, #offs, o, rx, lat, 1e9 / hz
  local nt = 0
  for k in pairs(tg) do if k < nflows then nt = nt + 1 end end
  local of, readers
  if nt > 0 then
    of, readers = ffi.new("int32_t[?]", nflows), ffi.new("struct surge_otg_tagger[?]", nt)
    for k = 0, nflows - 1 do of[k] = -1 end
    local i = 0
    for k, r in pairs(tg) do
      if k < nflows then tagger(r, readers[i]) of[k] = i i = i + 1 end
    end
    st.tagger_of, st.taggers, st.slots, st.nslots = of, readers, tags, ntags or slots_of(tg)
  end
  return { st = st, offs = o, of = of, readers = readers, lat = lat }
end

-- Counts burst b received (c: rx_counts's) and hands its probes to their
-- receivers; returns the frames without a tag (c.st.other lists them).
local function count_burst(c, b)
  local st = c.st
  local n = C.surge_otg_rx_count(st, b)
  if n < 0 then error(("surge otg: counting a received burst: error %d (an invalid count table)"):format(n)) end
  for i = 0, st.n_probe - 1 do
    local pr = st.probe[i]
    C.surge_latency_add(pr.lat, pr.ns, pr.seq)
  end
  return n
end

-- The same a frame at a time: count(p, l, tsc) counts frame p of l bytes
-- received at TSC tsc (a one-frame burst); true when it carries a tag
-- (whatever its flow number). The fuzz test in
-- tests/lua/test_fuzz_parsers.lua feeds it mutated frames.
function M.counter(rx, lat, offs, nflows, hz, tg, tags, ntags)
  local c = rx_counts(rx, lat, offs, nflows, hz, tg, tags, ntags)
  local one = ffi.new("struct surge_burst")
  one.ro_n = 1
  return function(p, l, tsc)
    one.ro_data[0], one.len[0], one.tsc = p, l, tsc
    return count_burst(c, one) == 0
  end
end

-- a: { groups = { { txq = q, flows = { spec, ... } } }, rxqs = { rxq, ... }, stats (the
--      block's address), nflows, row (this port's rx row), offs (the tag's offsets to look
--      at), lat (flow index + 1 -> latency receiver, -1: none), specs (the tagged flows),
--      ntags (the tag slots) }; a spec has pps (its rate in
--      frames a second), delay_s and ibg_s set by master.
function M.port(a)
  local st = stats.view(a.stats)
  local hz = surge.tsc_hz()
  local groups, all = {}, {}
  local sent_tg = flows.tag_readers(a.specs, -1)
  local ntags = a.ntags or slots_of(sent_tg)
  for gi, g in ipairs(a.groups) do
    local grp = { q = g.txq, port = g.txq.port, qid = g.txq.id, flows = {}, cur = nil, pps = 0, wake = math.huge }
    for _, spec in ipairs(g.flows) do
      local _, f, sz = flows.build(spec)    -- the template is in spec.pool (master's: otg/traffic.lua)
      local x = { burst = spec.pool:burst(BURST), f = f or false, sz = sz or false, left = spec.count,
                  s = st.flow[spec.index], bytes = (spec.size or 0) + flows.FCS, pps = spec.pps, wait = 0,
                  stop_at = math.huge, per_burst = spec.burst or false, in_burst = spec.burst or 0,
                  ibg = spec.ibg_s * hz, delay = spec.delay_s * hz, seconds = spec.seconds,
                  probes = spec.lat_id >= 0 and latency.marker({ offset = spec.header_bytes + flows.TAG_LEN })
                    or false, tg = sent_tg[spec.index] and tagger(sent_tg[spec.index], ffi.new("struct surge_otg_tagger"))
                    or false, tags = st.tags, nslots = ntags }
      grp.flows[#grp.flows + 1] = x
      all[#all + 1] = x
    end
    grp.many = #grp.flows > 1
    groups[gi] = grp
  end
  local rxqs, nrx = a.rxqs, #a.rxqs
  local resp = responder(a.neigh, rxqs[1], a.groups[1].txq)
  local rxb = pool.burst(-1, BURST)    -- receive only: the mbufs are the port's
  local tap = capture.tap(a.capture)   -- nil: the port has no capture in the config
  local rx = st.rx + a.row * a.nflows
  local nflows, ng = a.nflows, #groups
  local lat = ffi.new("int32_t[?]", nflows + 1)
  for k = 1, nflows do lat[k - 1] = a.lat[k] or -1 end
  local counts = rx_counts(rx, lat, a.offs, nflows, hz, flows.tag_readers(a.specs, a.row), st.tags, ntags)
  local other = counts.st.other
  -- one receive, its frames counted by their flows in one call; returns the frames
  local function receive_on(rxq)
    local n = rxq:recv(rxb)
    if n > 0 then
      if tap then tap:write(rxb) end
      local no = count_burst(counts, rxb)
      if resp and no > 0 then      -- ARP, ND, echo for its devices among the frames without a tag
        local data, len = rxb.data, rxb.len
        for i = 0, no - 1 do
          local j = other[i]
          answer(resp, data[j], len[j])
        end
      end
    end
    return n
  end
  local function receive()
    local n = receive_on(rxqs[1])
    for q = 2, nrx do n = n + receive_on(rxqs[q]) end
    return n
  end
  -- this loop sleeps by its own rule (below), so every port task polls with
  -- pause: the core's adaptive RX idle would sleep before every empty poll
  -- (up to max_sleep_us) whatever the queues send: a TX-only port (net_null
  -- no-rx) then sent a burst a sleep (0.03 Mpps in scripts/bench's OTG row;
  -- docs/performance.md), and a port receiving latency probes had that sleep
  -- (inside recv, after this task's own send) added to every latency
  surge.idle{ mode = "pause" }
  -- rounds skipped at most between two empty polls (above); none where
  -- a receive time is measured (a flow's latency, a capture's timestamps)
  local timed = tap ~= nil
  for k = 0, nflows - 1 do if lat[k] >= 0 then timed = true end end
  local rx_max = timed and 0 or math.max(0, math.floor(RX_SENT_MAX / (BURST * #groups)) - 1)
  local rx_skip, rx_wait, rx_last, rx_gap = 0, 0, 0, RX_GAP_US * hz / 1e6
  st.run.ready[a.row] = 1
  local go, idle, gen = false, IDLE_US, st.run.gen
  while surge.running() do
    local busy = false
    local t = tonumber(surge.tsc())
    if not go then
      go = st.run.go ~= 0
      if go then                        -- each flow's delay and end from now
        for _, x in ipairs(all) do
          x.wait = t + x.delay
          if x.seconds then x.stop_at = x.wait + x.seconds * hz end
        end
        for i = 1, #groups do pace(groups[i], t) end
      end
      ng = go and #groups or 0
    end
    if st.run.gen ~= gen then          -- flows paused or resumed: each queue at what its flows ask now
      gen = st.run.gen
      for i = 1, #groups do groups[i].cur = nil pace(groups[i], t) end
    end
    for i = 1, ng do
      local g = groups[i]
      if t >= g.wake then               -- a wait is over, or a fixed_seconds flow's time is up
        for _, x in ipairs(g.flows) do
          if x.left ~= 0 and t >= x.stop_at then x.left, x.s.done = 0, 1 end
        end
        g.cur = nil
        pace(g, t)
      end
      if g.pps > 0 and send(g, t) > 0 then busy = true end
    end
    if tap then tap:poll() end
    if not busy or rx_wait == 0 or t - rx_last >= rx_gap then     -- busy: this round sent
      rx_last = t
      if receive() > 0 then busy, rx_skip = true, 0
      elseif busy and rx_skip < rx_max then rx_skip = math.min(rx_skip * 2 + 1, rx_max) end
      rx_wait = rx_skip
    else
      rx_wait = rx_wait - 1
    end
    if busy then idle = IDLE_US
    else
      C.surge_sleep_us(idle)
      if idle < IDLE_MAX_US then idle = idle * 2 end
    end
  end
  for _, x in ipairs(all) do x.burst:free() end   -- allocated when the run stopped: never sent
  -- what is still queued to this port (a loopback's own frames) is counted
  -- and goes back to its pool: the next start refills idle pools
  for _ = 1, DRAIN_ROUNDS do if receive() == 0 then break end end
  if tap then tap:close() end
  rxb:free()
  return true
end

return M
