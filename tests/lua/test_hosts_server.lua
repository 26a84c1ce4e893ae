-- surge.hosts.server (issue 33, docs/hosts.md "The DHCP server"): surge's
-- DHCP clients against surge's DHCP server on `surge test`'s ring port (its
-- own loopback): the clients' poll takes the replies and leaves their
-- requests in rx, the server's t:take takes those. A pool of 50: 50 of 51
-- clients bound to 50 distinct addresses of the pool, the server's slots
-- hold exactly the clients' MACs, the 51st refused (counted) and given up;
-- the binding-time histogram adds up; a release empties the pool and the
-- addresses are handed out again; renewals keep the address; a REQUEST for
-- an address the client does not hold is NAKed, byte for byte.
local surge = require("surge")
local ffi = require("ffi")
local bit = require("bit")
local hosts = require("surge.hosts")
local testrun = require("surge.vm.testrun")
local errors, at = testrun.errors, testrun.at

local T = {}

local ring, rxq, txq
local function setup()
  if ring then return end
  ring = surge.port(0, { rxq = 1, txq = 1 })
  rxq, txq = ring:rxq(0), ring:txq(0)
end

-- clients and server in turn until cond() or `seconds`
local function run(c, s, seconds, cond)
  local pool = s:pool(2047)
  local rx, tx = pool:burst(64), pool:burst(64)
  local deadline = surge.tsc() + seconds * surge.tsc_hz()
  while surge.tsc() < deadline do
    c:poll(rxq, txq, rx, tx)
    if s:take(txq, rx, tx) > 0 then rx:free() end      -- every turn: the server's timers run there
    if cond() then return true end
  end
  rx:free()
  return false
end

local function server(count, mac, lease)
  return hosts.server{ count = count, pool = "10.44.0.10", server = "10.44.0.1", mac = mac, lease = lease or 3600,
    prefix_len = 24 }
end

function T.fifty_addresses_for_51_clients_then_released_and_handed_out_again()
  setup()
  local s = server(50, "02:44:00:00:00:01")
  local c = hosts.new{ count = 51, mac = "02:44:01:00:00:01", dhcp = true, subnet = "10.44.0.0/24", retries = 3,
    rto = 0.05, rate = 0, outstanding = 16 }
  assert(run(c, s, 10, function() return c:settled() end), hosts.format_states(c:stats()))
  local cs, ss = c:stats(), s:stats()
  assert(cs.state.bound == 50 and cs.state.gave_up == 1, hosts.format_states(cs))
  assert(ss.state.bound == 50 and ss.dhcps_ack_tx == 50, hosts.format_states(ss) .. " acks " .. ss.dhcps_ack_tx)
  -- the 51st's DISCOVERs went unanswered, each counted
  assert(ss.dhcps_no_address == cs.dhcp_discover_tx - 50 and ss.dhcps_no_address >= 3,
    ss.dhcps_no_address .. " " .. cs.dhcp_discover_tx)
  assert(ss.dhcps_discover_rx == cs.dhcp_discover_tx and ss.dhcps_request_rx == cs.dhcp_request_tx)
  assert(cs.dhcp_offer_rx == ss.dhcps_offer_tx and cs.dhcp_ack_rx == 50 and cs.dhcp_nak_rx == 0)
  -- every client's address is the one the server's slot holds for its MAC
  local leased, addrs = {}, {}
  for i = 0, 49 do
    local l = s:host(i)
    assert(l.state == "bound" and l.ip == ("10.44.0.%d"):format(10 + i) and l.server == "10.44.0.1", l.state)
    leased[l.mac] = l.ip
  end
  local bound = 0
  for i = 0, 50 do
    local h = c:host(i)
    if h.state == "bound" then
      bound = bound + 1
      assert(leased[h.mac] == h.ip, ("client %d %s %s: the server has %s"):format(i, h.mac, h.ip, tostring(leased[h.mac])))
      assert(not addrs[h.ip], "two clients on " .. h.ip)
      addrs[h.ip] = true
      assert(h.server == "10.44.0.1" and h.lease == 3600)
    end
  end
  assert(bound == 50)
  -- the binding-time histogram: its buckets rise to the count of bindings
  assert(cs.bind_count == 50 and cs.bind_le_inf == 50, cs.bind_count)
  local prev = 0
  for _, k in ipairs(hosts.BIND_BUCKETS) do
    assert(cs[k] >= prev, k)
    prev = cs[k]
  end
  assert(cs.bind_ms_sum < 50 * 10000, cs.bind_ms_sum)
  -- released: the pool is the server's again, and 50 new clients bind
  assert(c:release() == 50)
  assert(run(c, s, 5, function() return s:stats().dhcps_release_rx == 50 end), s:stats().dhcps_release_rx)
  ss = s:stats()
  assert(ss.state.idle == 50 and ss.state.bound == 0, hosts.format_states(ss))
  local c2 = hosts.new{ count = 50, mac = "02:44:02:00:00:01", dhcp = true, subnet = "10.44.0.0/24", retries = 3,
    rto = 0.05 }
  assert(run(c2, s, 10, function() return c2:settled() end), hosts.format_states(c2:stats()))
  assert(c2:stats().state.bound == 50 and s:stats().state.bound == 50, hosts.format_states(c2:stats()))
  for i = 0, 49 do assert(s:host(i).mac:match("^02:44:02:"), s:host(i).mac) end
