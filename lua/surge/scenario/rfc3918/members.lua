-- scenario/rfc3918/members.lua - rfc3918's member ports as emulated hosts
-- (--member-hosts M, docs/scenarios.md): each member port is a table of M
-- hosts (surge.hosts, docs/hosts.md "Multicast") that join and leave the
-- groups with IGMP (MLDv2 for IPv6 groups) and answer the DUT's querier,
-- instead of the port sending one report of its own. A table belongs to
-- the lcore that made it, and its memberships outlive a trial, so with
-- member hosts every test runs in one task, members_task.lua, which makes
-- the tables (each trial's loop is surge.dut.mcast's either way).
local hosts = require("surge.hosts")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")
local surge = require("surge")
local options = require("surge.scenario.kit.options")

local M = {}

-- A table holds at most 64 memberships (docs/hosts.md): a run of
-- consecutive groups is one.
M.MAX_RUNS = 64

function M.options(p)
  p:option("--member-hosts", "each member port is this many emulated hosts that join the groups and answer the "
    .. "DUT's querier (0: the port sends one report of its own)", 0, "integer 0..65536")
  p:option("--member-mac", "--member-hosts: host 0's MAC on the first member port (host i of member port k: it "
    .. "plus (k - 1) x M + i)", "02:39:18:00:00:01")
end

-- "02:39:18:00:00:01" + n
local function mac_add(text, n)
  local v = 0
  for h in text:gmatch("%x%x") do v = v * 256 + tonumber(h, 16) end
  v = v + n
  local b = {}
  for i = 6, 1, -1 do b[i] = ("%02x"):format(v % 256) v = math.floor(v / 256) end
  return table.concat(b, ":")
end

-- Whether group b follows group a (the hosts count a range up in its last
-- 32 bits)
local function follows(a, b, v6)
  if not v6 then return b.addr == a.addr + 1 end
  local x, y = ip6.parse(a.text), ip6.parse(b.text)
  if x:sub(1, 12) ~= y:sub(1, 12) then return false end
  local function tail(s) local v = 0 for i = 13, 16 do v = v * 256 + s:byte(i) end return v end
  return tail(y) == tail(x) + 1
end

-- The runs of consecutive groups of list[from..to]: { { from, to } }.
local function runs(list, from, to, v6)
  local out = {}
  for g = from, to do
    local r = out[#out]
    if r and follows(list[g - 1], list[g], v6) then r.to = g
    else out[#out + 1] = { from = g, to = g } end
  end
  return out
end

-- Checked with the plan, before any port: nil without --member-hosts, else
-- { count, mac, version (IGMP 2 or 3, MLD 2) }.
function M.plan(o, plan, refuse)
  local n = o.member_hosts or 0
  options.unicast_mac(o.member_mac, "--member-mac", n * #plan.members)
  if n == 0 then return nil end
  if plan.want.capacity then
    refuse("--member-hosts", "the capacity test joins a membership a step, past a table's %d: not with emulated "
      .. "hosts (yet)", M.MAX_RUNS)
  end
  local nruns = #runs(plan.groups.list, 1, #plan.groups.list, plan.groups.v6)
  if nruns > M.MAX_RUNS then
    refuse("--groups", "%d runs of consecutive groups: emulated hosts (--member-hosts) join at most %d", nruns,
      M.MAX_RUNS)
  end
  return { count = n, mac = o.member_mac, version = plan.groups.v6 and 2 or (plan.version == "v2" and 2 or 3) }
end

-- In members_task.lua's task: a table a member port,
-- env.hosts[k] = { t, mships = { { from, to, m } } } for member k (k: the
-- --rx index), its hosts at --member-addr + (j - 1) x M + i.
function M.make(env)
  local h, plan = env.plan.hosts, env.plan
  env.hosts = {}
  for j, k in ipairs(plan.members) do
    local first = (j - 1) * h.count
    local o = { count = h.count, mac = mac_add(h.mac, first), ip = ip4.addr_text(plan.member_base + first),
                prefix = ("members%d"):format(plan.rx[k]) }
    if plan.groups.v6 then o.ip6, o.dad6, o.rs = true, 0, 0 end
    env.hosts[k] = { t = hosts.new(o), mships = {}, leaving = {} }
  end
end

-- The actions (surge.dut.mcast's, run = a function) of every member's
-- hosts joining (join) or leaving groups[from..to] at `at`; index[action]
-- = { port = k, first, last }: the groups whose time the action's is.
function M.actions(env, at, from, to, join, actions, index)
  local list, v6 = env.plan.groups.list, env.plan.groups.v6
  for _, k in ipairs(env.plan.members) do
    local h = env.hosts[k]
    local run
    if join then
      run = function()
        for _, r in ipairs(runs(list, from, to, v6)) do
          -- a search's next trial joins what the last one left joined: the
          -- hosts are members still (and have answered the queries since)
          local held = false
          for _, x in ipairs(h.mships) do held = held or (x.from == r.from and x.to == r.to) end
          if not held then
            local m = h.t:join{ group = list[r.from].text, groups = r.to - r.from + 1,
                                version = env.plan.hosts.version }
            h.mships[#h.mships + 1] = { from = r.from, to = r.to, m = m }
          end
        end
      end
    else
      run = function()
        local keep = {}
        for _, s in ipairs(h.mships) do
          if s.from >= from and s.to <= to then
            h.t:leave(s.m)
            h.leaving[#h.leaving + 1] = s.m
          else keep[#keep + 1] = s end
        end
        h.mships = keep
      end
    end
    actions[#actions + 1] = { at = at, iface = k + 1, run = run }
    if index then index[#actions] = { port = k, first = from, last = to } end
  end
  return actions
end

-- After a timeline: the tables polled until the memberships left in it
-- are free (v3 and MLDv2 send their leaves `robustness` times, a second
-- apart), at most `seconds`, so the next trial may join the groups again.
function M.settle(env, pool, seconds)
  local hz = tonumber(surge.tsc_hz())
  local deadline = tonumber(surge.tsc()) + seconds * hz
  local rx, tx = pool:burst(64), pool:burst(64)
  for _, k in ipairs(env.plan.members) do
    local h, q = env.hosts[k], env.ifaces[k + 1]
    for _, m in ipairs(h.leaving) do
      while surge.running() and h.t:membership(m).state == "leaving" and tonumber(surge.tsc()) < deadline do
        if h.t:poll(q.rxq, q.txq, rx, tx) > 0 then rx:free() end
      end
    end
    h.leaving = {}
  end
  rx:free()
end

-- surge.dut.mcast's spec.hosts: { [iface] = table }
function M.spec(env)
  local s = {}
  for k, h in pairs(env.hosts) do s[k + 1] = h.t end
  return s
end

-- The results' member_hosts: per member port its hosts, the queries they
-- took and the reports and leaves they sent.
function M.summary(env)
  local out = {}
  for _, k in ipairs(env.plan.members) do
    local st = env.hosts[k].t:stats()
    out[#out + 1] = { port = env.plan.rx[k], hosts = env.plan.hosts.count,
      queries = (st.igmp_query_rx or 0) + (st.mld_query_rx or 0),
      reports = (st.igmp_v2_report_tx or 0) + (st.igmp_v3_report_tx or 0) + (st.mld_v1_report_tx or 0)
        + (st.mld_v2_report_tx or 0),
      leaves = (st.igmp_leave_tx or 0) + (st.mld_done_tx or 0), bad = st.mcast_bad or 0 }
  end
  return out
end

return M
