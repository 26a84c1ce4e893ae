-- surge.hosts_mcast - group memberships of a table of emulated hosts
-- (docs/hosts.md, "Multicast"); its functions are the table's methods
-- t:join, t:leave and t:membership (surge.hosts).
--
--   local m = t:join{ group = "239.1.1.1", groups = 4, first = 0, hosts = 100, version = 3 }   -- IGMPv3
--   local v6 = t:join{ group = "ff3e::1:1", version = 1 }                                      -- MLDv1, every host
--   t:leave(m)                                    -- leaves (v2, MLDv1) or TO_IN reports (v3, MLDv2)
--   local a, b = t:leave(m, 10, 5)                -- hosts 10..14 leave; the others stay, in memberships a and b
--   t:membership(m) --> { state = "joined", version = 3, version_now = 3, reports = .., queries = .. }
local ffi = require("ffi")
local bit = require("bit")
local core = require("surge.core")
local check = require("surge.check")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")

local C, rc_check = core.C, core.check
local M = {}

M.STATES = { [0] = "free", "joining", "joined", "leaving" }

local keys = { group = 1, groups = 1, first = 1, hosts = 1, version = 1, robustness = 1, interval = 1 }

-- a parser's error (ip4.addr, ip6.addr) raised at the user's line
local function parsed(f, text, what)
  local ok, v = pcall(f, text, what, 1)
  if not ok then check.raise(tostring(v):gsub("^[^:]*:%d+: ", "")) end
  return v
end

function M.join(t, o)
  local fn = "hosts:join"
  o = check.options(o, keys, fn)
  local j = ffi.new("struct surge_hosts_join")
  local g = check.expect(o.group, "string", fn, "group (an IPv4 or IPv6 multicast address)")
  if g:find(":", 1, true) then
    j.af = 6
    ffi.copy(j.group, parsed(ip6.addr, g, fn .. ": group"), 16)
  else
    j.af = 4
    local v = parsed(ip4.addr, g, fn .. ": group")
    j.group[0], j.group[1], j.group[2], j.group[3] = bit.rshift(v, 24), bit.band(bit.rshift(v, 16), 255),
      bit.band(bit.rshift(v, 8), 255), bit.band(v, 255)
  end
  j.ngroups = check.expect(o.groups, "integer? 1..4294967295", fn, "groups") or 1
  j.first = check.expect(o.first, ("integer? 0..%d"):format(t.count - 1), fn, "first") or 0
  j.nhosts = check.expect(o.hosts, ("integer? 1..%d"):format(t.count - j.first), fn, "hosts") or t.count - j.first
  j.version = check.expect(o.version, j.af == 4 and "integer? 2..3" or "integer? 1..2", fn,
    j.af == 4 and "version (IGMP 2 or 3)" or "version (MLD 1 or 2)") or (j.af == 4 and 3 or 2)
  j.robustness = check.expect(o.robustness, "integer? 1..7", fn, "robustness") or 2
  -- RFC 2236 / 2710: 10 s; RFC 3376 / 3810: 1 s
  local old = j.version == (j.af == 4 and 2 or 1)
  j.unsolicited_ms = (check.expect(o.interval, "number? 0..3600", fn,
    "interval (the unsolicited report interval, seconds)") or (old and 10 or 1)) * 1000
  return rc_check(C.surge_hosts_join(t.id, j))
end

-- Hosts first..first+n-1 of membership m leave (all of them without first
-- and n); returns the memberships the hosts before and after them stay in
-- (nil when none).
function M.leave(t, m, first, n)
  check.expect(m, ("integer 0..%d"):format(C.SURGE_HOSTS_MSHIPS - 1), "hosts:leave", "m (a membership, t:join's)")
  first = check.expect(first, ("integer? 0..%d"):format(t.count - 1), "hosts:leave", "first")
  n = check.expect(n, ("integer? 1..%d"):format(t.count), "hosts:leave", "n")
  local rest = ffi.new("int32_t[2]")
  local s = ffi.new("struct surge_hosts_mship")
  rc_check(C.surge_hosts_mship(t.id, m, s))
  rc_check(C.surge_hosts_leave(t.id, m, first or s.first, n or 0, rest))
  return rest[0] >= 0 and rest[0] or nil, rest[1] >= 0 and rest[1] or nil
end

function M.membership(t, m)
  check.expect(m, ("integer 0..%d"):format(C.SURGE_HOSTS_MSHIPS - 1), "hosts:membership", "m")
  local s = ffi.new("struct surge_hosts_mship")
  rc_check(C.surge_hosts_mship(t.id, m, s))
  return { state = M.STATES[s.state], af = s.af, version = s.version, version_now = s.version_now,
           groups = s.ngroups, first = s.first, hosts = s.nhosts, reports = tonumber(s.reports),
           leaves = tonumber(s.leaves), queries = tonumber(s.queries) }
end

return M
