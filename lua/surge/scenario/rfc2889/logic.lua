-- scenario/rfc2889/logic.lua - the procedures of RFC 2889 (LAN switch benchmarking),
-- free of packets: each test plans streams of frames (which port sends,
-- from which MAC range to which, how many, how fast, which ports must
-- receive them), hands them to `send`, judges what came back and searches.
-- The scenario (rfc2889.lua) gives a `send` that runs surge.dut.l2 trials;
-- the unit tests (tests/lua/test_rfc2889.lua) give simulated switches
-- whose tables and rates are known.
--
-- send(streams, settle) -> { streams = { { sent, planned, seconds, rx = {
-- frames per port }, lat_n, lat_min_ns, lat_max_ns, lat_sum_ns } },
-- other = { per port }, seconds }. A stream: { tx = port index, src = {
-- hi, lo, n }, dst = { hi, lo, n } (frame j: src.lo + j % src.n, dst.lo + j
-- % dst.n), count, rate (pps, nil: unpaced), to = { port indices that must
-- receive it }, whole (every frame must leave: late ones catch up, the
-- rate a ceiling; else a paced stream keeps to its schedule and one that
-- fell behind ends short, sent < planned) }. Ports are indices 1..#ports of the --ports list.
local frames = require("surge.dut.frames")
local search = require("surge.scenario.kit.search")

local M = {}

-- The tests, in the order they run, with the ports each needs (RFC 2889
-- section) and the `test` name of their result rows.
M.TESTS = {
  { name = "forwarding", ports = 2, row = "forwarding", section = "5.1-5.4" },
  { name = "caching", ports = 3, row = "address_caching", section = "5.7" },
  { name = "learning", ports = 3, row = "address_learning", section = "5.8" },
  { name = "broadcast", ports = 2, row = "broadcast", section = "5.9" },
  { name = "congestion", ports = 4, row = "congestion_control", section = "5.10" },
  { name = "pressure", ports = 2, row = "forward_pressure", section = "5.11" },
}
M.BY_NAME = {}
for _, t in ipairs(M.TESTS) do M.BY_NAME[t.name] = t end
M.NAMES = "forwarding, caching, learning, broadcast, congestion, pressure"
M.PATTERNS = { full = "fully_meshed", partial = "partially_meshed", unidirectional = "unidirectional" }

