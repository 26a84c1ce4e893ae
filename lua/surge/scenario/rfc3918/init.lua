-- scenario/rfc3918/init.lua - the scenario `rfc3918` (RFC 3918, multicast benchmarking):
-- surge's receiving ports join and leave groups with real IGMPv2/v3 or
-- MLDv2 reports while port --tx sends to the groups; per group and port it
-- measures the join delay, the leave delay, the group capacity, the
-- aggregated multicast throughput and the throughput of mixed unicast and
-- multicast traffic.
--
--   surge run rfc3918 --tx 0 --rx 1,2 --members 1 --groups 239.1.1.1/16 --tests join,leave,capacity
--
-- The logic (group lists, reports, verdicts, delays, the capacity search) is
-- scenario/rfc3918/logic.lua's; the timeline of reports and traffic runs as the task
-- surge.dut.mcast:run.
local mcast = require("surge.scenario.rfc3918.logic")
local igmp = require("surge.proto.igmp")
local fmt_rate = require("surge.rate").format_pps
local dut = require("surge.dut")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")
local json = require("surge.results.json")
local mhosts = require("surge.scenario.rfc3918.members")
local mcast_task = require("surge.dut.mcast")
local scenario = require("surge.scenario")
local search = require("surge.scenario.kit.search")
local surge = require("surge")

local M = { name = "rfc3918",
  description = "RFC 3918 multicast: join/leave delay, group capacity, aggregated and mixed throughput" }

local TESTS = { "join", "leave", "throughput", "mixed", "capacity" }   -- the order they run in
local SPORT0, DPORT, FCS = 1024, 3842, 4

function M.options(p)
  p:option("--tx", "port that sends to the groups (number)", "0")
  p:option("--rx", "ports that receive, comma-separated (numbers)", "1")
  p:option("--members", "the --rx ports that join the groups (default: all; the others must receive nothing)", "")
  p:option("--groups", "groups ADDR/N (N consecutive groups from ADDR), comma-separated, IPv4 or IPv6",
    "239.1.1.1/16")
  p:option("--igmp", "IGMP version of IPv4 reports: v2 or v3 (IPv6 groups: MLDv2)", "v3")
  p:option("--tests", "join,leave,throughput,mixed,capacity (any of them; capacity runs last)", "join,leave")
  p:option("--size", "frame size with FCS (0: the smallest, 64 bytes, 68 for IPv6)", 0, "integer 0..9018")
  p:option("--rate", "offered rate to all groups together (pps, 10kpps, 1mpps)", "10kpps")
  p:option("--trial", "seconds of traffic per trial", 0.5, "number 0.01..3600")
  p:option("--join-wait", "seconds between the joins and the traffic that is counted", 0.1, "number 0..60")
  p:option("--settle", "seconds to keep receiving after a trial", 0.1, "number 0..60")
  p:option("--src", "the sender's address (default 10.0.0.2, or 2001:db8::2 for IPv6 groups)", "")
  p:option("--member-addr", "IPv4 source of member k's reports: this address + k - 1 (IPv6: link-local)",
    "10.0.1.1")
  p:option("--capacity-start", "groups of the capacity test's first step", 1, "integer 1..4096")
  p:option("--capacity-step", "groups each capacity step adds", 1, "integer 1..4096")
  p:option("--max-rate", "throughput tests: the highest rate tried (pps, 1mpps)", "100kpps")
  p:option("--resolution", "throughput tests: stop when the bracket is narrower than this % of --max-rate",
    1, "number 0.01..100")
  p:option("--tolerance", "throughput tests: loss % a passing trial may have", 0, "number 0..100")
  p:option("--link-timeout", "seconds to wait for link up", 2, "number 0..3600")
  mhosts.options(p)
  -- everything but the ports' existence is refused when parsed, before EAL
  scenario.parse_check(p, M.plan)
end

local refuse = scenario.refuse

