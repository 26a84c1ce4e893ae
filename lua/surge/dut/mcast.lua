-- mcast.lua - the task side of the rfc3918 scenario: one timeline of
-- membership reports and multicast (and unicast) test traffic, run on one
-- worker lcore, with every receiving port counted per group and the time
-- of each group's first and last frame there. Launched as a module task
-- ("surge.dut.mcast:run") from scenario/rfc3918/, which builds the
-- plain-data spec and reads the delays and verdicts from what it returns
-- (scenario/rfc3918/logic.lua).
--
-- Each flow is one destination (a group, or a unicast address): a frame
-- per flow is prepared (its UDP source port is SPORT0 + the flow, the key
-- surge.dut.counters counts by), and the sender sends them in turn at the
-- rate, so every group gets rate / flows frames a second. The receivers
-- poll after every round, as surge.dut.trial does, so a frame is stamped
-- within one round of its arrival.
local ffi = require("ffi")
local surge = require("surge")
local view = require("surge.proto.view")
local neigh = require("surge.dut.neigh")
local counters = require("surge.dut.counters")
local frames = require("surge.dut.frames")
local trial = require("surge.dut.trial")

local M = {}

-- spec: ifaces (1: the sender; 2..: the receivers; each { rxq, txq, mac,
-- ip4/ip6 (answered by ARP/NDP), port (its number, for messages) }), ctrl_pool, pool (mbufs
-- of the test frames' size), frames (a string per flow, all of one size),
-- l4 (the UDP header's offset), sport0, dport, rate (pps), traffic = { from,
-- to } (seconds from the start), actions = { { at (s), iface, frames =
-- { strings } } } (sorted by at), settle (s after the last send or action),
-- what, hosts (optional, { [iface] = a surge.hosts table on that port }:
-- each takes its frames, the querier's queries, from what the iface
-- receives before it is counted, and is turned every round; an action may
-- then be { at, iface, run = a function } instead of frames: the hosts'
-- joins and leaves, on the lcore that owns the tables). Returns { sent =
-- { per flow }, actions = { ns each one's last report left } , ports = { [iface - 1] = { received = { per flow }, first_ns,
-- last_ns = { per flow, nil: none }, duplicated, other } }, seconds, total
-- (frames sent), planned (frames the schedule had) }.
function M.run(spec)
  surge.idle{ mode = "pause" }
  local nflows = #spec.frames
  local size = #spec.frames[1]
  local buf = ffi.new("uint8_t[?]", nflows * size)
  for f = 1, nflows do ffi.copy(buf + (f - 1) * size, spec.frames[f], size) end
  local ifaces, nif = spec.ifaces, #spec.ifaces
  local responder = neigh.new(ifaces, spec.ctrl_pool)
  local rxb = spec.ctrl_pool:burst(64)
  local v = view.new()
  local recv, first, last = {}, {}, {}
  for i = 2, nif do
    recv[i] = counters.receiver{ flows = nflows, sport0 = spec.sport0, dport = spec.dport }
    first[i], last[i] = ffi.new("double[?]", nflows), ffi.new("double[?]", nflows)
  end
  local other = ffi.new("double[?]", nif + 1)
  local hz = surge.tsc_hz()
  local t0 = tonumber(surge.tsc())
  local sport0 = spec.sport0
  local hosts, hif, ht = spec.hosts or {}, {}, {}   -- hif[j], ht[j]: a numeric loop each round (pairs is not compiled)
  for i = 2, nif do if hosts[i] then hif[#hif + 1], ht[#ht + 1] = i, hosts[i] end end
  local htx, hnone = spec.ctrl_pool:burst(64), spec.ctrl_pool:burst(1)
  local function count(i, n, b)
    local at = tonumber(b.tsc) - t0 + 1        -- + 1: 0 stays "nothing yet"
    if hosts[i] then n = hosts[i]:take(ifaces[i].txq, b, htx) end
    local data, lens = b.data, b.len
    local cnt, fst, lst = recv[i], first[i], last[i]
    for k = 0, n - 1 do
      local p, len = data[k], lens[k]
      if view.parse(v, p, len) then
        if cnt and cnt:count(p, v) then
          local f = p[v.l4] * 256 + p[v.l4 + 1] - sport0
          if fst[f] == 0 then fst[f] = at end
          lst[f] = at
        elseif not responder:handle(i, p, len, v) then
          other[i] = other[i] + 1
        end
      end
    end
  end
  local function poll()
    local seen = trial.recv_each(ifaces, rxb, count)
    for j = 1, #ht do ht[j]:take(ifaces[hif[j]].txq, hnone, htx) end   -- the tables' timers: reports, answers
    return seen
  end
  -- the timeline
  local txq = ifaces[1].txq
  txq:set_rate(nil)
  local burst = spec.pool:burst(8)
  local tag = counters.tagger{ l4 = spec.l4, flows = nflows, sport0 = sport0 }
  local gap = hz / spec.rate
  local from, to = t0 + spec.traffic[1] * hz, t0 + spec.traffic[2] * hz
  local planned = frames.planned(spec.rate, spec.traffic[2] - spec.traffic[1], 0)
  local total = planned
  local actions, next_action, done_at = spec.actions or {}, 1, {}
  local cb = spec.ctrl_pool:burst(1)
  -- a report must leave (its time is the join's or the leave's): a send
  -- the driver refuses frees the frame, so each try allocates it afresh
  local function send_report(q, fr)
    for _ = 1, 10000 do
      if cb:alloc(1) == 1 then
        ffi.copy(cb.data[0], fr, #fr)
        cb.len[0] = #fr
        if q:send(cb) == 1 then return true end
      end
      if not surge.running() then return false end
      poll()
    end
    return false
  end
  local sent = 0
  local ends = math.max(to, t0 + ((actions[#actions] or {}).at or 0) * hz)
  local late_end = to + 0.01 * hz
  while surge.running() do
    local now = tonumber(surge.tsc())
    -- reports due: sent whole, each action's frames back to back
    while next_action <= #actions and now >= t0 + actions[next_action].at * hz do
      local a = actions[next_action]
      local q = ifaces[a.iface].txq
      if a.run then   -- the joins' or leaves' first reports sent now, their time taken before anything is received
        a.run()
        for j = 1, #ht do ht[j]:take(ifaces[hif[j]].txq, hnone, htx) end
      end
      for _, fr in ipairs(a.frames or {}) do
        if not send_report(q, fr) then
          if not surge.running() then break end
          error(("%s: port %d could not send a membership report"):format(spec.what, ifaces[a.iface].port), 0)
        end
      end
      done_at[next_action] = (tonumber(surge.tsc()) - t0) * 1e9 / hz
      next_action = next_action + 1
    end
    if now >= from and sent < total then
      -- frames a late round (a preempted core) left are sent up to 10 ms
      -- past the end, as surge.dut.trial does; the rest not at all (the
      -- counts say what was sent), and the timeline goes on to its reports
      if now >= late_end then total = sent end
      local due = math.min(total - sent, math.floor((now - from) / gap) + 1 - sent)
      if due > 0 then
        local n = burst:alloc(due < burst.cap and due or burst.cap)
        if n > 0 then
          local f, data = tag.next, burst.data
          for i = 0, n - 1 do
            ffi.copy(data[i], buf + f * size, size)
            f = f + 1
            if f == nflows then f = 0 end
          end
          tag:tag(burst)
          tag:sent(txq:send(burst))
          sent = tag.total
        end
      end
    elseif now >= ends and next_action > #actions then
      break
    end
    poll()
  end
  burst:free()
  trial.settle(poll, tonumber(surge.tsc()) + (spec.settle or 0.1) * hz, 0.0001)
  rxb:free()
  htx:free()
  local ns = 1e9 / hz
  local res = { sent = {}, actions = done_at, ports = {}, seconds = (tonumber(surge.tsc()) - t0) / hz, total = sent,
                planned = planned }
  for f = 0, nflows - 1 do res.sent[f + 1] = tag.tx[f] end
  for i = 2, nif do
    local p = { received = {}, first_ns = {}, last_ns = {}, duplicated = recv[i].duplicated, other = other[i] }
    for f = 0, nflows - 1 do
      p.received[f + 1] = (recv[i]:flow(f))   -- unique frames (C counts into per_flow)
      if first[i][f] > 0 then
        p.first_ns[f + 1], p.last_ns[f + 1] = (first[i][f] - 1) * ns, (last[i][f] - 1) * ns
      end
    end
    res.ports[i - 1] = p
  end
  return res
end

return M
