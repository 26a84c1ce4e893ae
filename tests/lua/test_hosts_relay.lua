-- DHCPv4 relay mode (issue 33, docs/hosts.md "DHCP relay") on `surge
-- test`'s ring port: the hosts' messages leave as a relay agent's, byte
-- for byte (the relay's MACs and addresses, UDP 67 to 67, hops 1, giaddr,
-- option 82 last before the end, the IPv4 checksum and lengths); relayed
-- replies bind the hosts, an option 82 not echoed is counted; the relay
-- answers ARP for its address and learns the server's MAC by ARP; the
-- refusals at the caller's line.
local surge = require "surge"
local ffi = require "ffi"
local bit = require "bit"
local hosts = require "surge.hosts"
local testrun = require "surge.vm.testrun"
local cksum = require "surge.proto.checksum"
local errors, at = testrun.errors, testrun.at

local T = {}

local rxq, txq, send_frame
local function setup()
  local r = testrun.ring()
  rxq, txq, send_frame = r.rxq, r.txq, r.send
end

local RELAY = string.char(10, 2, 0, 2)          -- 10.2.0.2
local SERVER = string.char(10, 1, 0, 1)         -- 10.1.0.1
local GW = string.char(2, 0x99, 0, 0, 0, 1)

local function be16(s, i) return s:byte(i) * 256 + s:byte(i + 1) end

