-- surge.scenario.rfc2889_logic (RFC 2889's procedures, searches and
-- verdicts) against simulated switches whose truth is known: a MAC table of
-- a given size (evicting per port as Open vSwitch does, or globally least
-- recently used), a learning rate limit, an egress forwarding limit, a hub
-- that floods everything, head-of-line blocking, back pressure and a switch
-- faster than its line rate; and the scenario's refusals before any port.
local logic = require("surge.scenario.rfc2889_logic")
local scn = require("surge.scenario.rfc2889")
local errors_like = require("surge.vm.testrun").errors
-- errors(text, f, ...): f raises an error that contains text (plain text, not a pattern)
local function errors(text, f, ...) return errors_like(text:gsub("%p", "%%%0"), f, ...) end

local T = {}

local function key(hi, lo) return hi * 2 ^ 32 + lo end

-- A switch of `ports` ports. o: table (MAC table size), evict ("port": the
-- LRU entry of the port with the most entries, as OVS; "lru": the LRU entry
-- of all), learn_fps (above it only that share of new addresses is
-- learned), egress_pps (each port forwards that much; the excess is lost,
-- pro rata, or held back at the senders with back_pressure), hol (a port's
-- loss on one egress spreads to everything it sends), hub (never learns),
-- latency_ns, short (every stream sends only that share of its frames:
-- surge's own limit). Returns send(streams, settle) as the scenario's.
local function switch(ports, o)
  local tbl, clock, per_port = {}, 0, {}
  local count = 0
  local function evict()
    local victim, vt
    if o.evict == "lru" then
      for k, e in pairs(tbl) do if not vt or e.t < vt then victim, vt = k, e.t end end
    else
      local most, mp = -1, nil
      for p, n in pairs(per_port) do if n > most then most, mp = n, p end end
      for k, e in pairs(tbl) do if e.port == mp and (not vt or e.t < vt) then victim, vt = k, e.t end end
    end
    per_port[tbl[victim].port] = per_port[tbl[victim].port] - 1
    tbl[victim] = nil
    count = count - 1
  end
  local function learn(k, port)
    clock = clock + 1
    local e = tbl[k]
    if e then
      if e.port ~= port then per_port[e.port] = per_port[e.port] - 1; per_port[port] = (per_port[port] or 0) + 1 end
      e.port, e.t = port, clock
      return
    end
    if count >= o.table then evict() end
    tbl[k] = { port = port, t = clock }
    per_port[port] = (per_port[port] or 0) + 1
    count = count + 1
  end
  return function(streams)
    -- where each frame goes, learning as it passes (streams interleaved frame by frame)
    local out = {}
    local offered = {}       -- egress port -> pps offered to it
    local dests = {}
    for k, s in ipairs(streams) do
      out[k] = { sent = o.short and math.floor(s.count * o.short) or s.count, planned = s.count, seconds = s.rate and s.count / s.rate or s.count / 1e5,
                 rx = {}, lat_n = 0 }
      for i = 1, ports do out[k].rx[i] = 0 end
      dests[k] = {}
    end
    local frac = {}
    for k, s in ipairs(streams) do frac[k] = (o.learn_fps and s.rate and s.rate > o.learn_fps) and o.learn_fps / s.rate or 1 end
    local most = 0
    for _, s in ipairs(streams) do most = math.max(most, s.count) end
    for j = 0, most - 1 do
      for k, s in ipairs(streams) do
        if j < out[k].sent then
          local src = key(s.src.hi, s.src.lo + j % (s.src.n or 1))
          local dst = key(s.dst.hi, s.dst.lo + j % (s.dst.n or 1))
          if not o.hub and (tbl[src] or math.floor((j + 1) * frac[k]) > math.floor(j * frac[k])) then
            learn(src, s.tx)
          end
          local e = not o.hub and dst ~= key(logic.BCAST_HI, logic.BCAST_LO) and tbl[dst]
          if e then
            if e.port ~= s.tx then out[k].rx[e.port] = out[k].rx[e.port] + 1; dests[k][e.port] = true end
          else
            for i = 1, ports do
              if i ~= s.tx then out[k].rx[i] = out[k].rx[i] + 1; dests[k][i] = true end
            end
          end
        end
      end
    end
    -- the egress limit: frames per port beyond egress_pps x duration are lost
    if o.egress_pps then
      for k, s in ipairs(streams) do
        for i in pairs(dests[k]) do offered[i] = (offered[i] or 0) + (s.rate or 1e5) end
      end
      local worst = {}
      for k, s in ipairs(streams) do
        for i in pairs(dests[k]) do
          local keep = math.min(1, o.egress_pps / offered[i])
          if o.back_pressure then
            if keep < 1 then out[k].sent = math.floor(s.count * keep) end
            out[k].rx[i] = math.min(out[k].rx[i], out[k].sent)
          else
            local lost = out[k].rx[i] - math.floor(out[k].rx[i] * keep)
            out[k].rx[i] = out[k].rx[i] - lost
            worst[s.tx] = math.max(worst[s.tx] or 0, 1 - keep)
          end
        end
      end
      if o.hol then
        for k, s in ipairs(streams) do
          for i in pairs(dests[k]) do
            out[k].rx[i] = math.min(out[k].rx[i], math.floor(s.count * (1 - (worst[s.tx] or 0))))
          end
        end
      end
    end
    for k in ipairs(streams) do
      local n = 0
      for _, v in ipairs(out[k].rx) do n = n + v end
      if n > 0 then
        local l = o.latency_ns or 10000
        out[k].lat_n, out[k].lat_min_ns, out[k].lat_max_ns, out[k].lat_sum_ns = n, l, l, l * n
      end
    end
    local secs = 0
    for _, s in ipairs(out) do secs = math.max(secs, s.seconds) end
    return { streams = out, other = {}, seconds = secs }
  end
end

local function learn_opts(send, extra)
  local o = { send = send, settle = 0, ports = { learning = 1, test = 2 }, fresh = logic.allocator(),
              learn_rate = 1000, test_rate = 1000, max_trials = 30 }
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

-- The caching capacity is the table's size, found by binary search, for
-- two sizes and both eviction policies; the test port's entry counts.
function T.caching_capacity_is_the_table_size()
  for _, size in ipairs({ 500, 300 }) do
    for _, evict in ipairs({ "port", "lru" }) do
      local c = logic.caching(learn_opts(switch(3, { table = size, evict = evict }), { lo = 1, hi = 4096 }))
      assert(c.capacity == size, ("table %d (%s eviction): capacity %s"):format(size, evict, tostring(c.capacity)))
      assert(c.learned_addresses == size - 1 and not c.at_top and c.converged, "learned = capacity - the test port's")
      assert(#c.trials <= 14, "binary search: " .. #c.trials .. " trials")
      -- the trial at size - 1 passed and the one at size failed (no plateau between)
      local seen = {}
      for _, t in ipairs(c.trials) do seen[t.value] = t.pass end
      assert(seen[size] == false and c.trials[1].extra.flooded == 4096 - (size - 1),
        "at 4096 addresses all but the table's were flooded: " .. c.trials[1].extra.flooded)
    end
  end
end

-- A table larger than the search's top: the top passes and says so.
function T.caching_at_top()
  local c = logic.caching(learn_opts(switch(3, { table = 10000 }), { lo = 1, hi = 2000 }))
  assert(c.at_top and c.learned_addresses == 2000 and c.capacity == 2001 and #c.trials == 1, "at top")
end

-- A learning trial surge sent short of fails flagged, never passes for the switch.
function T.caching_short_sender_flagged()
  local c = logic.caching(learn_opts(switch(3, { table = 500, short = 0.5 }), { lo = 1, hi = 64 }))
  assert(c.sender_limited and c.learned_addresses == nil, "short trials: flagged, nothing credited")
  assert(c.trials[1].extra.learning_sent == 32, "learning frames counted: " .. c.trials[1].extra.learning_sent)
  -- every learning and test frame must leave (a late core catches up, never cuts them)
  local sim, sends = switch(3, { table = 500 }), 0
  c = logic.caching(learn_opts(function(streams, settle)
    for _, s in ipairs(streams) do assert(s.whole == true, "a caching stream that may end short") end
    sends = sends + 1
    return sim(streams, settle)
  end, { lo = 1, hi = 64 }))
  assert(not c.sender_limited and sends == 3 * #c.trials, "whole trials: not flagged")
end

-- A hub floods every frame: no address is ever cached.
function T.caching_hub_caches_nothing()
  local c = logic.caching(learn_opts(switch(3, { table = 500, hub = true }), { lo = 1, hi = 64 }))
  assert(c.capacity == nil and c.learned_addresses == nil and #c.trials == 2, "hub: nothing learned")
end

-- Each trial learns addresses no earlier trial used.
function T.fresh_addresses_per_trial()
  local seen, ranges = {}, 0
  local f = logic.allocator()
  for n = 1, 50 do
    local r = f(n * 7)
    for a = r.lo, r.lo + r.n - 1 do assert(not seen[a], "address reused") seen[a] = true end
    assert(r.hi == logic.LEARN_HI, "learning addresses apart from the ports'")
    ranges = ranges + 1
  end
  assert(ranges == 50)
  -- a run starts where it is told (the scenario: from the TSC), and a range never passes 2^32
  f = logic.allocator(2 ^ 32 - 10)
  local a, b = f(8), f(8)
  assert(a.lo == 2 ^ 32 - 10 and b.lo == 0 and b.n == 8, "starts at first, wraps before 2^32")
end

-- The learning rate found is the switch's, within the resolution.
function T.learning_rate_is_the_limit()
  for _, limit in ipairs({ 3000, 7500 }) do
    local l = logic.learning(learn_opts(switch(3, { table = 100000, learn_fps = limit }),
      { addresses = 400, lo = 100, hi = 10000, resolution = 50 }))
    assert(l.learning_rate_fps and l.learning_rate_fps <= limit and l.learning_rate_fps > limit - 50,
      ("limit %d: found %s"):format(limit, tostring(l.learning_rate_fps)))
  end
  local l = logic.learning(learn_opts(switch(3, { table = 100000, learn_fps = 1e9 }),
    { addresses = 400, lo = 100, hi = 10000, resolution = 50 }))
  assert(l.at_top and l.learning_rate_fps == 10000, "a switch that learns at any rate: the top")
end

local function fwd(send, nports, pattern, rate)
  return logic.forwarding{ send = send, settle = 0, nports = nports, pattern = pattern, rate = rate, duration = 1,
                           macs = 4, min_rate = rate / 100, resolution = rate / 200, max_trials = 30 }
end

-- Forwarding: every pattern's streams; throughput and forwarding rate at
-- the egress limit; frames arrive on the right port only.
function T.forwarding_patterns_and_rates()
  assert(#logic.mesh(4, "full") == 12 and #logic.mesh(4, "partial") == 8 and #logic.mesh(4, "unidirectional") == 4,
    "stream counts")
  for _, p in ipairs(logic.mesh(4, "partial")) do assert((p.from <= 2) ~= (p.to <= 2), "partial: across halves") end
  -- each port receives what each sends (rate per port): egress 8000 makes 8000 per port the throughput
  for _, pattern in ipairs({ "full", "partial" }) do
    local f = fwd(switch(4, { table = 1000, egress_pps = 8000 }), 4, pattern, 10000)
    assert(f.throughput_pps <= 8000 and f.throughput_pps > 8000 - 50, pattern .. ": throughput " .. f.throughput_pps)
    assert(math.abs(f.forwarding_rate_fps - 4 * 8000) <= 32, pattern .. ": forwarding rate " .. f.forwarding_rate_fps)
    assert(f.at_max.misdirected == 0 and f.throughput_fps == f.throughput_pps * 4, "nothing misdirected")
  end
  -- unidirectional: 2 senders, each receiver offered the rate of one port
  local f = fwd(switch(4, { table = 1000, egress_pps = 8000 }), 4, "unidirectional", 6000)
  assert(f.at_top and f.throughput_fps == 12000 and f.forwarding_rate_fps == 12000, "unidirectional under the limit")
  assert(not f.sender_limited, "surge offered every frame")
  f = fwd(switch(4, { table = 1000, short = 0.9 }), 4, "full", 6000)
  assert(f.sender_limited and f.at_max.sender_limited, "a trial surge sent short of is flagged")
  local b = logic.broadcast{ send = switch(3, { table = 100, short = 0.9 }), settle = 0, nports = 3, rate = 1000,
                             duration = 1 }
  assert(b.sender_limited and b.lost == 0, "broadcast: short, flagged, nothing lost of what left")
  -- a hub delivers every frame, but also to ports it was not for
  local h = fwd(switch(3, { table = 1000, hub = true }), 3, "full", 1000)
  assert(h.throughput_pps == nil and h.at_max.misdirected == h.at_max.sent, "hub: every frame misdirected once")
end

function T.broadcast_rate_and_latency()
  local b = logic.broadcast{ send = switch(4, { table = 100, latency_ns = 7000 }), settle = 0, nports = 4,
                             rate = 2000, duration = 0.5 }
  assert(b.sent == 1000 and b.received == 3000 and b.lost == 0 and b.receivers == 3, "every other port, every frame")
  assert(b.forwarding_rate_fps == 6000 and b.forwarding_rate_per_port_fps == 2000, "rate")
  assert(b.latency_avg_us == 7 and b.latency_max_us == 7, "latency")
  b = logic.broadcast{ send = switch(3, { table = 100, egress_pps = 1500 }), settle = 0, nports = 3, rate = 2000,
                       duration = 1 }
  assert(b.lost == 1000 and b.forwarding_rate_fps == 3000, "egress limit: " .. b.lost)
end

function T.congestion_hol_and_back_pressure()
  local o = { settle = 0, nports = 4, rate = 5000, duration = 1 }
  o.send = switch(4, { table = 100, egress_pps = 6000 })
  local c = logic.congestion(o)
  assert(c.congested_lost > 0 and c.uncongested_lost == 0 and not c.hol_blocking and c.back_pressure == false,
    "a drop-tail switch: loss on the congested port only")
  assert(c.offered_congested_pps == 7500 and c.congested, "150 % offered")
  o.send = switch(4, { table = 100, egress_pps = 6000, hol = true })
  c = logic.congestion(o)
  assert(c.hol_blocking and c.uncongested_lost > 0, "head-of-line blocking seen on the uncongested stream")
  o.send = switch(4, { table = 100, egress_pps = 6000, back_pressure = true })
  c = logic.congestion(o)
  assert(c.congested_lost == 0 and c.back_pressure == true, "back pressure: senders held, nothing lost")
  o.send = switch(4, { table = 100 })
  c = logic.congestion(o)
  assert(c.back_pressure == nil and not c.congested and not c.sender_limited, "not congested: back pressure unknown")
  -- surge short of its offer on every stream: not the switch's back pressure
  o.send = switch(4, { table = 100, short = 0.5 })
  c = logic.congestion(o)
  assert(c.back_pressure == nil and c.sender_limited, "surge's own limit: back pressure unknown, flagged")
  o.line_pps = 6000
  c = logic.congestion(o)
  assert(c.back_pressure == nil, "over the line rate on paper, but surge fell short: still unknown")
  -- and head-of-line blocking too: surge sent a share of the offer, the
  -- uncongested stream's loss is no verdict on the switch (issue 31 item 9)
  o.line_pps = nil
  o.send = switch(4, { table = 100, egress_pps = 6000, hol = true, short = 0.09 })
  c = logic.congestion(o)
  assert(c.hol_blocking == nil and c.sender_limited and c.sent < c.planned, "surge short: head-of-line blocking unknown")
  -- port 2's stream alone short, port 1's whole (ring ports, surge's CPU):
  -- surge's shortfall, not the switch holding port 2 back (issue 31 item 9)
  o.line_pps = nil
  o.send = switch(4, { table = 100 })
  local send = o.send
  o.send = function(streams, settle)
    local r = send(streams, settle)
    if #streams == 3 then r.streams[3].sent = math.floor(r.streams[3].sent * 0.6) end   -- the trial, not the learning
    return r
  end
  c = logic.congestion(o)
  assert(c.sender_limited and c.hol_blocking == nil and c.back_pressure == nil,
    "port 2 short alone: flagged, no verdict on head-of-line blocking or back pressure")
end

function T.forward_pressure()
  local o = { settle = 0, nports = 2, rate = 8000, duration = 1, line_pps = 8000 }
  o.send = switch(2, { table = 10, egress_pps = 8000 })
  local p = logic.pressure(o)
  assert(p.forward_pressure == false and math.abs(p.max_forwarding_rate_fps - 8000) < 1 and #p.steps == 5,
    "at line rate: no forward pressure " .. p.max_forwarding_rate_fps)
  o.send = switch(2, { table = 10, egress_pps = 9000 })
  p = logic.pressure(o)
  assert(p.forward_pressure == true and p.max_forwarding_rate_fps > 8000, "faster than the line: forward pressure")
  o.line_pps = nil
  p = logic.pressure(o)
  assert(p.forward_pressure == nil, "no line rate: unknown")
end

-- Bad input, refused by the scenario's plan (what its parser checks before EAL).
function T.plan_refusals()
  local p = require("surge.scenario").parser("rfc2889", scn)
  local function parse(argv) return p:parse(argv) end
  errors("rfc2889: --ports: test 'caching' needs 3 ports, 2 given", parse, { "--ports", "0,1", "--tests", "caching" })
  errors("rfc2889: --ports: test 'congestion' needs 4 ports, 3 given", parse, { "--tests", "congestion" })
  errors("rfc2889: --tests: unknown test 'flood'", parse, { "--tests", "caching,flood" })
  errors("rfc2889: --ports: 1 port given", parse, { "--ports", "0" })
  errors("rfc2889: --ports: port 1 given twice", parse, { "--ports", "0,1,1" })
  errors("rfc2889: --pattern: unknown pattern 'star'", parse, { "--pattern", "star" })
  errors("rfc2889: --min-addresses: 10 is above --max-addresses 5", parse, { "--min-addresses", "10",
    "--max-addresses", "5" })
  errors("rfc2889: --sizes: 60 is below 64", parse, { "--sizes", "60" })
  local ok = parse({ "--ports", "0,1,2" })
  assert(table.concat(scn.plan(ok).tests, ",") == "forwarding,caching,learning,broadcast,pressure",
    "default: every test the ports allow")
end

-- A switch that floods or loses a few frames for another reason than its
-- table (Open vSwitch under load: 875 and 997 for a table of 1000): a
-- trial failing below the addresses the switch already held is tried
-- again, not taken as the table's size; one that fails every time is
-- counted, flagged (issue 31 item 9).
function T.caching_failure_not_the_table_retried()
  local size = 300
  -- bad[n]: how many tries at n addresses (288: one the search tries) flood 3 test frames (port 3 sees them)
  local function glitchy(bad)
    local sim = switch(3, { table = size })
    return function(streams, settle)
      local r = sim(streams, settle)
      local s = streams[1]
      if s.tx == 2 and s.dst.hi == logic.LEARN_HI and (bad[s.count] or 0) > 0 then
        bad[s.count] = bad[s.count] - 1
        r.streams[1].rx[3] = r.streams[1].rx[3] + 3
      end
      return r
    end
  end
  -- the first try at 288 floods: tried again, the capacity is the table's
  local c = logic.caching(learn_opts(glitchy({ [288] = 1 }), { lo = 1, hi = 4096 }))
  assert(c.capacity == size, "capacity " .. tostring(c.capacity) .. " for a table of " .. size)
  assert(c.retried == 1 and #c.unexplained == 0 and c.held_addresses == size,
    ("retried %d, unexplained %d, held %d"):format(c.retried, #c.unexplained, c.held_addresses))
  -- every try at 288 floods: counted as failing, but flagged
  c = logic.caching(learn_opts(glitchy({ [288] = 100 }), { lo = 1, hi = 4096 }))
  assert(c.capacity == 288 and c.retried == 2 and #c.unexplained == 1 and c.unexplained[1].addresses == 288
    and c.unexplained[1].held == size, "every try failed: flagged, capacity " .. tostring(c.capacity))
end

return T