-- Addresses: surge's port i sends from 02:89:00:ii:kk:kk (k < 65536 per
-- port: --macs); learning frames of the caching and learning tests come
-- from 02:8a:..., a fresh range per trial (addresses an earlier trial left
-- in the DUT's table neither help nor, being least recently used, stay).
M.PORT_HI, M.LEARN_HI, M.BCAST_HI, M.BCAST_LO = 0x0289, 0x028a, 0xffff, 0xffffffff
function M.port_addr(i, k) return { hi = M.PORT_HI, lo = i * 65536 + (k or 0), n = 1 } end
local BCAST = { hi = M.BCAST_HI, lo = M.BCAST_LO, n = 1 }
M.BCAST = BCAST

-- The learning frames' ranges, one fresh range per trial, from `first`
-- (0 by default) on. The scenario starts each run somewhere else (from the
-- TSC): a switch keeps what an earlier run taught it (its table, and in
-- Open vSwitch the datapath's cached "flood X" flows for addresses it had
-- evicted), so a second run that reused the first one's addresses found
-- them all flooded.
function M.allocator(first)
  local next_lo = first or 0
  return function(n)
    if next_lo + n > 2 ^ 32 then next_lo = 0 end
    local r = { hi = M.LEARN_HI, lo = next_lo, n = n }
    next_lo = next_lo + n
    return r
  end
end

-- The tests of a --tests list that need more ports than given: nil, or
-- the first such test's name and the ports it needs.
function M.ports_short(tests, nports)
  for _, name in ipairs(tests) do
    local t = M.BY_NAME[name]
    if t and nports < t.ports then return name, t.ports end
  end
  return nil
end

-- (from, to) pairs of port indices of a traffic pattern over n ports:
-- full: every port to every other (RFC 2889 5.1); partial: the first half
-- and the second half to each other, not within a half (5.3);
-- unidirectional: the first half to the second half only (5.4).
function M.mesh(n, pattern)
  local pairs_ = {}
  local half = math.floor(n / 2)
  for i = 1, n do
    for j = 1, n do
      local ok
      if pattern == "full" then ok = i ~= j
      elseif pattern == "partial" then ok = (i <= half) ~= (j <= half)
      elseif pattern == "unidirectional" then ok = i <= half and j > half
      else error("rfc2889: unknown pattern " .. tostring(pattern), 2) end
      if ok then pairs_[#pairs_ + 1] = { from = i, to = j } end
    end
  end
  return pairs_
end

-- What came back, per stream and in all: sent, expected (sent once per
-- port in `to`), received (on those ports), lost (expected - received, per
-- port: a copy on one port does not make up for a loss on another),
-- misdirected (frames on ports not in `to`: flooded or switched wrongly).
function M.account(streams, r)
  local tot = { sent = 0, planned = 0, expected = 0, received = 0, lost = 0, misdirected = 0 }
  local per = {}
  for k, s in ipairs(streams) do
    local got = r.streams[k]
    local to = {}
    for _, i in ipairs(s.to) do to[i] = true end
    local a = { sent = got.sent, planned = got.planned, expected = got.sent * #s.to, received = 0, lost = 0,
                misdirected = 0 }
    for i, n in ipairs(got.rx) do
      if to[i] then
        a.received = a.received + math.min(n, got.sent)
        a.lost = a.lost + math.max(0, got.sent - n)
      else
        a.misdirected = a.misdirected + n
      end
    end
    a.loss_pct = a.expected > 0 and a.lost * 100 / a.expected or 0
    per[k] = a
    for key in pairs(tot) do tot[key] = tot[key] + a[key] end
  end
  tot.loss_pct = tot.expected > 0 and tot.lost * 100 / tot.expected or 0
  -- fewer frames left than planned: what the trial measured is at a lower
  -- load than asked (surge's limit, or a port that pushed back)
  tot.sender_limited = tot.sent < tot.planned
  tot.streams = per
  return tot
end

-- The largest value in [lo, hi] whose trial passes, for a DUT that passes
-- below some value and fails above it: hi first (a DUT that passes there
-- needs no search), then halving the bracket until it is no wider than
-- resolution (integers: 1). o: lo, hi, resolution, integer, max_trials,
-- trial(v) -> pass, extra. Returns { value (nil: none passed, lo included),
-- trials = { { value, pass, extra } }, bracket = { pass, fail }, converged,
-- at_top (hi passed: the DUT's figure is hi or more) }.
function M.largest(o)
  local lo, hi = o.lo, o.hi
  local res = o.integer and math.max(1, o.resolution or 1) or (o.resolution or 0)
  local max_trials = o.max_trials or 30
  assert(type(lo) == "number" and type(hi) == "number" and lo <= hi, "rfc2889: largest: lo <= hi")
  local trials = {}
  local function try(v)
    local pass, extra = o.trial(v)
    trials[#trials + 1] = { value = v, pass = pass, extra = extra }
    return pass
  end
  if try(hi) then return { value = hi, trials = trials, bracket = { hi }, converged = true, at_top = true } end
  local pass, fail
  fail = hi
  if lo < hi and try(lo) then pass = lo else
    return { value = nil, trials = trials, bracket = { nil, lo }, converged = true }
  end
  pass, fail = search.bisect{ lo = lo, pass = pass, fail = fail, try = try, integer = o.integer, strict = true,
    more = function() return #trials < max_trials end, narrow = function(bottom, top) return top - bottom <= res end }
  return { value = pass, trials = trials, bracket = { pass, fail }, converged = fail - pass <= res }
end

-- One caching/learning trial (RFC 2889 5.7.3, 5.8.3): the test port sends a
-- frame first (the DUT learns its address), the learning port sends n
-- learning frames from n fresh source addresses to the test port at
-- `learn_rate`, then the test port sends one frame to each of them at
-- `test_rate`. Passes when every test frame arrives on the learning port
-- and none elsewhere: a frame to an address the DUT did not keep is
-- flooded (the monitoring ports see it) or lost. Every learning and test
-- frame must leave (whole: frames a busy core left late still go, the rate
-- a ceiling): a trial that taught fewer addresses than it tests would
-- blame the switch for surge's shortfall. Where one still left short (a
-- port that took nothing for a second) the trial fails, flagged
-- sender_limited.
function M.learn_trial(o, n, learn_rate)
  local P = o.ports
  local test_addr = M.port_addr(P.test)
  local hello = { { tx = P.test, src = test_addr, dst = BCAST, count = 1, rate = nil, to = {}, whole = true } }
  o.send(hello, o.settle)
  local learn = o.fresh(n)
  local learning = { { tx = P.learning, src = learn, dst = test_addr, count = n, rate = learn_rate, to = { P.test },
                       whole = true } }
  local l = M.account(learning, o.send(learning, o.settle))
  local test = { { tx = P.test, src = test_addr, dst = learn, count = n, rate = o.test_rate, to = { P.learning },
                   whole = true } }
  local r = o.send(test, o.settle)
  local a = M.account(test, r)
  local flooded = a.misdirected
  local short = l.sent < n or a.sent < n
  -- the addresses the switch was seen to hold: its own port's and the n
  -- learned, less those whose frame was lost or flooded (a flooded frame
  -- reaches every other port: the most one port saw counts them)
  local most = 0
  for i, c in ipairs(r.streams[1].rx) do
    if i ~= P.learning and i ~= P.test then most = math.max(most, c) end
  end
  return a.lost == 0 and flooded == 0 and not short,
    { addresses = n, learn_rate = learn_rate, sent = a.sent, received = a.received, lost = a.lost,
      flooded = flooded, learning_sent = l.sent, sender_limited = short,
      held = n + 1 - math.min(n, a.lost + most) }
end

local function any_limited(trials)
  for _, t in ipairs(trials) do if t.extra and t.extra.sender_limited then return true end end
  return false
end

-- Address caching capacity (5.7): the largest n whose learn_trial passes,
-- binary search over [lo, hi]. capacity counts the addresses the DUT held
-- for the passing trial: the n learned ones and the test port's own.
--
-- The failure this test looks for is the table full. A trial that fails
-- although the switch held more addresses than it needs in another trial
-- (a pass at more, or a full table's count in a failing one: `held`, what
-- arrived where it should) failed for another reason: frames lost or
-- flooded under load (Open vSwitch, busy: 875 and 997 for a table of 1000).
-- It is tried again, up to o.retries (default 2) more times; one that fails
-- every time counts as failing but is listed in `unexplained`, and the
-- capacity found is flagged (the scenario warns) instead of passing as
-- the switch's table size.
function M.caching(o)
  local held, retries, retried, unexplained = 0, o.retries or 2, 0, {}
  local found = M.largest{ lo = o.lo, hi = o.hi, integer = true, max_trials = o.max_trials,
    trial = function(n)
      local pass, extra
      for try = 1, retries + 1 do
        pass, extra = M.learn_trial(o, n, o.learn_rate)
        -- (n + 1 < held, not <=: a table counted one off by an eviction
        -- rule is no contradiction)
        extra.try, extra.not_the_table = try, not pass and not extra.sender_limited and n + 1 < held or nil
        extra.held_before = held
        if o.progress then o.progress("caching", n, pass, extra) end
        if not extra.not_the_table then break end
        if try <= retries then retried = retried + 1 end
      end
      if extra.not_the_table then unexplained[#unexplained + 1] = { addresses = n, held = held } end
      if not extra.sender_limited then held = math.max(held, extra.held) end
      return pass, extra
    end }
  return { learned_addresses = found.value, capacity = found.value and found.value + 1, at_top = found.at_top,
           sender_limited = any_limited(found.trials), held_addresses = held, retried = retried,
           unexplained = unexplained,
           trials = found.trials, converged = found.converged, bracket = found.bracket }
end

-- Address learning rate (5.8): the highest rate of n learning frames
-- after which every address is known, binary search over [lo, hi] pps.
function M.learning(o)
  local found = M.largest{ lo = o.lo, hi = o.hi, resolution = o.resolution, max_trials = o.max_trials,
    trial = function(rate)
      local pass, extra = M.learn_trial(o, o.addresses, rate)
      if o.progress then o.progress("learning", rate, pass, extra) end
      return pass, extra
    end }
  return { learning_rate_fps = found.value, at_top = found.at_top, trials = found.trials,
           sender_limited = any_limited(found.trials),
           converged = found.converged, bracket = found.bracket }
end

-- Learning frames before a forwarding trial (5.1.3): each sending port
-- sends one frame from each of its addresses, to the broadcast address.
function M.learn_ports(o, list, macs)
  local streams = {}
  for _, i in ipairs(list) do
    local a = M.port_addr(i)
    a.n = macs
    streams[#streams + 1] = { tx = i, src = a, dst = BCAST, count = macs, rate = o.learn_rate, to = {} }
  end
  o.send(streams, o.settle)
end

-- The streams of a meshed trial: each (from, to) pair a stream at rate /
-- (destinations of its port) so each port offers `rate` in all, from its
-- macs addresses to the destination port's.
function M.mesh_streams(pairs_, rate, duration, macs)
  local dests = {}
  for _, p in ipairs(pairs_) do dests[p.from] = (dests[p.from] or 0) + 1 end
  local streams = {}
  for _, p in ipairs(pairs_) do
    local r = rate / dests[p.from]
    local src, dst = M.port_addr(p.from), M.port_addr(p.to)
    src.n, dst.n = macs, macs
    streams[#streams + 1] = { tx = p.from, src = src, dst = dst, rate = r,
                              count = frames.planned(r, duration), to = { p.to } }
  end
  return streams
end

-- Forwarding (5.1 fully meshed, 5.3 partially meshed, 5.4 unidirectional):
-- a trial at the offered load per port (the forwarding rate there: frames
-- received per second on the right ports), then the throughput, the
-- highest load per port with no loss and nothing misdirected.
-- o: nports, pattern, rate (pps per port), duration, macs, resolution (pps),
-- max_trials, min_rate.
function M.forwarding(o)
  local pairs_ = M.mesh(o.nports, o.pattern)
  local senders, seen = {}, {}
  for _, p in ipairs(pairs_) do if not seen[p.from] then seen[p.from] = true senders[#senders + 1] = p.from end end
  local all = {}
  for i = 1, o.nports do all[i] = i end
  M.learn_ports(o, all, o.macs)
  local function trial(rate)
    local streams = M.mesh_streams(pairs_, rate, o.duration, o.macs)
    local r = o.send(streams, o.settle)
    local a = M.account(streams, r)
    a.seconds = r.seconds
    a.forwarding_rate_fps = r.seconds > 0 and a.received / o.duration or 0
    a.offered_pps = rate
    return a
  end
  local top = trial(o.rate)
  if o.progress then o.progress("forwarding", o.rate, top.lost == 0 and top.misdirected == 0, top) end
  local found = M.largest{ lo = o.min_rate, hi = o.rate, resolution = o.resolution, max_trials = o.max_trials,
    trial = function(rate)
      if rate == o.rate then return top.lost == 0 and top.misdirected == 0, top end
      local a = trial(rate)
      if o.progress then o.progress("forwarding", rate, a.lost == 0 and a.misdirected == 0, a) end
      return a.lost == 0 and a.misdirected == 0, a
    end }
  local limited = false
  for _, t in ipairs(found.trials) do limited = limited or t.extra.sender_limited end
  return { pattern = M.PATTERNS[o.pattern], senders = #senders, streams = #pairs_, offered_pps = o.rate,
           sender_limited = limited or top.sender_limited,
           forwarding_rate_fps = top.forwarding_rate_fps, at_max = top, throughput_pps = found.value,
           throughput_fps = found.value and found.value * #senders, at_top = found.at_top, trials = found.trials,
           converged = found.converged }
end

-- Broadcast forwarding rate and latency (5.9): port 1 sends broadcast
-- frames at rate for duration; every other port must receive each one.
-- forwarding_rate_fps: frames received on all other ports per second;
-- latency from each frame's send stamp to its arrival, over all ports.
function M.broadcast(o)
  M.learn_ports(o, { 1 }, 1)
  local to = {}
  for i = 2, o.nports do to[#to + 1] = i end
  local streams = { { tx = 1, src = M.port_addr(1), dst = BCAST, rate = o.rate,
                      count = frames.planned(o.rate, o.duration), to = to } }
  local r = o.send(streams, o.settle)
  local a = M.account(streams, r)
  local s = r.streams[1]
  local per = {}
  for i = 2, o.nports do per[#per + 1] = s.rx[i] end
  return { offered_pps = o.rate, sent = a.sent, received = a.received, lost = a.lost, loss_pct = a.loss_pct,
           sender_limited = a.sender_limited,
           receivers = #to, received_per_port = per, forwarding_rate_fps = a.received / o.duration,
           forwarding_rate_per_port_fps = a.received / o.duration / #to,
           latency_min_us = s.lat_min_ns and s.lat_min_ns / 1e3,
           latency_avg_us = s.lat_min_ns and s.lat_sum_ns / s.lat_n / 1e3,
           latency_max_us = s.lat_max_ns and s.lat_max_ns / 1e3 }
end

-- Congestion control (5.10): port 1 sends to ports 3 and 4 (half its load
-- each), port 2 to port 3 at the full load: port 3 is offered 150 %, port 4
-- 50 %. Head-of-line blocking: frames lost on the uncongested stream (1 ->
-- 4). Back pressure: none lost to the congested port although it was
-- offered more than its line rate (line_pps), or port 2, which sends only
-- to the congested port, was held back while port 1's uncongested stream
-- left whole (the switch pushed back, not surge's own limit, which would
-- cut that stream too). Unknown (nil): neither, or surge fell short.
function M.congestion(o)
  M.learn_ports(o, { 1, 2, 3, 4 }, 1)
  local count = function(r) return frames.planned(r, o.duration) end
  local streams = {
    { tx = 1, src = M.port_addr(1), dst = M.port_addr(3), rate = o.rate / 2, count = count(o.rate / 2), to = { 3 } },
    { tx = 1, src = M.port_addr(1), dst = M.port_addr(4), rate = o.rate / 2, count = count(o.rate / 2), to = { 4 } },
    { tx = 2, src = M.port_addr(2), dst = M.port_addr(3), rate = o.rate, count = count(o.rate), to = { 3 } },
  }
  local r = o.send(streams, o.settle)
  local a = M.account(streams, r)
  local c1, u, c2 = a.streams[1], a.streams[2], a.streams[3]      -- 1 -> 3, 1 -> 4 (uncongested), 2 -> 3
  local cong_lost, cong_exp = c1.lost + c2.lost, c1.expected + c2.expected
  local offered_congested = o.rate * 1.5
  local short1, short2, shortu = c1.sent < c1.planned, c2.sent < c2.planned, u.sent < u.planned
  -- both streams into the congested port held while port 1's uncongested
  -- one left whole: the switch held its senders back (port 1 could send)
  local held_back = short1 and short2 and not shortu
  local over = o.line_pps and o.line_pps > 0 and offered_congested > o.line_pps
  -- any other shortfall is surge's: the uncongested stream short, or one
  -- congesting stream short alone (port 2 short with port 1 whole was taken
  -- for the switch's back pressure, and on ring ports that are no switch it
  -- was surge's CPU): the congestion the test needs may not have been
  -- there, and nothing it saw is the switch's verdict
  local surge_short = shortu or (short1 ~= short2)
  local back_pressure
  if cong_lost > 0 then back_pressure = false
  elseif held_back or (over and not surge_short) then back_pressure = true end
  -- head-of-line blocking: loss on the uncongested stream while the other
  -- port is congested; unknown (nil) where surge fell short of the offer (a
  -- trial that sent 0.09 of 14.88 Mpps blamed the switch for its loss)
  local hol
  if not surge_short then hol = u.lost > 0 end
  return { offered_pps = o.rate, offered_congested_pps = offered_congested, congested_lost = cong_lost,
           congested_loss_pct = cong_exp > 0 and cong_lost * 100 / cong_exp or 0,
           uncongested_lost = u.lost, uncongested_loss_pct = u.loss_pct,
           hol_blocking = hol, back_pressure = back_pressure, sent = a.sent, planned = a.planned,
           tx_pps = o.duration > 0 and a.sent / o.duration or nil,
           congested = cong_lost > 0 or held_back or over or false, misdirected = a.misdirected,
           sender_limited = surge_short }
end

-- Forward pressure and maximum forwarding rate (5.11): port 1 sends to
-- port 2 at steps of the load (25..100 % of rate) and once unpaced (as
-- fast as surge sends: the overload); the maximum forwarding rate is the
-- highest frames/s that arrived. Forward pressure: the DUT sent faster than
-- the receiving port's line rate allows (line_pps; unknown: nil).
function M.pressure(o)
  M.learn_ports(o, { 1, 2 }, 1)
  local steps = {}
  local best = 0
  local loads = { 0.25, 0.5, 0.75, 1 }
  for k = 1, #loads + 1 do
    local rate = loads[k] and o.rate * loads[k] or nil
    local n = frames.planned(o.rate, o.duration)
    local s = { { tx = 1, src = M.port_addr(1), dst = M.port_addr(2), rate = rate,
                  count = rate and frames.planned(rate, o.duration) or n, to = { 2 } } }
    local r = o.send(s, o.settle)
    local a = M.account(s, r)
    local secs = rate and o.duration or r.streams[1].seconds
    local fr = secs > 0 and a.received / secs or 0
    steps[k] = { offered_pps = rate or (secs > 0 and a.sent / secs or 0), unpaced = rate == nil,
                 forwarding_rate_fps = fr, lost = a.lost, misdirected = a.misdirected }
    if fr > best then best = fr end
    if o.progress then o.progress("pressure", rate, a.lost == 0, steps[k]) end
  end
  local over = steps[#steps]
  local pressure
  if o.line_pps and o.line_pps > 0 then pressure = over.forwarding_rate_fps > o.line_pps * (1 + 1e-6) end
  return { steps = steps, max_forwarding_rate_fps = best, forwarding_rate_fps = over.forwarding_rate_fps,
           overload_offered_pps = over.offered_pps, line_pps = o.line_pps, forward_pressure = pressure }
end

return M