local function port_list(v, option)
  return scenario.items(v, option, { what = "port", unique = true, expected = "port numbers (\"1,2\")",
    parse = function(w)
      local n = scenario.finite(w)
      if not n or n ~= math.floor(n) or n < 0 then refuse(option, "'%s' is not a port number", tostring(w)) end
      return n
    end })
end

local function rate_option(v, option)
  local r = scenario.pps(v, 64, 0, option)
  return r
end

-- The run's plan from its options, each checked (no port needed): what
-- the parser's check refuses before EAL and run() uses.
function M.plan(o)
  local tests, want = {}, {}
  for _, t in ipairs(scenario.items(o.tests, "--tests", { what = "test", unique = true })) do
    local known = false
    for _, k in ipairs(TESTS) do known = known or k == t end
    if not known then refuse("--tests", "no test '%s' (%s)", t, table.concat(TESTS, ", ")) end
    want[t] = true
  end
  for _, t in ipairs(TESTS) do if want[t] then tests[#tests + 1] = t end end
  if #tests == 0 then refuse("--tests", "no test given (%s)", table.concat(TESTS, ", ")) end
  local groups = mcast.groups(o.groups, "--groups", refuse)
  local version = groups.v6 and "mld2" or o.igmp
  if o.igmp ~= "v2" and o.igmp ~= "v3" then
    refuse("--igmp", "'%s' is not an IGMP version: v2 or v3", tostring(o.igmp))
  end
  if groups.v6 and o.igmp == "v2" then refuse("--igmp", "v2 is IGMP (IPv4): IPv6 groups join with MLDv2") end
  local tx = scenario.port_number(o.tx, "--tx")
  local rx = port_list(o.rx, "--rx")
  if #rx == 0 then refuse("--rx", "no receiving port given: rfc3918 needs --tx and at least one --rx port") end
  for _, p in ipairs(rx) do
    if p == tx then refuse("--rx", "port %d is the sender (--tx %d): a receiver must be another port", p, tx) end
  end
  local members, obs = {}, {}
  local m = o.members ~= "" and port_list(o.members, "--members") or rx
  local is_member = {}
  for _, p in ipairs(m) do
    local at
    for k, q in ipairs(rx) do if q == p then at = k end end
    if not at then refuse("--members", "port %d is not one of --rx %s", p, tostring(o.rx)) end
    members[#members + 1], is_member[at] = at, true
  end
  if #members == 0 then refuse("--members", "no member port: the tests need a port that joins the groups") end
  for k in ipairs(rx) do if not is_member[k] then obs[#obs + 1] = k end end
  if want.capacity and #obs == 0 then
    refuse("--rx", "the capacity test needs a port that joins no group, to see a DUT that floods "
      .. "(e.g. --rx 1,2 --members 1): a full table may flood every group to every port")
  end
  local src = o.src ~= "" and o.src or (groups.v6 and "2001:db8::2" or "10.0.0.2")
  if (src:find(":", 1, true) ~= nil) ~= groups.v6 then
    refuse("--src", "%s is not of the groups' family (%s)", src, groups.v6 and "IPv6" or "IPv4")
  end
  local parse = groups.v6 and ip6.parse or function(a)
    return (pcall(ip4.addr, a, "src", 1)) end
  if not parse(src) then refuse("--src", "'%s' is not an %s address", src, groups.v6 and "IPv6" or "IPv4") end
  local ok, base = pcall(ip4.addr, o.member_addr, "member", 1)
  if not ok or igmp.is_multicast(base) then
    refuse("--member-addr", "'%s' is not a unicast IPv4 address", tostring(o.member_addr))
  end
  -- member k's reports come from base + k - 1, the member hosts' from base +
  -- (j - 1) x M + i: the last of them a unicast address too, not a wrapped one
  local naddr = math.max(#rx, (o.member_hosts or 0) * #members)
  local last = base + naddr - 1
  if last > 0xfffffffe or (base < 0xe0000000 and last >= 0xe0000000) then
    refuse("--member-addr", "%d addresses from %s (--rx ports' and --member-hosts') run into %s", naddr,
      tostring(o.member_addr), last > 0xfffffffe and "255.255.255.255" or "the multicast range 224.0.0.0/4")
  end
  local min = groups.v6 and 68 or 64     -- the headers, UDP and the 2-byte sequence number, with FCS
  local size = o.size == 0 and min or o.size
  if size < min then
    refuse("--size", "%d is below %d, the smallest %s frame that holds the headers and a sequence number", size, min,
      groups.v6 and "IPv6" or "IPv4")
  end
  local r = rate_option(o.rate, "--rate")
  scenario.check_frames(r / #groups.list, o.trial, "--rate over the " .. #groups.list .. " groups",
    "--trial")
  local hi = rate_option(o.max_rate, "--max-rate")
  if want.throughput or want.mixed then     -- the search's lowest step still sends every group a frame
    scenario.check_frames(hi * o.resolution / 100 / #groups.list, o.trial,
      ("--resolution %g %% of --max-rate over the %d groups"):format(o.resolution, #groups.list), "--trial")
  end
  if o.capacity_start > #groups.list then
    refuse("--capacity-start", "%d is more than the %d groups of --groups", o.capacity_start, #groups.list)
  end
  local plan = { tests = tests, want = want, groups = groups, version = version, tx = tx, rx = rx, members = members,
                 observers = obs, src = src, size = size, member_base = base, rate = r, max_rate = hi }
  plan.hosts = mhosts.plan(o, plan, refuse)   -- --member-hosts (members.lua)
  return plan
end

local ctrl_pool
local pools = {}

-- The pool of the test frames of one size, made once (by the master).
local function frames_pool(size, frame)
  if not pools[size] then pools[size] = surge.pool{ template = frame, size = 2047 } end
  return pools[size]
end

-- One timeline on the task: frames (a string per flow), traffic = { from,
-- to } (s), actions, rate. Returns the task's counts.
local function timeline(env, t)
  local size = #t.frames[1]
  -- (members_task.lua's task takes the master's pool: a pool a task makes
  -- is its lcore's, and a loopback port frees on another)
  local spec = { ifaces = env.ifaces, ctrl_pool = env.ctrl_pool, pool = env.pool or frames_pool(size, t.frames[1]),
    frames = t.frames, l4 = env.l4, sport0 = SPORT0, dport = DPORT, rate = t.rate, traffic = t.traffic,
    actions = t.actions, settle = env.opts.settle, what = t.what }
  local ok, r
  if env.hosts then   -- on this lcore, members_task.lua's, which owns the member hosts' tables
    spec.hosts = mhosts.spec(env)
    ok, r = pcall(mcast_task.run, spec)
    if ok then mhosts.settle(env, env.ctrl_pool, 5) end
  else
    ok, r = pcall(surge.wait, surge.launch("surge.dut.mcast:run", spec))
  end
  if not surge.running() then error(dut.STOPPED_DURING .. t.what, 0) end
  if not ok then error(dut.reason(r), 0) end
  return r
end

-- The actions of members joining (join = true) or leaving groups[from..to]
-- at time `at`, one report each; index[action] = { port, first, last }.
local function membership(env, at, from, to, join, actions, index)
  if env.hosts then return mhosts.actions(env, at, from, to, join, actions, index) end
  for _, k in ipairs(env.plan.members) do
    for _, rep in ipairs(mcast.reports(env.plan.version, env.member[k], env.plan.groups.list, from, to, join)) do
      actions[#actions + 1] = { at = at, iface = k + 1, frames = { rep.bytes } }
      if index then index[#actions] = { port = k, first = rep.first, last = rep.last } end
    end
  end
  return actions
end

-- Members leave groups[from..to] (between tests: the next one starts with
-- none joined).
local function leave(env, from, to)
  if to < from then return end
  timeline(env, { frames = env.frames, rate = 1, traffic = { 0, 0 }, actions = membership(env, 0, from, to, false, {}),
                  what = "the leaves" })
end

-- Per member port, the time (ns) each group's report left.
local function report_times(r, index)
  local at = {}
  for a, ix in pairs(index) do
    at[ix.port] = at[ix.port] or {}
    for g = ix.first, ix.last do at[ix.port][g] = r.actions[a] end
  end
  return at
end

local function leaked(r, env, n)
  local x = 0
  for _, k in ipairs(env.plan.observers) do
    for g = 1, n do x = x + (r.ports[k].received[g] or 0) end
  end
  return x
end

-- A delay test's row for member k: the mean, min and max over the groups,
-- and each group's own delay (per_group: the groups measured).
local function delay_row(test, env, k, d, n)
  local per = json.array()
  for g = 1, n do
    if d.per[g] then per[#per + 1] = { group = env.plan.groups.list[g].text, delay_us = d.per[g] } end
  end
  return { test = test, port = env.plan.rx[k], groups = n, measured = d.n, missing = d.missing, early = d.early,
           [test .. "_us"] = d.mean_us, [test .. "_min_us"] = d.min_us, [test .. "_max_us"] = d.max_us,
           resolution_us = n / env.plan.rate * 1e6, per_group = per }
end

local run_test = {}

-- Join delay (RFC 3918 7.1): traffic to every group first, then each member
-- joins them all; per group, report sent -> the group's first frame there.
function run_test.join(env)
  local o, n = env.opts, #env.plan.groups.list
  local at = o.join_wait
  local index = {}
  local actions = membership(env, at, 1, n, true, {}, index)
  membership(env, at + o.trial + 0.01, 1, n, false, actions)
  local r = timeline(env, { frames = env.frames, rate = env.plan.rate, traffic = { 0, at + o.trial }, actions = actions,
                            what = "the join delay trial" })
  local times = report_times(r, index)
  local rows = {}
  for _, k in ipairs(env.plan.members) do
    local d = mcast.delays(times[k], r.ports[k].first_ns, 1, n, false)
    rows[#rows + 1] = delay_row("join_delay", env, k, d, n)
    rows[#rows].leaked = leaked(r, env, n)
    scenario.progress("  join delay   port %d  %d groups: mean %s us, min %s, max %s%s%s",
      env.plan.rx[k], n, d.mean_us and ("%.1f"):format(d.mean_us) or "-", d.min_us and ("%.1f"):format(d.min_us) or "-",
      d.max_us and ("%.1f"):format(d.max_us) or "-", d.missing > 0 and ("  (%d groups never came)"):format(d.missing) or "",
      d.early > 0 and ("  (%d groups came before the join: the DUT floods)"):format(d.early) or "")
  end
  return rows
end

-- Leave delay (RFC 3918 7.2): members joined, traffic flowing; each leaves
-- every group at mid-trial; per group, leave sent -> the group's last frame.
-- stopped: groups whose frames came, then ended before the traffic did.
function run_test.leave(env)
  local o, n = env.opts, #env.plan.groups.list
  local from, to = o.join_wait, o.join_wait + o.trial
  local leave_at = from + o.trial / 2
  local index = {}
  local actions = membership(env, 0, 1, n, true, {})
  membership(env, leave_at, 1, n, false, actions, index)
  local r = timeline(env, { frames = env.frames, rate = env.plan.rate, traffic = { from, to }, actions = actions,
                            what = "the leave delay trial" })
  local times = report_times(r, index)
  local rows = {}
  local per_group_gap_ns = n / env.plan.rate * 1e9
  for _, k in ipairs(env.plan.members) do
    local d = mcast.delays(times[k], r.ports[k].last_ns, 1, n, true)
    local stopped = 0
    for g = 1, n do
      local last = r.ports[k].last_ns[g]
      if last ~= nil and last < to * 1e9 - 2 * per_group_gap_ns then stopped = stopped + 1 end
    end
    rows[#rows + 1] = delay_row("leave_delay", env, k, d, n)
    rows[#rows].stopped, rows[#rows].leaked = stopped, leaked(r, env, n)
    scenario.progress("  leave delay  port %d  %d groups: mean %s us, min %s, max %s; %d of %d "
      .. "groups stopped", env.plan.rx[k], n, d.mean_us and ("%.1f"):format(d.mean_us) or "-",
      d.min_us and ("%.1f"):format(d.min_us) or "-", d.max_us and ("%.1f"):format(d.max_us) or "-", stopped, n)
  end
  return rows
end

-- Throughput of the groups (and with unicast, the mixed test): a binary
-- search on the offered rate (scenario/kit/search.lua) for the highest whose
-- trial every member received whole (loss <= --tolerance).
local function throughput(env, test, frames, nuni)
  local o, n = env.opts, #env.plan.groups.list
  local last = {}
  local found = search.throughput{ lo = 0, hi = env.plan.max_rate, resolution = env.plan.max_rate * o.resolution / 100,
    tolerance = o.tolerance, max_trials = 30, trial = function(rate)
      local actions = membership(env, 0, 1, n, true, {})
      local r = timeline(env, { frames = frames, rate = rate, traffic = { o.join_wait, o.join_wait + o.trial },
                                actions = actions, what = ("the %s trial at %s"):format(test, fmt_rate(rate)) })
      local expect, got = 0, 0
      for _, k in ipairs(env.plan.members) do
        for g = 1, n do expect, got = expect + r.sent[g], got + math.min(r.sent[g], r.ports[k].received[g]) end
      end
      local stray = 0
      for u = 1, nuni do   -- unicast flow u goes to member u's port only: elsewhere it leaked
        local f, k = n + u, env.plan.members[u]
        expect, got = expect + r.sent[f], got + math.min(r.sent[f], r.ports[k].received[f])
        for q in ipairs(env.plan.rx) do if q ~= k then stray = stray + r.ports[q].received[f] end end
      end
      local loss = expect > 0 and (expect - got) * 100 / expect or 100
      last[rate] = { loss = loss, leaked = leaked(r, env, n) + stray, copies = got, seconds = o.trial, sent = r.total,
                     sender_limited = r.total < r.planned }
      scenario.progress("  %-10s %s  sent %d  member copies %d of %d  loss %.3f %%%s", test,
        fmt_rate(rate), r.total, got, expect, loss, r.total < r.planned
          and ("  (surge sent only %d of %d frames: surge's limit, not the DUT's)"):format(r.total, r.planned) or "")
      return loss
    end }
  leave(env, 1, n)
  local at = last[found.rate] or {}
  return { { test = test, groups = n, unicast_flows = nuni > 0 and nuni or nil, throughput_pps = found.rate,
             forwarded_fps = found.rate > 0 and at.copies and at.copies / o.trial or 0, loss_pct = at.loss,
             leaked = at.leaked, members = #env.plan.members, trials = #found.trials, converged = found.converged,
             sender_limited = at.sender_limited } }
end

-- Aggregated multicast throughput (RFC 3918 5.3): every member joined to
-- every group.
function run_test.throughput(env) return throughput(env, "throughput", env.frames, 0) end

-- Mixed class throughput (RFC 3918 5.2): the groups and one unicast flow to
-- each member, frames shared out one flow after another.
function run_test.mixed(env)
  local frames = {}
  for i, f in ipairs(env.frames) do frames[i] = f end
  for _, k in ipairs(env.plan.members) do frames[#frames + 1] = env.unicast(#frames, k) end
  return throughput(env, "mixed", frames, #env.plan.members)
end

-- Group capacity (RFC 3918 6.1): mcast.capacity's ascending steps, each
-- joining more groups (the earlier ones stay joined) and sending to all
-- joined groups; a step passes when each of its groups is forwarded
-- correctly (mcast.verdict: whole to every member, nothing to an observer).
function run_test.capacity(env)
  local o, n = env.opts, #env.plan.groups.list
  local joined = 0
  local found = mcast.capacity{ start = o.capacity_start, step = o.capacity_step, max = n, trial = function(k)
    local actions = membership(env, 0, joined + 1, k, true, {})
    joined = k
    local frames = {}
    for g = 1, k do frames[g] = env.frames[g] end
    local r = timeline(env, { frames = frames, rate = env.plan.rate, traffic = { o.join_wait, o.join_wait + o.trial },
                              actions = actions, what = ("the capacity step of %d groups"):format(k) })
    local v = mcast.verdict(r, k, env.plan.members, env.plan.observers)
    scenario.progress("  capacity   %4d groups: %d forwarded correctly%s%s", k, v.correct,
      v.lost > 0 and ("  lost %d"):format(v.lost) or "",
      v.leaked > 0 and ("  leaked %d to non-members"):format(v.leaked) or "")
    return v.correct, v
  end }
  leave(env, 1, joined)
  local last = found.steps[#found.steps]
  local row = { test = "capacity", groups = n, capacity = found.capacity, limit_reached = found.limit_reached,
                steps = #found.steps, failed_at = not last.pass and last.groups or nil,
                lost = last.detail.lost, leaked = last.detail.leaked }
  -- the first step flooded: the DUT was not snooping when the test began,
  -- which is no table of 0 groups (the Linux bridge: no querier yet,
  -- snooping left off by an earlier overflow, or its table full of the
  -- host's own IPv6 MLD groups). Unknown, said so, not reported as 0.
  if #found.steps == 1 and not last.pass and last.detail.leaked > 0 then
    row.capacity = nil
    row.warning = ("the first step (%d group%s) already reached the observer: the DUT was not snooping when the test "
      .. "began (no querier yet, snooping off after an earlier overflow, or its table full of other groups, such as "
      .. "the host's own IPv6 groups); capacity unknown"):format(last.groups, last.groups == 1 and "" or "s")
    scenario.progress("  capacity   warning: %s", row.warning)
  end
  return { row }
end

function M.run(opts)
  opts = scenario.defaults(M.name, M, opts)
  local plan = M.plan(opts)
  scenario.port_exists(plan.tx, "--tx")
  for _, p in ipairs(plan.rx) do scenario.port_exists(p, "--rx") end
  if not ctrl_pool then ctrl_pool = surge.pool{ size = 1023 } end
  local v6 = plan.groups.v6
  local tx = dut.open_port(plan.tx, opts.link_timeout)
  local txinfo = tx:info()
  local env = { opts = opts, plan = plan, member = {}, ctrl_pool = ctrl_pool, txmac = txinfo.mac,
                ifaces = { { rxq = tx:rxq(0), txq = tx:txq(0), mac = txinfo.mac, port = plan.tx } } }
  if plan.size - FCS > txinfo.mtu + 14 then
    scenario.refuse("--size", "%d is above the MTU of port %d (%d)", plan.size, plan.tx, txinfo.mtu)
  end
  for k, p in ipairs(plan.rx) do
    local port = dut.open_port(p, opts.link_timeout)
    local info = port:info()
    env.member[k] = { mac = info.mac, ip4 = ip4.addr_text(plan.member_base + k - 1), ip6 = igmp.link_local(info.mac) }
    env.ifaces[k + 1] = { rxq = port:rxq(0), txq = port:txq(0), mac = info.mac, port = p,
                          ip4 = not v6 and env.member[k].ip4 or nil, ip6 = v6 and env.member[k].ip6 or nil }
  end
  M.frames(env)
  scenario.progress("rfc3918: tx port %d -> rx port(s) %s (members %s), %d %s group(s) from %s, %s reports, %s",
    plan.tx, table.concat(plan.rx, ","), (function()
      local l = {}
      for _, k in ipairs(plan.members) do l[#l + 1] = plan.rx[k] end
      return table.concat(l, ",") end)(), #plan.groups.list, v6 and "IPv6" or "IPv4", plan.groups.list[1].text,
    plan.version == "mld2" and "MLDv2" or ("IGMP" .. plan.version), fmt_rate(plan.rate))
  local res = { scenario = M.name, tx = plan.tx, rx = json.array(), members = json.array(), groups = #plan.groups.list,
                first_group = plan.groups.list[1].text, family = v6 and "ipv6" or "ipv4", reports = plan.version,
                rate_pps = plan.rate, frame_size = plan.size, trial_s = opts.trial, rows = json.array() }
  for _, p in ipairs(plan.rx) do res.rx[#res.rx + 1] = p end
  for _, k in ipairs(plan.members) do res.members[#res.members + 1] = plan.rx[k] end
  scenario.partial(res)
  if plan.hosts then
    -- the member hosts' tables belong to the lcore that made them: every
    -- test runs in one task (members_task.lua), which makes them
    local r = dut.task("surge.scenario.rfc3918.members_task:run", { ifaces = env.ifaces, ctrl_pool = ctrl_pool,
      opts = scenario.plain(opts), plan = plan, member = env.member, txmac = txinfo.mac,
      pool = frames_pool(#env.frames[1], env.frames[1]) })
    for _, row in ipairs(r.rows) do res.rows[#res.rows + 1] = row end
    res.member_hosts = r.member_hosts
    for _, h in ipairs(res.member_hosts) do
      scenario.progress("  member hosts port %d: %d hosts, %d queries answered, %d reports, %d leaves sent", h.port,
        h.hosts, h.queries, h.reports, h.leaves)
    end
  else
    scenario.steps(#plan.tests, "rfc3918")
    for _, t in ipairs(plan.tests) do
      for _, row in ipairs(run_test[t](env)) do res.rows[#res.rows + 1] = row end
      scenario.step()
    end
  end
  return scenario.done(M.name, res)
end

-- The test frames of env (its plan, member ports and env.txmac, the
-- sender's MAC): env.frames (a string a group), env.l4, env.unicast(f, k)
-- (flow f to member k). Here and in members_task.lua.
function M.frames(env)
  local plan, v6 = env.plan, env.plan.groups.v6
  local function udp(f, dst_mac, dst)
    return surge.proto.udp{ src_mac = env.txmac, dst_mac = dst_mac, src = plan.src, dst = dst, sport = SPORT0 + f,
                            dport = DPORT, size = plan.size - FCS, ttl = 64 }
  end
  env.frames = {}
  for g, grp in ipairs(plan.groups.list) do
    local t = udp(g - 1, igmp.mac(grp.addr), grp.text)
    env.frames[g], env.l4 = t.bytes, t.l4
  end
  env.unicast = function(f, k)
    return udp(f, env.member[k].mac, v6 and env.member[k].ip6 or env.member[k].ip4).bytes
  end
end

-- The tests, by name: run_test[name](env) -> rows (members_task.lua runs them).
M.run_test = run_test

function M.report(res)
  local us = scenario.us
  local rows = {}
  for _, r in ipairs(res.rows) do
    local figure
    if r.test == "join_delay" then
      figure = ("%s us (min %s, max %s)"):format(us(r.join_delay_us), us(r.join_delay_min_us), us(r.join_delay_max_us))
    elseif r.test == "leave_delay" then
      figure = ("%s us (min %s, max %s), %d stopped"):format(us(r.leave_delay_us), us(r.leave_delay_min_us),
        us(r.leave_delay_max_us), r.stopped)
    elseif r.test == "capacity" then
      figure = r.capacity and ("%d groups%s"):format(r.capacity, r.limit_reached and " (all tried: at least)" or "")
        or "unknown (the DUT flooded from the first step)"
    else figure = ("%s offered, %s forwarded"):format(fmt_rate(r.throughput_pps), fmt_rate(r.forwarded_fps or 0)) end
    rows[#rows + 1] = { r.test, r.port or "all", r.groups, figure, r.leaked or 0 }
  end
  return ("rfc3918 results (%d %s groups, %s reports)\n"):format(res.groups, res.family, res.reports)
    .. scenario.table({ "test", "port", "groups", "result", "leaked" }, rows)
end

return M
