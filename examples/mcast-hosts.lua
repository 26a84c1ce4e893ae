-- mcast-hosts.lua - emulated hosts that join multicast groups (surge.hosts,
-- docs/hosts.md "Multicast"): host i has MAC --mac + i and address --ip + i;
-- each --join spec makes a membership: GROUP[/N]@FIRST+HOSTS[vVERSION]
-- (N groups from GROUP, hosts FIRST..FIRST+HOSTS-1, IGMP 2 or 3 for an IPv4
-- group, MLD 1 or 2 for an IPv6 one), several separated by ';'. The hosts
-- report, answer the queries they hear for --seconds, leave, send their
-- leaves for --linger seconds, then the script prints how long the joins'
-- reports took, their counters, each membership and the UDP frames
-- received for each group.
--
--   surge run --vdev net_af_packet0,iface=IF examples/mcast-hosts.lua --join '239.1.1.1/4@0+100v2;ff3e::1@0+10v2'
local surge = require("surge")
local hosts = require("surge.hosts")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")

function configure(p)
  p:description("Emulated hosts joining multicast groups: IGMPv2/v3, MLDv1/v2 reports, queries, leaves.")
  p:option("--dev", "DPDK port number or device name", "0")
  p:option("--count", "hosts", 100, "integer 1..16777216")
  p:option("--ip", "host 0's address (host i's is it plus i)", "10.78.1.1")
  p:option("--mac", "host 0's MAC (host i's is it plus i)", "02:78:00:00:00:01")
  p:option("--join", "memberships: GROUP[/N]@FIRST+HOSTS[vVERSION], ';' between them", "239.1.1.1@0+1v3")
  p:option("--robustness", "reports sent on a join (RFC 3376: 2)", 2, "integer 1..7")
  p:option("--seconds", "how long the hosts stay joined", 5, "number >=0")
  p:option("--linger", "seconds after the leaves", 1, "number >=0")
  p:flag("--events", "pull the events every millisecond and count them (a Lua table each)")
end

-- "239.1.1.1/4@0+100v2" -> the options of t:join
local function spec(s)
  local g, n, first, nh, v = s:match("^([%x.:]+)/?(%d*)@(%d+)%+(%d+)v?(%d*)$")
  if not g then error(("--join: '%s' is not GROUP[/N]@FIRST+HOSTS[vVERSION]"):format(s), 0) end
  return { group = g, groups = tonumber(n), first = tonumber(first), hosts = tonumber(nh), version = tonumber(v) }
end

function master(args)
  local port = surge.port(tonumber(args.dev) or args.dev, { rxq = 1, txq = 1 })
  local r = surge.wait(surge.launch("run_hosts", port:rxq(0), port:txq(0), args))
  if r == nil then return 1 end
  print(r.joined)
  print(r.events)
  print("hosts: " .. r.states)
  print(r.counters)
  print(r.memberships)
  print(r.rx)
  return 0
end

-- the group a UDP frame goes to (IPv4 or IPv6, untagged), or nil
local function udp_group(p, len)
  if len >= 34 and p[12] == 8 and p[13] == 0 and p[23] == 17 and p[30] >= 224 and p[30] <= 239 then
    return ip4.addr_text(p[30] * 16777216 + p[31] * 65536 + p[32] * 256 + p[33])
  elseif len >= 54 and p[12] == 0x86 and p[13] == 0xdd and p[20] == 17 and p[38] == 0xff then
    return ip6.addr_text(p + 38)
  end
end

function run_hosts(rxq, txq, args)
  local t = hosts.new{ count = args.count, ip = args.ip, mac = args.mac, prefix = "mcast" }
  local ms = {}
  for s in args.join:gmatch("[^;]+") do
    local o = spec(s)
    o.robustness = args.robustness
    ms[#ms + 1] = t:join(o)
  end
  local pool = t:pool()
  local rx, tx = pool:burst(64), pool:burst(64)
  local seen = {}
  local hz = tonumber(surge.tsc_hz())
  local t0 = tonumber(surge.tsc())
  local leave_at, stop_at = t0 + args.seconds * hz, t0 + (args.seconds + args.linger) * hz
  local left, joined_s = false, nil
  local kinds, next_pull = { joined = 0, left = 0 }, 0
  t:publish()
  while surge.running() do
    local n = t:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local g = udp_group(rx.data[i], rx.len[i])
      if g then seen[g] = (seen[g] or 0) + 1 end
    end
    if n > 0 then rx:free() end
    local now = tonumber(surge.tsc())
    if args.events and now >= next_pull then    -- the events, every millisecond
      next_pull = now + hz / 1000
      for _, ev in ipairs(t:events()) do kinds[ev.kind] = (kinds[ev.kind] or 0) + 1 end
    end
    if not joined_s and not left and t:settled() then joined_s = (now - t0) / hz end   -- every join's reports sent
    if not left and now >= leave_at then
      for _, m in ipairs(ms) do t:leave(m) end
      left = true
    end
    if now >= stop_at then break end
  end
  t:sync()
  if args.events then for _, ev in ipairs(t:events()) do kinds[ev.kind] = (kinds[ev.kind] or 0) + 1 end end
  local st = t:stats()
  local lines = {}
  for _, m in ipairs(ms) do
    local x = t:membership(m)
    lines[#lines + 1] = ("membership %d: %s v%d (now v%d) reports %d leaves %d queries %d"):format(m, x.state,
      x.version, x.version_now, x.reports, x.leaves, x.queries)
  end
  local rxl = {}
  for g, c in pairs(seen) do rxl[#rxl + 1] = ("rx %s %d"):format(g, c) end
  table.sort(rxl)
  local reports = st.igmp_v2_report_tx + st.igmp_v3_report_tx + st.mld_v1_report_tx + st.mld_v2_report_tx
  local joined = joined_s and ("joined: the joins' reports sent in %.3f s (%d reports by the end)"):format(joined_s,
    reports) or "joined: the joins' reports not all sent"
  return { events = args.events and ("events: joined %d, left %d"):format(kinds.joined, kinds.left) or "events: not pulled",
           joined = joined, states = hosts.format_states(st), counters = hosts.format_counters(st),
           memberships = table.concat(lines, "\n"), rx = #rxl > 0 and table.concat(rxl, "\n") or "rx none" }
end
