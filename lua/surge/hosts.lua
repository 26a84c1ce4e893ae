-- surge.hosts - many emulated hosts behind one port (docs/hosts.md): a
-- table of N hosts per task, their protocol state in C (core/hosts/),
-- driven from Lua once per burst; events pulled after a poll.
--
--   local hosts = require("surge.hosts")
--   local t = hosts.new{ count = 1000, mac = "02:10:00:00:00:01", ip = "10.33.1.1",   -- host i: mac + i, ip + i
--                        dad = true, announce = 1, probe = 1.0 }                    -- RFC 5227
--   local t = hosts.new{ count = 500, mac = "02:10:00:00:00:01", dhcp = true,
--                        subnet = "10.77.0.0/24", rate = 1000, outstanding = 256 }  -- DHCPv4 clients
--   -- and the options they send, per host from patterns (docs/hosts.md "DHCP options"):
--   --   hostname = "cpe-%d", circuit_id = "olt1/%d", remote_id = .., vendor_class = .., client_id = ..,
--   --   params = { 1, 3, 6 }, options = { { code, bytes } }, arp_check = true, leave_after = 600
--   -- and behind the generator as their relay agent (docs/hosts.md "DHCP relay"):
--   --   relay = { address = "10.20.0.1", server = "10.1.0.1", gateway_mac = .. (nil: ARP), mac = .. }
--   local pool = t:pool()
--   local rx, tx = pool:burst(64), pool:burst(64)
--   while surge.running() and not t:settled() do
--     local n = t:poll(rxq, txq, rx, tx)     -- frames not the hosts' stay in rx
--     rx:free()
--     for _, ev in ipairs(t:events()) do ... ev.host, ev.kind ("bound", "conflict", ...), ev.ip end
--   end
--   t:stats()   --> { arp_reply_tx = .., dhcp_ack_rx = .., state = { bound = .., ... }, ... }
--
-- t:run{ rxq = .., txq = .., seconds = .., until_settled = true, on_event = function(ev) end } is that loop.
local ffi = require("ffi")
local bit = require("bit")
local core = require("surge.core")
local check = require("surge.check")
local eth = require("surge.proto.eth")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")
local mcast = require("surge.hosts_mcast")
local class = require("surge.class")
local counter = require("surge.counter")
local poll_loop = require("surge.poll_loop")
local surge = require("surge")
local RxQueue, TxQueue = require("surge.port").RxQueue, require("surge.port").TxQueue

local C, rc_check = core.C, core.check
local M = {}

local Table = class.new("host table", { "id", "conf", "count", "port", "ev", "evbuf", "st", "pool_", "prefix", "cells", "joined",
  "gauges", "cum", "dhcp4", "pinged" })
Table.__handle = function(t) return ("host table %d (%d hosts)"):format(t.id, t.count) end
M.Table = Table

-- enum surge_hosts_state, by name
M.STATES = { [0] = "idle", "probing", "announcing", "bound", "conflict", "selecting", "requesting", "renewing",
  "rebinding", "gave_up", "released", "declined" }
M.EVENTS = { "bound", "conflict", "renewed", "gave_up", "lost", "released", "joined", "left", "declined", [16] = "addr6",
  [17] = "conflict6" }