end

-- A server is settled when no offer of its waits for its REQUEST: its free
-- addresses (idle slots) wait on nothing (it was never settled while one was)
function T.a_server_waits_on_its_offers_only()
  setup()
  local s = server(4, "02:44:00:00:05:01")
  assert(s:settled(), "a server with its pool free waits on nothing")
  local c = hosts.new{ count = 1, mac = "02:44:05:00:00:01", dhcp = true, subnet = "10.44.0.0/24", rto = 1 }
  local held = false
  assert(run(c, s, 5, function()
    held = held or s:stats().state.selecting == 1 and not s:settled()
    return c:settled()
  end), hosts.format_states(c:stats()))
  assert(held, "an offer held: not settled")
  assert(s:settled() and s:stats().state.bound == 1 and s:stats().state.idle == 3, hosts.format_states(s:stats()))
  assert(c:release() == 1)
  assert(run(c, s, 5, function() return s:stats().dhcps_release_rx == 1 end))
  assert(s:settled() and s:stats().state.idle == 4, hosts.format_states(s:stats()))
end

-- RFC 2131 4.4.5: renewals at T1 (a lease of 2 s: 1 s) are unicast to the
-- server and ACKed with the same address
function T.renewals_keep_the_address()
  setup()
  local s = server(8, "02:44:00:00:01:01", 2)
  local c = hosts.new{ count = 8, mac = "02:44:03:00:00:01", dhcp = true, subnet = "10.44.0.0/24", retries = 3,
    rto = 0.05 }
  local first = {}
  assert(run(c, s, 10, function()
    for _, e in ipairs(c:events()) do
      if e.kind == "bound" then first[e.host] = e.ip
      elseif e.kind == "renewed" then assert(first[e.host] == e.ip, e.ip) end
    end
    return c:stats().dhcp_renewed >= 8
  end), c:stats().dhcp_renewed)
  local st = c:stats()
  assert(st.dhcp_nak_rx == 0 and st.dhcp_lost == 0 and st.state.bound + st.state.renewing == 8, hosts.format_states(st))
end