-- a relayed message (IPv4, UDP 67 to 67, BOOTP op 1) of the frame's bytes f: its options, { code, value } each
local function options(f)
  local r, i = {}, 283
  while i <= #f do
    local c = f:byte(i)
    if c == 255 then r[#r + 1] = { 255 } return r end
    if c ~= 0 then
      local l = f:byte(i + 1)
      r[#r + 1] = { c, f:sub(i + 2, i + 1 + l) }
      i = i + 1 + l
    end
    i = i + 1
  end
  error("no end option")
end

-- the frame at p (len bytes) is a relayed BOOTREQUEST: its bytes, else nil
local function relayed(p, len)
  if len > 284 and p[23] == 17 and p[35] == 67 and p[37] == 67 and p[42] == 1 then return ffi.string(p, len) end
end

-- the server's relayed reply (msg 2 OFFER, 5 ACK) to request f: address
-- 10.20.0.<last>, option 82 agent (nil: none), to the relay's MAC rmac
local function reply(f, msg, last, agent, rmac)
  local opts = string.char(53, 1, msg, 54, 4) .. SERVER .. string.char(51, 4, 0, 0, 14, 16, 1, 4, 255, 255, 255, 0)
  if agent then opts = opts .. string.char(82, #agent) .. agent end
  opts = opts .. "\255"
  local bootp = string.char(2, 1, 6, 0) .. f:sub(47, 50) .. ("\0"):rep(8) .. string.char(10, 20, 0, last)
    .. ("\0"):rep(4) .. RELAY .. f:sub(71, 76) .. ("\0"):rep(10 + 64 + 128) .. string.char(99, 130, 83, 99) .. opts
  local udp = string.char(0, 67, 0, 67, bit.rshift(8 + #bootp, 8), bit.band(8 + #bootp, 255), 0, 0) .. bootp
  local iplen = 20 + #udp
  send_frame(rmac .. GW .. string.char(8, 0, 0x45, 0, bit.rshift(iplen, 8), bit.band(iplen, 255), 0, 0, 0, 0, 64, 17,
    0, 0) .. SERVER .. RELAY .. udp)
end

-- runs t until cond(t, seen) or 5 s, answering each relayed DISCOVER and REQUEST
-- with answer(f, msg) (nil: none); returns the relayed requests seen
local function drive(t, cond, answer)
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local seen = {}
  local deadline = surge.tsc() + 5 * surge.tsc_hz()
  while surge.tsc() < deadline and not cond(t, seen) do
    local n = t:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local f = relayed(rx.data[i], rx.len[i])
      if f then
        seen[#seen + 1] = f
        if answer then answer(f, f:byte(285)) end
      elseif rx.len[i] >= 42 and rx.data[i][12] == 8 and rx.data[i][13] == 6 then
        seen[#seen + 1] = ffi.string(rx.data[i], rx.len[i])
      end
    end
    rx:free()
  end
  return seen
end

function T.relayed_messages_byte_for_byte_and_replies_bind_with_option_82_checked()
  setup()
  -- relay MAC: the one after the last host's (02:0a:00:00:00:46)
  local t = hosts.new{ count = 2, mac = "02:0a:00:00:00:44", dhcp = true, subnet = "10.20.0.0/24", rto = 0.05,
    circuit_id = "port%d", remote_id = "olt-9", relay = { address = "10.2.0.2", server = "10.1.0.1",
    gateway_mac = "02:99:00:00:00:01" } }
  local rmac = string.char(2, 0x0a, 0, 0, 0, 0x46)
  local seen = drive(t, function(x) return x:stats().state.bound == 2 end, function(f, msg)
    local host = f:byte(76) - 0x44
    local agent = host == 0 and "\1\5port0\2\5olt-9" or "\1\5port9\2\5olt-9"
    reply(f, msg == 1 and 2 or 5, 100 + host, agent, rmac)
  end)
  local st = t:stats()
  assert(st.state.bound == 2, hosts.format_states(st))
  assert(t:host(0).ip == "10.20.0.100" and t:host(1).ip == "10.20.0.101", t:host(0).ip)
  -- host 1's OFFER and ACK echoed another option 82
  assert(st.dhcp_relay_mismatch == 2 and st.dhcp_relay_unresolved == 0 and st.dhcp_bad == 0,
    st.dhcp_relay_mismatch .. " " .. st.dhcp_relay_unresolved)
  local n = 0
  for _, f in ipairs(seen) do
    if #f > 284 then
      n = n + 1
      local host = f:byte(76) - 0x44
      assert(f:sub(1, 6) == GW and f:sub(7, 12) == rmac, "to the gateway, from the relay's MAC")
      assert(f:sub(27, 30) == RELAY and f:sub(31, 34) == SERVER, "IPv4 from the relay to the server")
      assert(be16(f, 35) == 67 and be16(f, 37) == 67, "UDP 67 to 67")
      local iplen = be16(f, 17)
      assert(#f == 14 + iplen and be16(f, 39) == iplen - 20, "lengths")
      local ip = ffi.new("uint8_t[20]")
      ffi.copy(ip, f:sub(15, 34), 20)
      assert(cksum.sum(ip, 20) == 0xffff or cksum.sum(ip, 20) == 0, "IPv4 checksum")
      assert(be16(f, 41) == 0, "UDP checksum none (0: allowed over IPv4)")
      assert(f:byte(46) == 1, "hops 1")
      assert(f:sub(67, 70) == RELAY, "giaddr the relay's")
      assert(f:sub(71, 76) == string.char(2, 0x0a, 0, 0, 0, 0x44 + host), "chaddr the host's")
      local o = options(f)
      assert(o[#o][1] == 255 and o[#o - 1][1] == 82, "option 82 last before the end")
      assert(o[#o - 1][2] == "\1\5port" .. host .. "\2\5olt-9", "option 82: " .. o[#o - 1][2])
    end
  end
  assert(n >= 4, n)
end

-- ARP: the relay answers for its address from its MAC; a bound host for
-- its own (the remote pool's) address, as without a relay
function T.the_relay_and_the_bound_hosts_answer_arp()
  setup()
  local t = hosts.new{ count = 1, mac = "02:0a:00:00:00:50", dhcp = true, subnet = "10.20.0.0/24", rto = 0.05,
    relay = { address = "10.2.0.2", server = "10.1.0.1", gateway_mac = "02:99:00:00:00:01", mac = "02:0a:00:00:00:ee" } }
  local rmac = string.char(2, 0x0a, 0, 0, 0, 0xee)
  drive(t, function(x) return x:stats().state.bound == 1 end, function(f, msg)
    reply(f, msg == 1 and 2 or 5, 7, nil, rmac)
  end)
  assert(t:stats().state.bound == 1 and t:stats().dhcp_relay_mismatch == 0)
  local asker = string.char(2, 0x99, 0, 0, 0, 9)
  local function ask(tpa)
    send_frame(("\255"):rep(6) .. asker .. string.char(8, 6, 0, 1, 8, 0, 6, 4, 0, 1) .. asker
      .. string.char(10, 2, 0, 1) .. ("\0"):rep(6) .. tpa)
  end
  ask(RELAY)
  ask(string.char(10, 20, 0, 7))
  local got = {}
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  for _ = 1, 50 do
    local n = t:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local p = rx.data[i]
      if p[12] == 8 and p[13] == 6 and p[21] == 2 then got[#got + 1] = ffi.string(p, 42) end
    end
    rx:free()
  end
  assert(#got == 2, #got)
  table.sort(got)
  -- the relay's reply: 10.2.0.2 is at 02:0a:00:00:00:ee; the host's: 10.20.0.7 at its MAC
  local host = string.char(2, 0x0a, 0, 0, 0, 0x50)
  local want = { asker .. host .. string.char(8, 6, 0, 1, 8, 0, 6, 4, 0, 2) .. host .. string.char(10, 20, 0, 7),
    asker .. rmac .. string.char(8, 6, 0, 1, 8, 0, 6, 4, 0, 2) .. rmac .. RELAY }
  table.sort(want)
  for k = 1, 2 do assert(got[k]:sub(1, 32) == want[k], "ARP reply " .. k) end
end

-- no gateway_mac: the relay ARPs for the server and holds the hosts back
-- until it answers (none of their messages lost); a server that never
-- answers: the hosts start after rto, each message dropped and counted,
-- and every host gives up
function T.the_relay_resolves_the_server_by_arp_or_its_hosts_give_up()
  setup()
  -- held up to rto (2 s) for the ARP reply
  local t = hosts.new{ count = 2, mac = "02:0a:00:00:00:60", dhcp = true, subnet = "10.20.0.0/24", rto = 2,
    relay = { address = "10.2.0.2", server = "10.1.0.1" } }
  local rmac = string.char(2, 0x0a, 0, 0, 0, 0x62)
  local seen = drive(t, function(_, s) return #s > 0 end)
  -- the first frame: the relay's ARP request for the server; the server answers it
  assert(#seen >= 1 and seen[1]:sub(1, 12) == ("\255"):rep(6) .. rmac, "ARP request first")
  local arp = seen[1]
  assert(arp:sub(13, 22) == string.char(8, 6, 0, 1, 8, 0, 6, 4, 0, 1) and arp:sub(23, 28) == rmac
    and arp:sub(29, 32) == RELAY and arp:sub(39, 42) == SERVER, "who has 10.1.0.1, tell 10.2.0.2")
  -- (the ring sent it back to the table, not to a server: answer it now and drive on)
  local st = t:stats()
  assert(st.state.bound == 0 and st.dhcp_discover_tx == 0, "held until the server's MAC is known")
  send_frame(rmac .. GW .. string.char(8, 6, 0, 1, 8, 0, 6, 4, 0, 2) .. GW .. SERVER .. rmac .. RELAY)
  seen = drive(t, function(x) return x:stats().state.bound == 2 end, function(f, msg)
    reply(f, msg == 1 and 2 or 5, 20 + f:byte(76) - 0x60, nil, rmac)
  end)
  st = t:stats()
  assert(st.state.bound == 2 and st.dhcp_relay_unresolved == 0 and st.dhcp_retransmits == 0,
    hosts.format_states(st) .. " unresolved " .. st.dhcp_relay_unresolved)
  for _, f in ipairs(seen) do
    if #f > 284 then assert(f:sub(1, 6) == GW, "to the MAC ARP found") end
  end

  local u = hosts.new{ count = 3, mac = "02:0a:00:00:00:70", dhcp = true, subnet = "10.20.0.0/24", rto = 0.02,
    retries = 2, relay = { address = "10.2.0.2", server = "10.1.0.9" } }
  drive(u, function(x) return x:settled() end)
  st = u:stats()
  assert(st.state.gave_up == 3 and st.dhcp_gave_up == 3, hosts.format_states(st))
  -- each host's 2 DISCOVERs dropped by the relay, none sent
  assert(st.dhcp_relay_unresolved == 6 and st.dhcp_discover_tx == 6, st.dhcp_relay_unresolved)
end

function T.bad_relay_options_are_refused_at_the_callers_line()
  local function new(r, o)
    o = o or {}
    o.count, o.mac, o.dhcp, o.subnet, o.relay = 1, "02:0a:00:00:01:00", true, "10.20.0.0/24", r
    return hosts.new(o)
  end
  errors(at("surge.hosts.new: relay.server (the DHCP server's address): expected a string, got nil", 1),
    function() new{ address = "10.2.0.2" } end)
  errors(at("surge.hosts.new: relay.address: '10.2.0.300' is not an IPv4 address", 1),
    function() new{ address = "10.2.0.300", server = "10.1.0.1" } end)
  errors(at("surge.hosts.new: relay.server: '224.0.0.1' is no unicast address", 1),
    function() new{ address = "10.2.0.2", server = "224.0.0.1" } end)
  errors(at("surge.hosts.new: relay: address and server are the same", 1),
    function() new{ address = "10.2.0.2", server = "10.2.0.2" } end)
  errors(at("surge.hosts.new: relay: unknown option 'giaddr' (address, gateway_mac, mac, server)", 1),
    function() new{ address = "10.2.0.2", server = "10.1.0.1", giaddr = "x" } end)
  errors(at("surge.hosts.new: relay.gateway_mac: 'zz' is not a MAC address (aa:bb:cc:dd:ee:ff)", 1),
    function() new{ address = "10.2.0.2", server = "10.1.0.1", gateway_mac = "zz" } end)
  errors(at("surge_hosts_dhcp4: relay: gateway_mac: a unicast MAC (or none: ARP)", 1),
    function() new{ address = "10.2.0.2", server = "10.1.0.1", gateway_mac = "ff:ff:ff:ff:ff:ff" } end)
  errors(at("surge_hosts_dhcp4: relay: mac: the relay's own unicast MAC", 1),
    function() new{ address = "10.2.0.2", server = "10.1.0.1", mac = "01:00:5e:00:00:01" } end)
  errors(at("surge.hosts.new: hostname, circuit_id, remote_id, vendor_class, client_id, params, options, number, "
    .. "arp_check, decline_wait, leave_after, relay: for DHCPv4 hosts (dhcp = true)", 2), function()
    hosts.new{ count = 1, mac = "02:0a:00:00:01:00", ip = "10.20.0.1", relay = { address = "10.2.0.2", server = "10.1.0.1" } } end)
  errors(at("surge.hosts.new: relay ({ address = .., server = .., gateway_mac = .. }): expected a table, got 1", 1),
    function() new(1) end)
end

return T