-- IPv6 address kinds (struct host6's bits): an addr6/conflict6 event's `addr`
M.ADDR6 = { [1] = "link-local", [2] = "static", [4] = "slaac" }
M.FIELDS = { "rx_frames", "rx_other", "rx_bad", "tx_frames", "tx_nobufs", "tx_full", "arp_request_rx",
  "arp_reply_tx", "arp_probe_tx", "arp_announce_tx", "arp_conflict", "icmp_echo_rx", "icmp_reply_tx",
  "dhcp_discover_tx", "dhcp_offer_rx", "dhcp_request_tx", "dhcp_ack_rx", "dhcp_nak_rx", "dhcp_release_tx",
  "dhcp_retransmits", "dhcp_bad", "dhcp_stray", "dhcp_renewed", "dhcp_gave_up", "dhcp_lost", "events_lost",
  "igmp_query_rx", "igmp_v2_report_tx", "igmp_v3_report_tx", "igmp_leave_tx", "mld_query_rx", "mld_v1_report_tx",
  "mld_v2_report_tx", "mld_done_tx", "mcast_bad", "bytes_per_host",
  "nd_ns_rx", "nd_na_tx", "nd_dad_tx", "nd_conflict", "nd_rs_tx", "nd_ra_rx", "nd_prefix", "icmp6_echo_rx",
  "icmp6_reply_tx", "hosts6_ll", "hosts6_static", "hosts6_slaac", "dhcp6_solicit_tx", "dhcp6_advertise_rx",
  "dhcp6_request_tx", "dhcp6_reply_rx", "dhcp6_release_tx", "dhcp6_retransmits", "dhcp6_noaddr", "dhcp6_bad",
  "dhcp6_stray", "dhcp6_gave_up", "dhcp6_lost", "hosts6_dhcp", "bind_ms_sum", "dhcps_discover_rx", "dhcps_offer_tx",
  "dhcps_request_rx", "dhcps_ack_tx", "dhcps_nak_tx", "dhcps_release_rx", "dhcps_no_address", "dhcp_declined",
  "dhcp_left_renewals", "dhcp_left_after", "dhcp_overload", "dhcp_relay_mismatch", "dhcp_relay_unresolved",
  "ping_tx", "ping_reply", "ping_timeout", "ping_skipped", "ping_stray", "ping_resolve_tx", "ping_unresolved",
  "ping_rtt_min_us", "ping_rtt_max_us", "ping_rtt_sum_us" }
M.DHCP6_STATES = { [0] = "idle", "soliciting", "requesting", "bound", "renewing", "rebinding", "gave_up", "released" }
-- the fields that are levels, not counts (published as gauges)
local GAUGES = { bytes_per_host = true, hosts6_ll = true, hosts6_static = true, hosts6_slaac = true, hosts6_dhcp = true,
  bind_seconds = true, ping_rtt_min_us = true, ping_rtt_max_us = true }
-- the binding-time histogram's buckets: bind_le_Nms counts the bindings
-- that took under N ms (2^k), bind_le_inf all of them; stats() has each,
-- and each is published
M.BIND_BUCKETS = {}
for k = 0, C.SURGE_HOSTS_BIND_BUCKETS - 2 do M.BIND_BUCKETS[#M.BIND_BUCKETS + 1] = ("bind_le_%dms"):format(2 ^ k) end
M.BIND_BUCKETS[#M.BIND_BUCKETS + 1] = "bind_le_inf"

-- the IPv4 states that mean something for a table of each kind (static
-- hosts, DHCP clients, a DHCP server)
M.MODE_STATES = { static = { 0, 1, 2, 3, 4 }, dhcp = { 0, 1, 3, 5, 6, 7, 8, 9, 10, 11 }, server = { 0, 3, 5 } }
local function mode_of(c)
  return c.server == 1 and "server" or c.dhcp == 1 and "dhcp" or "static"
end
M.mode_of = mode_of

-- Every table of the run (any task's), for the prompt's hosts(): { id,
-- mode, count, stats = t:stats()'s form } in id order; read with plain
-- loads while the tables' lcores write them
function M.tables()
  local out = {}
  local c, st = ffi.new("struct surge_hosts_conf"), ffi.new("struct surge_hosts_stats")
  for id = 0, C.surge_hosts_count() - 1 do
    rc_check(C.surge_hosts_conf_get(id, c))
    rc_check(C.surge_hosts_stats(id, st))
    local r = { id = id, mode = mode_of(c), count = c.count, stats = { state = {} } }
    for _, f in ipairs(M.FIELDS) do r.stats[f] = tonumber(st[f]) end
    for i = 0, C.SURGE_HOST_STATES - 1 do r.stats.state[M.STATES[i]] = tonumber(st.state[i]) end
    out[#out + 1] = r
  end
  return out
end

-- Host i of table id (any task's): t:host(i)'s fields
function M.host_of(id, i)
  local h = ffi.new("struct surge_hosts_host")
  rc_check(C.surge_hosts_host(id, i, h))
  local r = { state = M.STATES[h.state], ip = ip4.addr_text(h.ip4), mac = eth.mac_text(ffi.cast("const uint8_t *", h.mac)),
           server = ip4.addr_text(h.server4), lease = h.lease_s, bound_ms = h.bound_ms, tries = h.tries }
  -- DHCP: the options of its last ACK (absent ones nil)
  if h.mask4 ~= 0 then r.mask = ip4.addr_text(h.mask4) end
  if h.router4 ~= 0 then r.router = ip4.addr_text(h.router4) end
  if h.dns4[0] ~= 0 then r.dns = { ip4.addr_text(h.dns4[0]), h.dns4[1] ~= 0 and ip4.addr_text(h.dns4[1]) or nil } end
  return r
end


local keys = { count = 1, mac = 1, ip = 1, vlan = 1, dhcp = 1, subnet = 1, dad = 1, announce = 1, probe = 1,
  rate = 1, outstanding = 1, retries = 1, rto = 1, renewals = 1, prefix = 1, ip6 = 1, dad6 = 1, rs = 1, dhcp6 = 1,
  pd = 1, rapid_commit = 1, hostname = 1, circuit_id = 1, remote_id = 1, vendor_class = 1, client_id = 1, params = 1,
  options = 1, number = 1, arp_check = 1, decline_wait = 1, leave_after = 1, relay = 1,
  outer_vlan = 1, outer_tpid = 1 }
local DHCP4_KEYS = { "hostname", "circuit_id", "remote_id", "vendor_class", "client_id", "params", "options", "number",
  "arp_check", "decline_wait", "leave_after", "relay" }

-- a parser's error (ip4.addr, eth.mac) raised at the user's line
local function parsed(f, text, what)
  local ok, v = pcall(f, text, what, 1)
  if not ok then check.raise(tostring(v):gsub("^[^:]*:%d+: ", "")) end
  return v
end

local RELAY_KEYS = { address = 1, server = 1, mac = 1, gateway_mac = 1 }
-- relay = { address, server, mac, gateway_mac } into d (docs/hosts.md "DHCP
-- relay"): the relay's MAC by default the one after the last host's
local function relay_opts(o, c, d, fn)
  local r = check.expect(o.relay, "table?", fn, "relay ({ address = .., server = .., gateway_mac = .. })")
  if not r then return end
  r = check.options(r, RELAY_KEYS, fn .. ": relay")
  local function addr(k, what)
    local a = parsed(ip4.addr, check.expect(r[k], "string", fn, "relay." .. k .. " (" .. what .. ")"), fn .. ": relay." .. k)
    if a == 0 or a == 0xffffffff or a >= 0xe0000000 then
      check.raise(("%s: relay.%s: '%s' is no unicast address"):format(fn, k, r[k]))
    end
    return a
  end
  d.relay4 = addr("address", "the relay agent's address: giaddr")
  d.relay_server4 = addr("server", "the DHCP server's address")
  if d.relay4 == d.relay_server4 then check.raise(fn .. ": relay: address and server are the same") end
  if r.mac ~= nil then
    ffi.copy(d.relay_mac, parsed(eth.mac, check.expect(r.mac, "string", fn, "relay.mac (the relay's MAC)"),
      fn .. ": relay.mac"), 6)
  else
    local v = 0
    for k = 0, 5 do v = v * 256 + c.mac[k] end
    v = (v + c.count) % 2 ^ 48
    for k = 5, 0, -1 do d.relay_mac[k] = v % 256; v = math.floor(v / 256) end
  end
  if r.gateway_mac ~= nil then
    ffi.copy(d.relay_gw_mac, parsed(eth.mac, check.expect(r.gateway_mac, "string", fn,
      "relay.gateway_mac (the next hop's MAC towards the server)"), fn .. ": relay.gateway_mac"), 6)
  end
end

-- The DHCPv4 client's options out and scripted behaviour (docs/hosts.md
-- "DHCP options"): a struct surge_hosts_dhcp4, or nil when none is asked
local function dhcp4_opts(o, c, fn)
  local any = false
  for _, k in ipairs(DHCP4_KEYS) do any = any or o[k] ~= nil end
  if not any then return nil end
  if c.dhcp ~= 1 then check.raise(fn .. ": " .. table.concat(DHCP4_KEYS, ", ") .. ": for DHCPv4 hosts (dhcp = true)") end
  local d = ffi.new("struct surge_hosts_dhcp4")
  for _, k in ipairs({ "hostname", "circuit_id", "remote_id" }) do
    local v = check.expect(o[k], "string?", fn, k .. " (a pattern: %d the host's number)")
    if v then
      if #v > C.SURGE_HOSTS_PATTERN - 1 or v:find("%z") then
        check.raise(("%s: %s: '%s' is %d bytes: a pattern holds 1..%d, no NUL"):format(fn, k, v, #v,
          C.SURGE_HOSTS_PATTERN - 1))
      end
      ffi.copy(d[k], v)
    end
  end
  local parts = {}
  local function opt(code, bytes, what)
    if #bytes > 255 then
      check.raise(("%s: %s: %d bytes: an option holds 255"):format(fn, what, #bytes))
    end
    parts[#parts + 1] = string.char(code, #bytes) .. bytes
  end
  local v = check.expect(o.vendor_class, "string?", fn, "vendor_class (option 60)")
  if v then opt(60, v, "vendor_class (option 60)") end
  v = check.expect(o.client_id, "string?", fn, "client_id (option 61's bytes: type, then the identifier)")
  if v then opt(61, v, "client_id (option 61)") end
  v = check.expect(o.params, "table?", fn, "params (option 55: a list of option codes 1..254)")
  if v then
    local b = {}
    for k, code in ipairs(v) do
      b[k] = string.char(check.expect(code, "integer 1..254", fn, ("params[%d]"):format(k)))
    end
    opt(55, table.concat(b), "params (option 55)")
  end
  v = check.expect(o.options, "table?", fn, "options (a list of { code, bytes })")
  for k, x in ipairs(v or {}) do
    local w = ("options[%d]"):format(k)
    check.expect(x, "table", fn, w .. " ({ code, bytes })")
    local code = check.expect(x[1], "integer 1..254", fn, w .. "[1] (the option's code)")
    opt(code, check.expect(x[2], "string", fn, w .. "[2] (the option's bytes)"), w)
  end
  local all = table.concat(parts)
  if #all > C.SURGE_HOSTS_DHCP_OPTS then
    check.raise(("%s: vendor_class, client_id, params and options make %d bytes: at most %d"):format(fn, #all,
      C.SURGE_HOSTS_DHCP_OPTS))
  end
  ffi.copy(d.opts, all, #all)
  d.opts_len = #all
  d.first = check.expect(o.number, "integer? 0..4294967295", fn, "number (host 0's number in the patterns)") or 0
  d.arp_check = check.expect(o.arp_check, "boolean?", fn, "arp_check") and 1 or 0
  d.decline_wait_ms = (check.expect(o.decline_wait, "number? 0.01..3600", fn,
    "decline_wait (seconds after a DECLINE, RFC 2131: 10)") or 10) * 1000
  d.leave_after_ms = (check.expect(o.leave_after, "number? 0.001..4000000", fn,
    "leave_after (seconds bound before a host releases)") or 0) * 1000
  relay_opts(o, c, d, fn)
  return d
end

-- the tags of o (vlan, and QinQ's outer_vlan, outer_tpid) into conf c
local function tags(o, c, fn)
  c.vlan = check.expect(o.vlan, "integer? 1..4094", fn, "vlan") or 0
  c.outer_vlan = check.expect(o.outer_vlan, "integer? 1..4094", fn, "outer_vlan (QinQ: the outer tag's VLAN id)") or 0
  local tpid = check.expect(o.outer_tpid, "integer?", fn, "outer_tpid (0x88a8 or 0x8100)")
  if c.outer_vlan == 0 and tpid ~= nil then check.raise(fn .. ": outer_tpid: with outer_vlan (QinQ)") end
  if c.outer_vlan ~= 0 then
    if c.vlan == 0 then check.raise(fn .. ": outer_vlan: QinQ needs the inner tag too (vlan = 1..4094)") end
    if tpid ~= nil and tpid ~= 0x88a8 and tpid ~= 0x8100 then
      check.raise(("%s: outer_tpid: 0x%x: 0x88a8 (802.1ad) or 0x8100"):format(fn, tpid))
    end
    c.outer_tpid = tpid or 0x88a8
  end
end

-- hosts.new's options checked, whole (what C refuses too): the conf, the
-- DHCPv4 options (or nil) and the counters' prefix; no table made yet
local function prepare(o)
  local fn = "surge.hosts.new"
  o = check.options(o, keys, fn)
  local c = ffi.new("struct surge_hosts_conf")
  c.count = check.expect(o.count, ("integer 1..%d"):format(C.SURGE_HOSTS_COUNT_MAX), fn, "count")
  ffi.copy(c.mac, parsed(eth.mac, check.expect(o.mac, "string", fn, "mac (host 0's MAC; host i's is it plus i)"),
    fn .. ": mac"), 6)
  tags(o, c, fn)
  c.dhcp = check.expect(o.dhcp, "boolean?", fn, "dhcp") and 1 or 0
  c.dad = check.expect(o.dad, "boolean?", fn, "dad") and 1 or 0
  c.announce = check.expect(o.announce, "integer? 0..255", fn, "announce") or 0
  c.probe_ms = (check.expect(o.probe, "number? 0.001..60", fn, "probe (RFC 5227 PROBE_MIN, seconds)") or 1) * 1000
  c.rate = check.expect(o.rate, "number? 0..1e8", fn, "rate (hosts started per second, 0 unpaced)") or 0
  c.outstanding = check.expect(o.outstanding, "integer? 0..16777216", fn, "outstanding") or 0
  c.retries = check.expect(o.retries, "integer? 1..16", fn, "retries") or 4
  c.rto_ms = (check.expect(o.rto, "number? 0.01..64", fn, "rto (first DHCP retransmission, seconds)") or 4) * 1000
  c.renewals = check.expect(o.renewals, "integer? 0..255", fn, "renewals") or 0
  -- IPv6: true (link-local, SLAAC), or host 0's static address too
  -- DHCPv6: IA_NA (dhcp6), IA_PD (pd), rapid commit; an IPv6 host
  local na = check.expect(o.dhcp6, "boolean?", fn, "dhcp6")
  local pd = check.expect(o.pd, "boolean?", fn, "pd (ask for a delegated prefix, IA_PD)")
  local rapid = check.expect(o.rapid_commit, "boolean?", fn, "rapid_commit")
  c.dhcp6 = (na and 1 or 0) + (pd and 2 or 0)
  if c.dhcp6 == 0 and rapid then check.raise(fn .. ": rapid_commit: for DHCPv6 hosts (dhcp6 or pd)") end
  if rapid then c.dhcp6 = c.dhcp6 + 4 end
  if c.dhcp6 ~= 0 and (o.ip6 == nil or o.ip6 == false) then o.ip6 = true end
  if o.ip6 ~= nil and o.ip6 ~= false then
    c.ip6 = 1
    if type(o.ip6) == "string" then
      local a = parsed(ip6.addr, o.ip6, fn .. ": ip6")
      if a:byte(1) == 0 or a:byte(1) == 0xff then
        check.raise(("%s: ip6: '%s' is no host's static address (unspecified, loopback, v4-mapped or multicast)")
          :format(fn, o.ip6))
      end
      ffi.copy(c.ip6_addr, a, 16)
    elseif o.ip6 ~= true then
      check.raise(("%s: ip6: expected true or host 0's IPv6 address, got %s"):format(fn, check.show(o.ip6)))
    end
  end
  c.dad6 = check.expect(o.dad6, "integer? 0..16", fn, "dad6 (DAD probes per IPv6 address)") or 1
  c.rs = check.expect(o.rs, "integer? 0..16", fn, "rs (router solicitations)") or 3
  if c.ip6 == 0 and (o.dad6 ~= nil or o.rs ~= nil) then
    check.raise(fn .. ": dad6 and rs: for IPv6 hosts (ip6 = ...)")
  end
  if c.dhcp == 1 then
    if o.ip ~= nil then check.raise(fn .. ": ip: DHCP hosts take their address from the server (no ip with dhcp)") end
    if c.dad == 1 then check.raise(fn .. ": dad: not with dhcp (DHCP hosts' DAD is not done yet, docs/hosts.md)") end
    local sub = check.expect(o.subnet, "string", fn, "subnet (the server's subnet, \"A.B.C.D/LEN\", LEN 12..32)")
    local a, len = sub:match("^([%d.]+)/(%d+)$")
    len = tonumber(len)
    if not a or len < 12 or len > 32 then
      check.raise(("%s: subnet: '%s' is not A.B.C.D/LEN with LEN 12..32"):format(fn, sub))
    end
    c.net4 = parsed(ip4.addr, a, fn .. ": subnet")
    c.net4_len = len
  elseif o.ip == nil and c.ip6 == 1 then
    if c.dhcp6 ~= 0 and o.subnet ~= nil then check.raise(fn .. ": subnet: for DHCPv4 hosts (dhcp = true)") end
    if o.subnet ~= nil then check.raise(fn .. ": subnet: for DHCP hosts (dhcp = true)") end
    if c.dad == 1 then check.raise(fn .. ": dad: RFC 5227 is for IPv4 addresses (ip); IPv6 hosts' DAD is dad6") end
  else
    if o.subnet ~= nil then check.raise(fn .. ": subnet: for DHCP hosts (dhcp = true)") end
    c.ip4 = parsed(ip4.addr, check.expect(o.ip, "string", fn, "ip (host 0's address, dhcp = true, or ip6)"), fn .. ": ip")
    if c.ip4 == 0 then check.raise(fn .. ": ip: 0.0.0.0 is no host's address") end
    if c.ip4 + c.count - 1 > 0xffffffff then
      check.raise(("%s: %d hosts from %s: past 255.255.255.255"):format(fn, c.count, o.ip))
    end
  end
  local prefix = check.expect(o.prefix, "string?", fn, "prefix (of the published counters)") or "hosts"
  if #prefix > 40 or prefix:find("[^%w_%-%.]") then
    check.raise(("%s: prefix: '%s' must be 1..40 letters, digits, _ - ."):format(fn, prefix))
  end
  local d = dhcp4_opts(o, c, fn)
  -- refused before the table is made: a refused one would keep a slot of the run
  rc_check(C.surge_hosts_check(c, d))
  return c, d, prefix
end

-- a table of the conf prepare() checked
local function make(c, d, prefix)
  local id = rc_check(C.surge_hosts_new(c))
  if d then rc_check(C.surge_hosts_dhcp4(id, d)) end
  local t = M.made(id, c, prefix)
  t.dhcp4 = d or false
  return t
end

function M.new(o)
  return make(prepare(o))
end

-- hosts.new's refusals without a table: a script's option check (before
-- EAL) asks it, so a bad value is one line naming the options, not a task's
-- error after the ports are up. Returns nil, or the refusal's text.
function M.check(o)
  local ok, e = pcall(prepare, o)
  if not ok then return (tostring(e):gsub("^[^:]*:%d+: ", "")) end
  return nil
end

-- In configure(p): refuses before EAL what hosts.new would refuse of the
-- table build(options) describes, in one line naming the options (names)
-- the table is made from.
function M.check_options(p, build, names)
  p:check(function(o)
    local e = M.check(build(o))
    if e then return names .. ": " .. e end
  end)
end

-- the Lua side of table id (made by surge_hosts_new with conf c)
function M.made(id, c, prefix)
  return setmetatable({ id = id, conf = c, count = c.count, port = -1, prefix = prefix, cells = false,
    gauges = false, cum = false, dhcp4 = false, pinged = false,
    evbuf = ffi.new("struct surge_hosts_event[?]", 256), st = ffi.new("struct surge_hosts_stats") }, Table)
end

-- Ranges of VLANs (docs/hosts.md "QinQ"): `per_vlan` hosts on each pair of
-- an outer VLAN (outer .. outer + outers - 1, none without outer) and an
-- inner one (vlan .. vlan + vlans - 1), inner counted first: one table a
-- pair, the MACs and addresses running on from one table to the next
-- (table k's host 0 is mac + k x per_vlan, ip + k x per_vlan); the other
-- options are hosts.new's. A group polls its tables on one queue (the
-- first receives, the rest take what it leaves) and pings with all of them.
local Group = class.new("host group", { "tables", "count" })
Group.__handle = function(g) return ("host group (%d tables, %d hosts)"):format(#g.tables, g.count) end
M.Group = Group

-- hosts.vlans' options: hosts.new's, but per_vlan for count, and the ranges
local vlan_keys = { per_vlan = 1, vlans = 1, outer_vlans = 1 }
for k in pairs(keys) do if k ~= "count" then vlan_keys[k] = 1 end end

function M.vlans(o)
  local fn = "surge.hosts.vlans"
  o = check.options(o, vlan_keys, fn)
  local rest = {}
  for k, v in pairs(o) do rest[k] = v end
  local per = check.expect(o.per_vlan, "integer 1..16777216", fn, "per_vlan (hosts on each VLAN pair)")
  local vlan = check.expect(o.vlan, "integer 1..4094", fn, "vlan (the first inner VLAN)")
  local vlans = check.expect(o.vlans, "integer? 1..4094", fn, "vlans (inner VLANs)") or 1
  local outer = check.expect(o.outer_vlan, "integer? 1..4094", fn, "outer_vlan (the first outer VLAN)")
  local outers = check.expect(o.outer_vlans, "integer? 1..4094", fn, "outer_vlans (outer VLANs)") or 1
  if vlan + vlans - 1 > 4094 then
    check.raise(("%s: %d inner VLANs from %d pass 4094"):format(fn, vlans, vlan))
  end
  if outer == nil and o.outer_vlans ~= nil then check.raise(fn .. ": outer_vlans: with outer_vlan") end
  if outer ~= nil and outer + outers - 1 > 4094 then
    check.raise(("%s: %d outer VLANs from %d pass 4094"):format(fn, outers, outer))
  end
  local pairs_n = vlans * outers
  if pairs_n > C.SURGE_HOSTS_MAX - C.surge_hosts_count() then
    check.raise(("%s: %d VLAN pairs, a table each, and a run has room for %d more tables"):format(fn, pairs_n,
      C.SURGE_HOSTS_MAX - C.surge_hosts_count()))
  end
  local mac0 = parsed(eth.mac, check.expect(o.mac, "string", fn, "mac (host 0's MAC)"), fn .. ": mac")
  local m = 0
  for k = 1, 6 do m = m * 256 + mac0:byte(k) end
  if o.ip ~= nil then
    local ip = parsed(ip4.addr, check.expect(o.ip, "string", fn, "ip"), fn .. ": ip")
    if ip + pairs_n * per - 1 > 0xffffffff then
      check.raise(("%s: %d hosts from %s: past 255.255.255.255"):format(fn, pairs_n * per, o.ip))
    end
    rest.ip = ip
  end
  if math.floor(m / 2 ^ 40) ~= math.floor((m + pairs_n * per - 1) / 2 ^ 40) then
    check.raise(("%s: %d MACs from %s run past its first byte"):format(fn, pairs_n * per, o.mac))
  end
  rest.per_vlan, rest.vlans, rest.outer_vlans, rest.count = nil, nil, nil, per
  -- each table's prefix is it and .OUTER.INNER: room for those in hosts.new's 40
  local prefix = check.expect(o.prefix, "string?", fn, "prefix (of the published counters)") or "hosts"
  if #prefix > 30 or prefix:find("[^%w_%-%.]") then
    check.raise(("%s: prefix: '%s' must be 1..30 letters, digits, _ - . (a table's is it and .OUTER.INNER)"):format(fn,
      prefix))
  end
  local g = setmetatable({ tables = {}, count = pairs_n * per }, Group)
  local b = ffi.new("uint8_t[6]")
  local confs = {}        -- every table checked before one is made: none left over by a refusal
  for k = 0, pairs_n - 1 do
    local v = m + k * per
    for j = 5, 0, -1 do b[j] = v % 256; v = math.floor(v / 256) end
    local ok = {}
    for key, val in pairs(rest) do ok[key] = val end
    ok.mac = eth.mac_text(b)
    if rest.ip then ok.ip = ip4.addr_text(rest.ip + k * per) end
    ok.vlan = vlan + k % vlans
    ok.outer_vlan = outer and outer + math.floor(k / vlans) or nil
    ok.prefix = prefix .. (".%d.%d"):format(ok.outer_vlan or 0, ok.vlan)
    confs[k + 1] = { prepare(ok) }
  end
  for k, x in ipairs(confs) do g.tables[k] = make(x[1], x[2], x[3]) end
  return g
end

-- one turn of every table: the first receives, the others take; the
-- frames none took stay in rx (their count)
function Group:poll(rxq, txq, rx, tx)
  check.self(self, Group, "hosts group:poll")
  local n = self.tables[1]:poll(rxq, txq, rx, tx)
  for k = 2, #self.tables do n = self.tables[k]:take(txq, rx, tx) end
  return n
end

function Group:settled()
  check.self(self, Group, "hosts group:settled")
  for _, t in ipairs(self.tables) do if not t:settled() then return false end end
  return true
end

-- every table pings (o as t:ping's, its hosts each table's)
function Group:ping(o)
  check.self(self, Group, "hosts group:ping")
  for _, t in ipairs(self.tables) do t:ping(o) end
end

-- the tables' counters added (the minimum and maximum round trips: of all)
function Group:stats()
  check.self(self, Group, "hosts group:stats")
  local r = { state = {} }
  for _, t in ipairs(self.tables) do
    local st = t:stats()
    for _, f in ipairs(M.FIELDS) do
      if f == "ping_rtt_min_us" then
        if st.ping_reply > 0 and (r[f] == nil or st[f] < r[f]) then r[f] = st[f] end
      elseif f == "ping_rtt_max_us" then r[f] = math.max(r[f] or 0, st[f])
      else r[f] = (r[f] or 0) + st[f] end
    end
    for name, v in pairs(st.state) do r.state[name] = (r.state[name] or 0) + v end
  end
  r.ping_rtt_min_us = r.ping_rtt_min_us or 0
  r.bytes_per_host = math.floor(r.bytes_per_host / #self.tables)   -- a level: the tables' mean
  return r
end

local server_keys = { count = 1, pool = 1, server = 1, mac = 1, vlan = 1, lease = 1, prefix_len = 1, prefix = 1,
  outer_vlan = 1, outer_tpid = 1 }

-- A DHCPv4 server (docs/hosts.md, "The DHCP server"): a table in server
-- mode whose host i is the pool's address pool + i, polled like any table.
function M.server(o)
  local fn = "surge.hosts.server"
  o = check.options(o, server_keys, fn)
  local c = ffi.new("struct surge_hosts_conf")
  c.server = 1
  c.count = check.expect(o.count, ("integer 1..%d"):format(C.SURGE_HOSTS_COUNT_MAX), fn, "count (the pool's addresses)")
  c.ip4 = parsed(ip4.addr, check.expect(o.pool, "string", fn, "pool (the pool's first address)"), fn .. ": pool")
  if c.ip4 == 0 then check.raise(fn .. ": pool: 0.0.0.0 is no client's address") end
  if c.ip4 + c.count - 1 > 0xffffffff then
    check.raise(("%s: a pool of %d addresses from %s: past 255.255.255.255"):format(fn, c.count, o.pool))
  end
  c.server4 = parsed(ip4.addr, check.expect(o.server, "string", fn, "server (its address, option 54)"), fn .. ": server")
  if c.server4 >= c.ip4 and c.server4 < c.ip4 + c.count then
    check.raise(("%s: server: %s is in its own pool"):format(fn, o.server))
  end
  ffi.copy(c.mac, parsed(eth.mac, check.expect(o.mac, "string", fn, "mac (the server's MAC)"), fn .. ": mac"), 6)
  tags(o, c, fn)
  c.lease_s = check.expect(o.lease, "integer? 1..2000000", fn, "lease (seconds)") or 3600
  c.net4_len = check.expect(o.prefix_len, "integer? 1..32", fn, "prefix_len (the subnet mask sent, option 1)") or 0
  c.probe_ms, c.rto_ms, c.retries = 1000, 4000, 4
  local prefix = check.expect(o.prefix, "string?", fn, "prefix (of the published counters)") or "dhcps"
  if #prefix > 40 or prefix:find("[^%w_%-%.]") then
    check.raise(("%s: prefix: '%s' must be 1..40 letters, digits, _ - ."):format(fn, prefix))
  end
  return M.made(rc_check(C.surge_hosts_new(c)), c, prefix)
end

-- A pool for the hosts' frames (its template is never sent as it is: each
-- frame is written whole).
function Table:pool(size)
  check.self(self, Table, "hosts:pool")
  check.expect(size, "integer? 63..1048575", "hosts:pool", "size")
  return surge.pool{ template = surge.proto.udp{}, size = size or 4095, data_room = 2048 }
end

function Table:poll(rxq, txq, rx, tx)
  check.self(self, Table, "hosts:poll")
  check.handle(rxq, RxQueue, "hosts:poll", "rxq", "an rx queue (port:rxq(i))")
  check.handle(txq, TxQueue, "hosts:poll", "txq", "a tx queue (port:txq(i))")
  check.burst(rx, "hosts:poll", "rx")
  check.burst(tx, "hosts:poll", "tx")
  if rxq.port ~= txq.port then
    check.raise(("hosts:poll: txq: expected a tx queue of port %d (the rxq's), got %s"):format(rxq.port,
      check.show(txq)))
  end
  if rx == tx then check.raise("hosts:poll: rx and tx: expected two bursts, got one burst twice") end
  local n = C.surge_hosts_poll(self.id, rxq.port, rxq.id, txq.id, rx, tx)
  if n < 0 then rc_check(n) end
  return n
end

-- t:poll without receiving: the table takes its frames from those left in
-- rx (by another table's poll of the same queue), the rest stay there.
function Table:take(txq, rx, tx)
  check.self(self, Table, "hosts:take")
  check.handle(txq, TxQueue, "hosts:take", "txq", "a tx queue (port:txq(i))")
  check.burst(rx, "hosts:take", "rx")
  check.burst(tx, "hosts:take", "tx")
  if rx == tx then check.raise("hosts:take: rx and tx: expected two bursts, got one burst twice") end
  local n = C.surge_hosts_take(self.id, txq.port, txq.id, rx, tx)
  if n < 0 then rc_check(n) end
  return n
end

-- The events since the last call, oldest first: { host = i (0-based), kind = "bound", ip = "a.b.c.d", ms = .. }
function Table:events()
  check.self(self, Table, "hosts:events")
  local out = {}
  while true do
    local n = rc_check(C.surge_hosts_events(self.id, self.evbuf, 256))
    for i = 0, n - 1 do
      local e = self.evbuf[i]
      local kind = M.EVENTS[e.kind]
      if e.kind >= 16 then        -- IPv6: the address's kind is in ip4
        local a = M.ADDR6[e.ip4]
        out[#out + 1] = { host = e.host, kind = kind, addr = a, ip = self:host6(e.host)[a], ms = e.ms }
      else
        local ev = { host = e.host, kind = kind, ip = ip4.addr_text(e.ip4), ms = e.ms }
        if e.kind >= C.SURGE_HOSTS_EV_JOINED then ev.membership = e.membership end
        out[#out + 1] = ev
      end
    end
    if n < 256 then return out end
  end
end

function Table:stats()
  check.self(self, Table, "hosts:stats")
  rc_check(C.surge_hosts_stats(self.id, self.st))
  local r, st = { state = {} }, self.st
  for _, f in ipairs(M.FIELDS) do r[f] = tonumber(st[f]) end
  for i = 0, C.SURGE_HOST_STATES - 1 do r.state[M.STATES[i]] = tonumber(st.state[i]) end
  local cum = 0
  for k = 1, #M.BIND_BUCKETS do
    cum = cum + tonumber(st.bind_ms[k - 1])
    r[M.BIND_BUCKETS[k]] = cum
  end
  r.bind_count = cum
  r.bind_seconds = r.bind_ms_sum / 1e3
  r.mode = mode_of(self.conf)
  r.counters = self:counter_names()
  return r
end

-- Host i (0-based): { state, ip, mac, server, lease, bound_ms, tries }
function Table:host(i)
  check.self(self, Table, "hosts:host")
  check.expect(i, ("integer 0..%d"):format(self.count - 1), "hosts:host", "i")
  return M.host_of(self.id, i)
end

-- The bound hosts' addresses, in host order (at most `max`): { mac = {
-- "02:..", ... }, ip = { "10.1.0.7", ... }, host = { i, ... } }: the
-- sources of a flow (t:source_fields()) or of anything else a script sends
function Table:bound_addresses(max)
  check.self(self, Table, "hosts:bound_addresses")
  max = check.expect(max, "integer? >=1", "hosts:bound_addresses", "max") or self.count
  if self.conf.server == 1 then check.raise("hosts:bound_addresses: a DHCP server's table holds no hosts of its own") end
  local r = { mac = {}, ip = {}, host = {} }
  local h = ffi.new("struct surge_hosts_host")
  for i = 0, self.count - 1 do
    if #r.ip >= max then break end
    rc_check(C.surge_hosts_host(self.id, i, h))
    if h.state == C.SURGE_HOST_BOUND or h.state == C.SURGE_HOST_RENEWING or h.state == C.SURGE_HOST_REBINDING then
      r.mac[#r.mac + 1] = eth.mac_text(ffi.cast("const uint8_t *", h.mac))
      r.ip[#r.ip + 1] = ip4.addr_text(h.ip4)
      r.host[#r.host + 1] = i
    end
  end
  return r
end

-- Flow fields (surge.flow's `fields`, with combine = "zip") that take each
-- packet's source MAC and IPv4 address from the next bound host in turn:
--   surge.flow{ template = t, fields = hosts_table:source_fields(), combine = "zip" }
-- Errors when no host is bound (a flow needs a value).
function Table:source_fields(max)
  check.self(self, Table, "hosts:source_fields")
  local a = self:bound_addresses(max)
  if #a.ip == 0 then check.raise("hosts:source_fields: no host of the table is bound yet") end
  return { { "eth.src", { list = a.mac } }, { "ip4.src", { list = a.ip } } }
end

-- Host i's IPv6 side: { ["link-local"] = "fe80::..", static = "..", slaac = "..",
-- tentative = { kinds }, assigned = { kinds }, valid = s, preferred = s }
-- (an address the host has none of is nil; lifetimes nil without a prefix)
function Table:host6(i)
  check.self(self, Table, "hosts:host6")
  check.expect(i, ("integer 0..%d"):format(self.count - 1), "hosts:host6", "i")
  local h = ffi.new("struct surge_hosts_host6")
  rc_check(C.surge_hosts_host6(self.id, i, h))
  local r = { tentative = {}, assigned = {} }
  for bitv, name in pairs(M.ADDR6) do
    local a = name == "link-local" and h.ll or name == "static" and h.static6 or h.slaac
    if a[0] ~= 0 then r[name] = ip6.addr_text(ffi.cast("const uint8_t *", a)) end
    if bit.band(h.tentative, bitv) ~= 0 then r.tentative[#r.tentative + 1] = name end
    if bit.band(h.assigned, bitv) ~= 0 then r.assigned[#r.assigned + 1] = name end
  end
  table.sort(r.tentative)
  table.sort(r.assigned)
  if r.slaac then r.valid, r.preferred = tonumber(h.valid_s), tonumber(h.preferred_s) end
  if self.conf.dhcp6 ~= 0 then
    local d = { state = M.DHCP6_STATES[h.dhcp6_state], iaid = tonumber(h.iaid), t1 = tonumber(h.t1_s),
      t2 = tonumber(h.t2_s), valid = tonumber(h.dhcp6_valid_s) }
    if h.dhcp6_addr[0] ~= 0 then d.addr = ip6.addr_text(ffi.cast("const uint8_t *", h.dhcp6_addr)) end
    if h.pd_len ~= 0 then d.prefix = ip6.addr_text(ffi.cast("const uint8_t *", h.pd)) .. "/" .. h.pd_len end
    r.dhcp6 = d
  end
  return r
end

-- DHCP: hosts first..first+n-1 (0-based) holding a lease release it (sent
-- at the next polls); returns how many did.
function Table:release(first, n)
  check.self(self, Table, "hosts:release")
  first = check.expect(first, ("integer? 0..%d"):format(self.count - 1), "hosts:release", "first") or 0
  n = check.expect(n, ("integer? 0..%d"):format(self.count - first), "hosts:release", "n") or self.count - first
  return rc_check(C.surge_hosts_release(self.id, first, n))
end

-- Multicast (docs/hosts.md "Multicast"): t:join{ group, groups, first,
-- hosts, version, robustness, interval } -> a membership id; t:leave(m);
-- t:membership(m) -> { state, version, version_now, reports, leaves, queries, ... }
function Table:join(o)
  check.self(self, Table, "hosts:join")
  local m = mcast.join(self, o)
  self.joined = true
  return m
end
function Table:leave(m, first, n) check.self(self, Table, "hosts:leave") return mcast.leave(self, m, first, n) end
function Table:membership(m) check.self(self, Table, "hosts:membership") return mcast.membership(self, m) end

local ping_keys = { target = 1, via = 1, mac = 1, first = 1, hosts = 1, count = 1, interval = 1, timeout = 1, size = 1 }

-- Ping (docs/hosts.md "Ping"): hosts first..first+hosts-1 each send `count`
-- echo requests to target (IPv4 or IPv6) from their own address, `interval`
-- seconds apart, paced by the table's rate within a round; the next hop's
-- MAC is `mac`, or ARP's / ND's answer for `via` (a gateway) or the target.
-- Runs in the polls; t:settled() is false until each request got its reply
-- or timed out (`timeout` seconds). The counters: ping_tx, ping_reply,
-- ping_timeout, ping_rtt_{min,max,sum}_us, ... in t:stats().
function Table:ping(o)
  local fn = "hosts:ping"
  check.self(self, Table, fn)
  o = check.options(o, ping_keys, fn)
  local p = ffi.new("struct surge_hosts_ping")
  local target = check.expect(o.target, "string", fn, "target (an IPv4 or IPv6 address)")
  local six = target:find(":", 1, true) ~= nil
  local function addr(text, what)
    local a
    if six then
      a = parsed(ip6.addr, text, fn .. ": " .. what)
      if a == string.rep("\0", 16) or a:byte(1) == 0xff then
        check.raise(("%s: %s: '%s' is %s"):format(fn, what, text, a:byte(1) == 0xff and "a multicast address" or
          "no station's address"))
      end
    else
      local v = parsed(ip4.addr, text, fn .. ": " .. what)
      if v == 0 or v >= 0xe0000000 then
        check.raise(("%s: %s: '%s' is %s"):format(fn, what, text, v == 0 and "no station's address" or
          v == 0xffffffff and "the broadcast address" or "a multicast address"))
      end
      a = string.char(bit.band(bit.rshift(v, 24), 255), bit.band(bit.rshift(v, 16), 255), bit.band(bit.rshift(v, 8), 255),
        bit.band(v, 255))
    end
    return a
  end
  ffi.copy(p.target, addr(target, "target"), six and 16 or 4)
  p.af = six and 6 or 4
  if o.via ~= nil then
    local via = check.expect(o.via, "string", fn, "via (the gateway's address)")
    if (via:find(":", 1, true) ~= nil) ~= six then check.raise(("%s: via: '%s' is not of the target's family"):format(fn, via)) end
    ffi.copy(p.via, addr(via, "via"), six and 16 or 4)
  end
  if o.mac ~= nil then
    ffi.copy(p.mac, parsed(eth.mac, check.expect(o.mac, "string", fn, "mac (the next hop's MAC)"), fn .. ": mac"), 6)
  end
  if six and self.conf.ip6 ~= 1 then check.raise(fn .. ": target: an IPv6 target, and the hosts have no IPv6 (ip6)") end
  if not six and (self.conf.server == 1 or (self.conf.dhcp ~= 1 and self.conf.ip4 == 0)) then
    check.raise(fn .. ": target: an IPv4 target, and the hosts have no IPv4 address (ip or dhcp)")
  end
  p.first = check.expect(o.first, ("integer? 0..%d"):format(self.count - 1), fn, "first") or 0
  p.nhosts = check.expect(o.hosts, ("integer? 1..%d"):format(self.count - p.first), fn, "hosts") or self.count - p.first
  p.count = check.expect(o.count, "integer? 1..65535", fn, "count (requests a host)") or 1
  p.interval_ms = (check.expect(o.interval, "number? 0.001..3600", fn, "interval (seconds)") or 1) * 1000
  p.timeout_ms = (check.expect(o.timeout, "number? 0.001..60", fn, "timeout (seconds)") or 1) * 1000
  p.size = check.expect(o.size, ("integer? 8..%d"):format(six and 1452 or 1472), fn, "size (echo data bytes)") or 56
  rc_check(C.surge_hosts_ping(self.id, p))
  self.pinged = true
end

-- true when no host waits on anything (bound, in conflict, gave up or released)
function Table:settled()
  check.self(self, Table, "hosts:settled")
  return rc_check(C.surge_hosts_settled(self.id)) == 1
end

-- The counters as surge counters PREFIX.NAME (the results file, --metrics)
-- and the hosts in each state as gauges PREFIX.state.STATE; t:run
-- publishes them and keeps them current.
-- Only the counters of the protocols the table runs are published and
-- printed: a server's own,
-- DHCPv4's with dhcp, ARP's and ICMP's with an IPv4 side (probes,
-- announcements and conflicts: static hosts'), IPv6's with ip6, DHCPv6's
-- with dhcp6, IGMP's and MLD's once the table joined groups.
local COMMON = { rx_frames = true, rx_other = true, rx_bad = true, tx_frames = true, tx_nobufs = true, tx_full = true,
  events_lost = true, bytes_per_host = true }
-- DHCPv4's scripted behaviour (d: its struct surge_hosts_dhcp4, or false)
-- adds the counters of what it asked for only: a run's 64 hold a client
-- table and its server's
local SCRIPTED = { dhcp_declined = function(_, d) return d and d.arp_check == 1 end,
  arp_probe_tx = function(c, d) return c.dhcp ~= 1 or d and d.arp_check == 1 end,
  arp_conflict = function(c, d) return c.dhcp ~= 1 or d and d.arp_check == 1 end,
  dhcp_left_renewals = function(c) return c.renewals ~= 0 end,
  dhcp_left_after = function(_, d) return d and d.leave_after_ms ~= 0 end,
  dhcp_overload = function() return false end,
  dhcp_relay_mismatch = function(_, d) return d and d.relay4 ~= 0 end,
  dhcp_relay_unresolved = function(_, d) return d and d.relay4 ~= 0 end }
local function runs(c, k, joined, d, pinged)
  local v4 = c.dhcp == 1 or c.ip4 ~= 0
  if COMMON[k] then return true end
  if SCRIPTED[k] and not SCRIPTED[k](c, d) then return false end
  if c.server == 1 then return k:find("^dhcps_") or k == "dhcp_bad" or k == "dhcp_stray" end
  if k:find("^dhcps_") or k == "bind_ms_sum" then return false end
  if k:find("^igmp_") or k:find("^mld_") or k == "mcast_bad" then return joined end
  if k:find("^ping_") then return pinged end
  if k:find("^dhcp6_") or k == "hosts6_dhcp" then return c.dhcp6 ~= 0 end
  if k:find("^dhcp_") or k == "bind_seconds" then return c.dhcp == 1 end
  -- DHCP hosts probe too, with the ARP check (arp_check), and count its conflicts
  if k == "arp_probe_tx" or k == "arp_conflict" then return v4 end
  if k:find("^arp_announce") then return v4 and c.dhcp ~= 1 end
  if k:find("^arp_") or k:find("^icmp_") then return v4 end
  if k:find("^nd_") or k:find("^icmp6_") or k:find("^hosts6_") then return c.ip6 == 1 end
  return true
end

-- The names of the counters the table runs (stats() has them all)
function Table:counter_names()
  check.self(self, Table, "hosts:counter_names")
  local names = {}
  for _, k in ipairs(M.FIELDS) do
    if runs(self.conf, k, self.joined, self.dhcp4, self.pinged) then names[#names + 1] = k end
  end
  if runs(self.conf, "bind_seconds") then names[#names + 1] = "bind_seconds" end
  return names
end

-- the prefixes this lcore's tables published (their ids): two tables'
-- counters in one cell would each overwrite the other's, the last sync
-- winning (tables on other lcores add up: a cell each)
local published = {}

function Table:publish()
  check.self(self, Table, "hosts:publish")
  local owner = published[self.prefix]
  if owner ~= nil and owner ~= self.id then
    check.raise(("hosts:publish: prefix '%s' is host table %d's already: its counters would overwrite this one's "
      .. "(hosts.new's prefix: one a table)"):format(self.prefix, owner))
  end
  published[self.prefix] = self.id
  local mode = mode_of(self.conf)
  local cells, gauges = counter.publish(self.prefix, self:counter_names(), GAUGES)
  if mode == "dhcp" then
    for k = 1, #M.BIND_BUCKETS do
      local c = counter.counter(self.prefix .. "." .. M.BIND_BUCKETS[k])
      c:add(0)
      cells[#cells + 1] = { k - 1, c.cell }   -- a number: the histogram's bucket, cumulated (sync)
    end
  end
  local v4 = self.conf.dhcp == 1 or self.conf.ip4 ~= 0 or self.conf.server == 1
  local check_arp = self.dhcp4 and self.dhcp4.arp_check == 1
  for _, i in ipairs(v4 and M.MODE_STATES[mode] or {}) do
    -- a DHCP client probes and declines only with the ARP check
    if mode ~= "dhcp" or check_arp or (i ~= C.SURGE_HOST_PROBING and i ~= C.SURGE_HOST_DECLINED) then
      local g = counter.gauge(self.prefix .. ".state." .. M.STATES[i])
      g:set(0)                                  -- its cell is made by the first write
      gauges[#gauges + 1] = { i, g.cell }
    end
  end
  self.cells, self.gauges = cells, gauges
  self.cum = ffi.new("uint64_t[?]", C.SURGE_HOSTS_BIND_BUCKETS)
  return self
end

-- Copies the table's counters into its published cells (no allocation).
function Table:sync()
  check.self(self, Table, "hosts:sync")
  local cells = self.cells
  if not cells then return end
  local st, cum = self.st, self.cum
  C.surge_hosts_stats(self.id, st)
  cum[0] = st.bind_ms[0]
  for k = 1, C.SURGE_HOSTS_BIND_BUCKETS - 1 do cum[k] = cum[k - 1] + st.bind_ms[k] end
  for i = 1, #cells do
    local c = cells[i]
    local k = c[1]
    c[2][0] = type(k) == "number" and cum[k] or st[k]
  end
  local g = self.gauges
  for i = 1, #g do
    local c = g[i]
    local k = c[1]
    c[2][0] = type(k) == "number" and tonumber(st.state[k])
      or k == "bind_seconds" and tonumber(st.bind_ms_sum) / 1e3 or tonumber(st[k])
  end
end

local run_keys = { rxq = 1, txq = 1, pool = 1, seconds = 1, until_settled = 1, on_event = 1, burst = 1 }

-- The loop: poll, free what is not the hosts', hand each event to
-- o.on_event; until o.seconds passed, (with until_settled) every host
-- settled, or the run stops. Returns t:stats().
function Table:run(o)
  local fn = "hosts:run"
  check.self(self, Table, fn)
  local rxq, txq, pool, nb, seconds
  o, rxq, txq, pool, nb, seconds = poll_loop.options(o, run_keys, fn, true)
  local on_event = check.expect(o.on_event, "function?", fn, "on_event")
  pool = pool or self:pool()
  local rx, tx = pool:burst(nb), pool:burst(nb)
  return poll_loop.run(self, seconds, 0.001, function()
    if self:poll(rxq, txq, rx, tx) > 0 then rx:free() end
  end, function()
    if on_event then for _, ev in ipairs(self:events()) do on_event(ev) end end
    return o.until_settled and self:settled()
  end, function()
    rx:free()
  end)
end

-- The counters of stats() as lines "  name value", in name order (those
-- the table runs: stats().counters)
function M.format_counters(st)
  local names, lines = {}, {}
  for _, k in ipairs(st.counters or M.FIELDS) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do lines[#lines + 1] = ("  %s %d"):format(k, st[k]) end
  return table.concat(lines, "\n")
end

-- "bound 998, conflict 2" from stats().state, the states with hosts in them
function M.format_states(st)
  local parts = {}
  for i = 0, #M.STATES do
    local s = M.STATES[i]
    if (st.state[s] or 0) > 0 then parts[#parts + 1] = ("%s %d"):format(s, st.state[s]) end
  end
  return table.concat(parts, ", ")
end

return M