-- The server's MAC index after deletions (linear probing's backward
-- shift): three tables of 300 clients whose MACs differ by 2^43 only
-- (02:.., 0a:.., 12:..: the first byte) land on the same cells of the
-- server's index, so each client's cell is a chain of three; the first
-- table releases, the other two renew: every one still found (no NAK),
-- and 300 new clients take the released addresses
function T.releases_leave_the_mac_index_whole()
  setup()
  local s = server(1000, "02:44:00:00:04:01", 2)
  local cs = {}
  for k, b in ipairs({ "02", "0a", "12" }) do
    cs[k] = hosts.new{ count = 300, mac = b .. ":44:08:00:00:01", dhcp = true, subnet = "10.44.0.0/22", retries = 3,
      rto = 0.05, outstanding = 64 }
  end
  local pool = s:pool(2047)
  local rx, tx = pool:burst(64), pool:burst(64)
  local function loop(seconds, cond)
    local deadline = surge.tsc() + seconds * surge.tsc_hz()
    while surge.tsc() < deadline do
      cs[1]:poll(rxq, txq, rx, tx)
      for k = 2, #cs do cs[k]:take(txq, rx, tx) end     -- every table each turn: its timers
      if s:take(txq, rx, tx) > 0 then rx:free() end
      if cond() then return true end
    end
    rx:free()
    return false
  end
  local function total(f) local n = 0 for _, c in ipairs(cs) do n = n + f(c:stats()) end return n end
  assert(loop(10, function() return total(function(st) return st.state.bound end) == 900 end),
    total(function(st) return st.state.bound end))
  assert(cs[1]:release() == 300)
  assert(loop(10, function()
    return cs[2]:stats().dhcp_renewed >= 300 and cs[3]:stats().dhcp_renewed >= 300 and s:stats().dhcps_release_rx == 300
  end), cs[2]:stats().dhcp_renewed .. " " .. cs[3]:stats().dhcp_renewed)
  local ss = s:stats()
  assert(total(function(st) return st.dhcp_nak_rx end) == 0 and ss.dhcps_nak_tx == 0,
    ("%d NAKs: a renewing client not found"):format(ss.dhcps_nak_tx))
  assert(ss.state.bound == 600 and ss.state.idle == 400, hosts.format_states(ss))
  cs[1] = hosts.new{ count = 300, mac = "1a:44:08:00:00:01", dhcp = true, subnet = "10.44.0.0/22", retries = 3,
    rto = 0.05, outstanding = 64 }
  assert(loop(10, function() return cs[1]:settled() end), hosts.format_states(cs[1]:stats()))
  assert(cs[1]:stats().state.bound == 300 and s:stats().dhcps_nak_tx == 0, hosts.format_states(cs[1]:stats()))
end

local function be32(v)
  return string.char(bit.band(bit.rshift(v, 24), 255), bit.band(bit.rshift(v, 16), 255),
    bit.band(bit.rshift(v, 8), 255), bit.band(v, 255))
end

