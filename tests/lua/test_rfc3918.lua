-- The rfc3918 scenario's logic (scenario/rfc3918/logic.lua) without packets: group
-- lists and their refusals, the reports that join and leave them, the
-- verdict of a trial's counts, join/leave delays from timestamps, and the
-- group capacity search against simulated DUTs whose capacity is known
-- (one that floods everything once its table overflows, as the Linux
-- bridge does, and one that drops the groups past its table).
local mcast = require("surge.scenario.mcast")
local igmp = require("surge").proto.igmp
local T = {}

local function refused(text, pat)
  local ok, e = pcall(mcast.groups, text, "--groups")
  assert(not ok, "expected a refusal of " .. text)
  assert(tostring(e):find(pat, 1, true), tostring(e))
  assert(tostring(e):find("^%-%-groups: "), "names the option: " .. tostring(e))
end

function T.group_lists()
  local g = mcast.groups("239.1.1.254/4,239.9.0.1")
  assert(not g.v6 and #g.list == 5)
  assert(g.list[1].text == "239.1.1.254" and g.list[3].text == "239.1.2.0" and g.list[5].text == "239.9.0.1")
  local h = mcast.groups("ff3e::ffff/2")
  assert(h.v6 and h.list[2].text == "ff3e::1:0" and h.list[2].addr == "ff3e::1:0")
  assert(#mcast.groups("ff3e::1/100").list == 100, "bytes 0x2e and 0x3a in an address (ff3e::2e, ::3a) are no text")
  refused("10.0.0.1/4", "10.0.0.1 is not a multicast address")
  refused("2001:db8::1", "2001:db8::1 is not a multicast address")
  refused("239.255.255.255/2", "runs past the multicast range")
  refused("239.1.1.1,ff3e::1", "not of one family")
  refused("239.1.1.1/2,239.1.1.2", "group 239.1.1.2 given twice")
  refused("239.1.1.1/0", "give 1..4096")
  refused("239.1.1.1/4097", "give 1..4096")
  refused("239.1.1.1,,239.1.1.2", "empty item")
  refused("", "no group given")
  refused("239.1.1", "is not an IPv4 address")
end

function T.reports_pack_groups()
  local g = mcast.groups("239.1.0.1/400").list
  local m = { mac = "02:00:00:00:00:01", ip4 = "10.0.1.1", ip6 = "fe80::1" }
  local v2 = mcast.reports("v2", m, g, 3, 7, true)
  assert(#v2 == 5 and v2[1].first == 3 and v2[5].last == 7)
  local v3 = mcast.reports("v3", m, g, 1, 400, true)
  assert(#v3 == 3, #v3)                         -- 183 records a report
  assert(v3[1].first == 1 and v3[1].last == igmp.MAX_RECORDS.v3 and v3[3].last == 400)
  for _, r in ipairs(v3) do assert(#r.bytes <= 1514) end
  local leave = mcast.reports("v3", m, g, 1, 1, false)[1].bytes
  assert(leave:byte(14 + 24 + 9) == igmp.TO_IN, "a leave is TO_IN {}")
  local g6 = mcast.groups("ff3e::1/100").list
  local mld = mcast.reports("mld2", m, g6, 1, 100, true)
  assert(#mld == 2 and mld[1].last == igmp.MAX_RECORDS.mld2)
end

-- counts of a trial: sent[g], and per port received[g]
local function trial(sent, ports)
  local r = { sent = sent, ports = {} }
  for p, rec in ipairs(ports) do r.ports[p] = { received = rec } end
  return r
end

function T.verdict_exact_counts()
  local r = trial({ 10, 10, 10 }, { { 10, 10, 10 }, { 0, 0, 0 } })
  local v = mcast.verdict(r, 3, { 1 }, { 2 })
  assert(v.correct == 3 and v.lost == 0 and v.leaked == 0)
  r = trial({ 10, 10, 10 }, { { 10, 9, 11 }, { 0, 0, 1 } })
  v = mcast.verdict(r, 3, { 1 }, { 2 })
  assert(v.correct == 1 and v.lost == 1 and v.extra == 1 and v.leaked == 1 and v.wrong[1] == 2 and v.wrong[2] == 3)
  v = mcast.verdict(trial({ 0 }, { { 0 }, { 0 } }), 1, { 1 }, { 2 })
  assert(v.correct == 0, "a group nothing was sent to proves nothing")
end

function T.delays()
  -- join: report at 1 ms; group 1 first frame 1.25 ms, group 2 never, group 3 before the join (flooded)
  local d = mcast.delays({ 1e6, 1e6, 1e6 }, { 1.25e6, nil, 0.5e6 }, 1, 3, false)
  assert(d.n == 1 and d.missing == 1 and d.early == 1 and math.abs(d.per[1] - 250) < 1e-9 and d.mean_us == d.min_us)
  -- leave: last frames 0.3 ms and 0.1 ms after the leave; one group's last came before it (0)
  d = mcast.delays({ 2e6, 2e6, 2e6, 2e6 }, { 2.3e6, 2.1e6, 1.9e6 }, 1, 4, true)
  assert(d.n == 3 and math.abs(d.max_us - 300) < 1e-9 and d.min_us == 0 and math.abs(d.mean_us - 400 / 3) < 1e-9)
  assert(d.missing == 1, "a group that never came has no leave delay (not 0)")
end

-- a DUT whose table holds `cap` groups; on overflow it floods (bridge) or
-- forwards only the first cap groups (drop)
local function dut(cap, mode)
  local joined = 0
  return function(n)
    joined = math.max(joined, n)
    if mode == "flood" then return joined > cap and 0 or n end
    return math.min(n, cap)
  end
end

function T.capacity_search()
  local r = mcast.capacity{ start = 1, step = 1, max = 64, trial = dut(16, "flood") }
  assert(r.capacity == 16 and not r.limit_reached and #r.steps == 17 and r.steps[17].groups == 17)
  r = mcast.capacity{ start = 4, step = 4, max = 64, trial = dut(18, "drop") }
  assert(r.capacity == 16 and r.steps[#r.steps].groups == 20 and r.steps[#r.steps].correct == 18)
  r = mcast.capacity{ start = 1, step = 8, max = 10, trial = dut(100, "flood") }
  assert(r.capacity == 10 and r.limit_reached and r.steps[2].groups == 9 and r.steps[3].groups == 10)
  r = mcast.capacity{ start = 1, step = 1, max = 8, trial = dut(0, "flood") }
  assert(r.capacity == 0 and #r.steps == 1)
end

return T