-- A REQUEST (selecting: options 50 and 54) for an address the client was
-- never offered: NAKed, broadcast, its xid and chaddr, option 54 the server
function T.a_request_for_an_address_not_held_is_naked()
  setup()
  local s = server(4, "02:44:00:00:02:01")
  local pool = s:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local mac = "\2\x44\4\0\0\1"
  local bootp = string.char(1, 1, 6, 0) .. "\xde\xad\xbe\xef" .. ("\0"):rep(20) .. mac .. ("\0"):rep(10 + 192)
    .. be32(0x63825363) .. string.char(53, 1, 3, 50, 4, 10, 44, 0, 12, 54, 4, 10, 44, 0, 1, 255)
  bootp = bootp .. ("\0"):rep(300 - #bootp)
  local udp = string.char(0, 68, 0, 67, bit.rshift(8 + #bootp, 8), bit.band(8 + #bootp, 255), 0, 0) .. bootp
  local ip = string.char(0x45, 0, bit.rshift(20 + #udp, 8), bit.band(20 + #udp, 255), 0, 0, 0, 0, 64, 17, 0, 0)
    .. ("\0"):rep(4) .. ("\255"):rep(4) .. udp
  local frame = ("\255"):rep(6) .. mac .. "\8\0" .. ip
  assert(rx:alloc(1) == 1)
  ffi.copy(rx.data[0], frame, #frame)
  rx.len[0] = #frame
  assert(s:take(txq, rx, tx) == 0)          -- taken, not left
  local got
  for _ = 1, 100 do
    local n = rxq:recv(rx)
    if n > 0 then got = ffi.string(rx.data[0], rx.len[0]) rx:free() break end
  end
  assert(got, "no reply")
  local st = s:stats()
  assert(st.dhcps_nak_tx == 1 and st.dhcps_request_rx == 1 and st.dhcps_ack_tx == 0, st.dhcps_nak_tx)
  assert(got:sub(1, 6) == ("\255"):rep(6) and got:sub(7, 12) == "\2\x44\0\0\2\1", "the NAK's Ethernet addresses")
  assert(got:sub(27, 30) == "\10\44\0\1" and got:sub(31, 34) == ("\255"):rep(4), "the NAK's IPv4 addresses")
  assert(got:sub(35, 38) == "\0\67\0\68", "ports 67 -> 68")
  local b = got:sub(43)
  assert(b:byte(1) == 2 and b:sub(5, 8) == "\xde\xad\xbe\xef" and b:sub(17, 20) == "\0\0\0\0" and b:sub(29, 34) == mac)
  assert(b:sub(241, 249) == string.char(53, 1, 6, 54, 4, 10, 44, 0, 1) and b:byte(250) == 255, "NAK options")
end

-- Hosts as flow endpoints: 64 clients bound by the server, then a
-- surge.flow whose source MAC and address cycle over the bound hosts
-- (t:source_fields(), combine = "zip"): each frame's source is one host's
-- binding, in host order, every checksum kept valid
function T.a_flow_takes_its_sources_from_the_bound_hosts()
  setup()
  local s = server(64, "02:44:00:00:03:01")
  local c = hosts.new{ count = 64, mac = "02:44:05:00:00:01", dhcp = true, subnet = "10.44.0.0/24", retries = 3,
    rto = 0.05 }
  errors(at("hosts:source_fields: no host of the table is bound yet", 1), function()
    c:source_fields() end)
  assert(run(c, s, 10, function() return c:settled() end), hosts.format_states(c:stats()))
  local a = c:bound_addresses()
  assert(#a.ip == 64 and #a.mac == 64, #a.ip)
  local tpl = surge.proto.udp{ dst = "10.44.0.1", dport = 9, size = 64 }
  local f = surge.flow{ template = tpl, fields = c:source_fields(), combine = "zip" }
  assert(f:count() == 64, f:count())
  local frames = f:frames(130)
  local decode = require("surge.proto.decode")
  for k, fr in ipairs(frames) do
    local i = (k - 1) % 64
    local h = c:host(i)
    local mac = fr:sub(7, 12):gsub(".", function(ch) return ("%02x:"):format(ch:byte()) end):sub(1, -2)
    local ip = ("%d.%d.%d.%d"):format(fr:byte(27, 30))
    assert(mac == h.mac and ip == h.ip, ("frame %d: %s %s, host %d is %s %s"):format(k, mac, ip, i, h.mac, h.ip))
    assert(a.host[i + 1] == i)
    local text = decode.decode(fr)
    assert(select(2, text:gsub("csum ok", "")) == 2, text)   -- the IPv4 and UDP checksums, verified
  end
  -- a server's table holds no hosts of its own
  errors(at("hosts:bound_addresses: a DHCP server's table holds no hosts of its own", 1), function()
    s:bound_addresses() end)
end

function T.refusals_at_the_callers_line()
  errors(at("surge.hosts.server: a pool of 10 addresses from 255.255.255.250: past 255.255.255.255", 1), function()
    hosts.server{ count = 10, pool = "255.255.255.250", server = "10.0.0.1", mac = "02:00:00:00:00:01" } end)
  errors(at("surge.hosts.server: server: 10.0.0.5 is in its own pool", 1), function()
    hosts.server{ count = 10, pool = "10.0.0.1", server = "10.0.0.5", mac = "02:00:00:00:00:01" } end)
  errors(at("surge.hosts.server: lease (seconds): expected an integer in 1..2000000, got 0", 1), function()
    hosts.server{ count = 10, pool = "10.0.0.10", server = "10.0.0.1", mac = "02:00:00:00:00:01", lease = 0 } end)
  errors(at("surge.hosts.server: pool: '10.0.0' is not an IPv4 address", 1), function()
    hosts.server{ count = 10, pool = "10.0.0", server = "10.0.0.1", mac = "02:00:00:00:00:01" } end)
  errors(at("surge.hosts.server: unknown option 'leases' (count, lease, mac, outer_tpid, outer_vlan, pool, prefix, "
    .. "prefix_len, server, vlan)", 2),
    function() hosts.server{ count = 1, pool = "10.0.0.10", server = "10.0.0.1", mac = "02:00:00:00:00:01", leases = 1 } end)
  -- a pool, or the server's own address, holding a group: handed out as a client's, it would answer ARP for it
  errors(at("surge_hosts_new: the pool 223.255.255.250..224.0.0.3 hold 224.0.0.0, no host's address (multicast "
    .. "224.0.0.0/4 or broadcast)", 2),
    function() hosts.server{ count = 10, pool = "223.255.255.250", server = "10.0.0.1", mac = "02:00:00:00:00:01" } end)
  errors(at("surge_hosts_new: the server's address 224.0.0.1..224.0.0.1 hold 224.0.0.1, no host's address (multicast "
    .. "224.0.0.0/4 or broadcast)", 2),
    function() hosts.server{ count = 10, pool = "10.0.0.10", server = "224.0.0.1", mac = "02:00:00:00:00:01" } end)
end

return T
