-- surge.hosts (issue 33, docs/hosts.md) on `surge test`'s ring port (its
-- own loopback: what the hosts send comes back to the poll, which leaves
-- what is not theirs in rx): a DHCP server written here answers the
-- clients' DISCOVERs and REQUESTs left in rx, well or badly. A proper
-- server binds every client and a release is sent for each; a lease of 0,
-- garbage and a NAK storm are counted (dhcp_bad, dhcp_nak_rx) and every
-- client ends in gave_up after its retries: no crash, no hang, every mbuf
-- back. Then the refusals of surge.hosts.new, each at the caller's line.
local surge = require("surge")
local ffi = require("ffi")
local bit = require("bit")
local hosts = require("surge.hosts")
local counter = require("surge.counter")
local testrun = require("surge.vm.testrun")
local cksum = require("surge.proto.checksum")
local errors, at = testrun.errors, testrun.at

local T = {}

local rxq, txq, send_frame
local function setup()
  local r = testrun.ring()
  rxq, txq, send_frame = r.rxq, r.txq, r.send
end

local function be32(v)
  return string.char(bit.band(bit.rshift(v, 24), 255), bit.band(bit.rshift(v, 16), 255),
    bit.band(bit.rshift(v, 8), 255), bit.band(v, 255))
end

-- A BOOTREPLY to the request at p (a DISCOVER or REQUEST from a host):
-- message type msg, lease `lease`; garbage: options that run past the end
local function reply(p, msg, lease, garbage, yiaddr)
  local chaddr = ffi.string(p + 70, 6)
  local xid = ffi.string(p + 46, 4)
  local yi = be32(yiaddr or 0x0a090000 + 100 + p[75])   -- 10.9.0.100 + the MAC's last byte
  local opts
  if garbage then
    opts = string.char(53, 1, msg, 51, 200, 0, 0)         -- a length past the end, no end option
  else
    opts = string.char(53, 1, msg, 54, 4, 10, 9, 0, 1, 51, 4) .. be32(lease) .. string.char(1, 4, 255, 255, 0, 0, 255)
  end
  local bootp = string.char(2, 1, 6, 0) .. xid .. ("\0"):rep(8) .. yi .. ("\0"):rep(8) .. chaddr .. ("\0"):rep(10)
    .. ("\0"):rep(192) .. be32(0x63825363) .. opts
  local udp = string.char(0, 67, 0, 68) .. string.char(bit.rshift(8 + #bootp, 8), bit.band(8 + #bootp, 255), 0, 0)
    .. bootp
  local iplen = 20 + #udp
  local ip = string.char(0x45, 0, bit.rshift(iplen, 8), bit.band(iplen, 255), 0, 0, 0, 0, 64, 17, 0, 0, 10, 9, 0, 1)
    .. yi .. udp
  local frame = chaddr .. string.char(2, 0, 0, 0, 0, 0x99, 8, 0) .. ip
  send_frame(frame)
end

-- frames left in rx that are a host's DHCP request: answered by `mode`
local function serve(rx, n, mode, seen)
  for i = 0, n - 1 do
    local p = rx.data[i]
    if rx.len[i] >= 285 and p[12] == 8 and p[13] == 0 and p[23] == 17 and p[37] == 67 and p[42] == 1 then
      local msg = p[284]                                   -- option 53 comes first in a host's options
      seen[msg] = (seen[msg] or 0) + 1
      if mode == "garbage" then reply(p, 2, 0, true)
      elseif mode == "misordered" then
        -- each answer out of turn first (RFC 2131 4.4: an OFFER answers a
        -- DISCOVER, an ACK or NAK a REQUEST; 4, DHCPDECLINE, never a client)
        if msg == 1 then reply(p, 5, 60) reply(p, 6, 0) reply(p, 4, 0) reply(p, 2, 60)
        elseif msg == 3 then reply(p, 2, 60) reply(p, 5, 60) end
      elseif msg == 1 then reply(p, 2, 60)                 -- DISCOVER: an OFFER
      elseif msg == 3 then
        if mode == "ok" then reply(p, 5, 60)
        elseif mode == "lease2" then reply(p, 5, 2)         -- T1 1 s
        elseif mode == "silent" then                        -- binds, never renews
          if p[54] == 0 then reply(p, 5, 2) end
        elseif mode == "lease0" then reply(p, 5, 0)
        elseif mode == "group" then reply(p, 5, 60, false, 0xe0000005)   -- an ACK of 224.0.0.5
        elseif mode == "bcast" then reply(p, 5, 60, false, 0xffffffff)
        elseif mode == "nak" then reply(p, 6, 0) end
      end
    end
  end
end

local function storm(mode, mac, release, rto)
  setup()
  local t = hosts.new{ count = 4, mac = mac, dhcp = true, subnet = "10.9.0.0/24", retries = 3, rto = rto or 0.02 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local seen = {}
  local deadline = surge.tsc() + 5 * surge.tsc_hz()
  local function loop()
    while surge.tsc() < deadline do
      local n = t:poll(rxq, txq, rx, tx)
      serve(rx, n, mode, seen)
      rx:free()
      if t:settled() then return end
    end
    error(mode .. ": not settled in 5 s: " .. hosts.format_states(t:stats()))
  end
  loop()
  local st = t:stats()
  if release then
    assert(t:release() == 4)
    loop()
    -- the DHCPRELEASEs come back around the ring: seen by the server
    for _ = 1, 100 do serve(rx, t:poll(rxq, txq, rx, tx), mode, seen) rx:free() end
  end
  return st, t:stats(), seen, t:events()
end

function T.a_proper_server_binds_and_the_release_is_sent()
  local st, after, seen, evs = storm("ok", "02:09:00:00:01:01", true)
  assert(st.state.bound == 4, hosts.format_states(st))
  assert(st.dhcp_ack_rx == 4 and st.dhcp_offer_rx == 4 and st.dhcp_bad == 0, st.dhcp_ack_rx)
  assert(after.state.released == 4 and after.dhcp_release_tx == 4, hosts.format_states(after))
  assert(seen[7] == 4, "the server saw 4 DHCPRELEASEs, got " .. tostring(seen[7]))
  local bound = 0
  for _, e in ipairs(evs) do if e.kind == "bound" then bound = bound + 1 end end
  assert(bound == 4, bound)
end

-- RFC 2131 4.4.5: at T1 (half the lease) a host renews with a REQUEST
-- unicast to the server that bound it (its MAC and address; ciaddr its
-- own, no requested address or server option), the ACK keeps its address;
-- with renewals = 1, at the next T1 it releases instead.
function T.renew_at_t1_unicast_then_release_after_the_renewals()
  setup()
  local t = hosts.new{ count = 4, mac = "02:09:00:00:05:01", dhcp = true, subnet = "10.9.0.0/24", retries = 3,
    rto = 0.05, renewals = 1 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local seen, renew_ok, bad = {}, 0, {}
  local deadline = surge.tsc() + 8 * surge.tsc_hz()
  while surge.tsc() < deadline and t:stats().state.released < 4 do
    local n = t:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local p = rx.data[i]
      if rx.len[i] >= 285 and p[37] == 67 and p[42] == 1 and p[284] == 3 and p[54] ~= 0 then   -- ciaddr set
        -- a renewal: to the server's MAC and address, from the host's, ciaddr the leased address
        local mac_ok = ffi.string(p, 6) == "\2\0\0\0\0\x99"
        local ip_ok = ffi.string(p + 30, 4) == "\10\9\0\1" and ffi.string(p + 26, 4) == ffi.string(p + 54, 4)
          and p[57] == 100 + p[75]
        if mac_ok and ip_ok then renew_ok = renew_ok + 1 else bad[#bad + 1] = i end
      end
    end
    serve(rx, n, "lease2", seen)
    rx:free()
  end
  local st = t:stats()
  assert(#bad == 0, "renewals not unicast to the server from the leased address")
  assert(st.dhcp_renewed == 4 and renew_ok >= 4, st.dhcp_renewed .. " renewed, " .. renew_ok .. " unicast")
  assert(st.state.released == 4 and st.dhcp_release_tx == 4, hosts.format_states(st))
  local renewed, released = 0, 0
  for _, e in ipairs(t:events()) do
    if e.kind == "renewed" then
      renewed = renewed + 1
      local last = tonumber(e.ip:match("(%d+)$"))
      assert(last >= 100 and last < 110, "the renewal kept the address: " .. e.ip)
    elseif e.kind == "released" then released = released + 1 end
  end
  assert(renewed == 4 and released == 4, renewed .. " " .. released)
end

-- RFC 2131 4.4.5: a server that never answers a renewal: the hosts
-- renew (unicast), rebind (broadcast) at T2, and at the lease's end lose
-- it (counted, a "lost" event) and start over: bound again.
function T.a_lease_not_renewed_is_lost_and_the_host_starts_over()
  setup()
  local t = hosts.new{ count = 4, mac = "02:09:00:00:06:01", dhcp = true, subnet = "10.9.0.0/24", retries = 3,
    rto = 0.05 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local seen, kinds = {}, {}
  local deadline = surge.tsc() + 8 * surge.tsc_hz()
  while surge.tsc() < deadline and (kinds.bound or 0) < 8 do
    serve(rx, t:poll(rxq, txq, rx, tx), "silent", seen)
    rx:free()
    for _, e in ipairs(t:events()) do kinds[e.kind] = (kinds[e.kind] or 0) + 1 end
  end
  local st = t:stats()
  assert(kinds.lost == 4 and kinds.bound == 8, ("lost %s, bound %s"):format(kinds.lost, kinds.bound))
  assert(st.dhcp_lost == 4 and st.state.bound == 4 and st.dhcp_renewed == 0, hosts.format_states(st))
  assert(st.dhcp_retransmits > 0 and st.dhcp_gave_up == 0)
end

function T.a_lease_of_0_is_refused_and_counted()
  local st = storm("lease0", "02:09:00:00:02:01")
  assert(st.state.gave_up == 4, hosts.format_states(st))
  assert(st.dhcp_bad == st.dhcp_ack_rx and st.dhcp_bad >= 4 * 3, st.dhcp_bad .. " " .. st.dhcp_ack_rx)
  assert(st.dhcp_gave_up == 4 and st.tx_nobufs == 0)
end

-- an ACK giving a group's address or the broadcast address is bad, as
-- one giving none: the host would answer ARP for it and send from it
function T.an_ack_of_no_hosts_address_is_refused_and_counted()
  for _, m in ipairs({ { "group", "02:09:00:00:08:01" }, { "bcast", "02:09:00:00:09:01" } }) do
    local st = storm(m[1], m[2])
    assert(st.state.gave_up == 4 and st.state.bound == 0, m[1] .. ": " .. hosts.format_states(st))
    assert(st.dhcp_bad == st.dhcp_ack_rx and st.dhcp_bad >= 4 * 3, st.dhcp_bad .. " " .. st.dhcp_ack_rx)
  end
end

-- two tables of one lcore publishing under one prefix would share its
-- cells, each sync overwriting the other's counts (3 bound hosts and 5
-- read as 5): the second is refused; a table publishes again freely
function T.two_tables_of_one_prefix_are_refused()
  local a = hosts.new{ count = 3, mac = "02:09:00:00:0a:01", ip = "10.9.10.1", prefix = "pubtwice" }
  local b = hosts.new{ count = 5, mac = "02:09:00:00:0b:01", ip = "10.9.11.1", prefix = "pubtwice" }
  a:publish()
  a:publish()
  errors(at(("hosts:publish: prefix 'pubtwice' is host table %d's already: its counters would overwrite this one's "
    .. "(hosts.new's prefix: one a table)"):format(a.id), 1), function() b:publish() end)
end

function T.garbage_replies_are_counted_and_the_clients_give_up()
  local st = storm("garbage", "02:09:00:00:03:01")
  assert(st.state.gave_up == 4, hosts.format_states(st))
  assert(st.dhcp_bad >= 4 * 3 and st.dhcp_offer_rx == 0, st.dhcp_bad)
end

-- Replies out of turn are strays, each counted once, and change nothing:
-- per host an ACK, a NAK and a DECLINE while selecting and an OFFER while
-- requesting (rto 1 s: no retransmission doubles them on the ring).
function T.replies_out_of_turn_are_counted_as_strays()
  local st, _, seen = storm("misordered", "02:09:00:00:07:01", false, 1)
  assert(st.state.bound == 4, hosts.format_states(st))
  local got = ("strays %d bad %d offers %d acks %d naks %d"):format(tonumber(st.dhcp_stray), tonumber(st.dhcp_bad),
    tonumber(st.dhcp_offer_rx), tonumber(st.dhcp_ack_rx), tonumber(st.dhcp_nak_rx))
  assert(st.dhcp_stray == 16 and st.dhcp_bad == 0, got)
  assert(st.dhcp_offer_rx == 8 and st.dhcp_ack_rx == 8 and st.dhcp_nak_rx == 4, got)
  assert(st.dhcp_retransmits == 0 and seen[1] == 4 and seen[3] == 4, st.dhcp_retransmits)
end

function T.a_nak_storm_ends_in_gave_up()
  local st = storm("nak", "02:09:00:00:04:01")
  assert(st.state.gave_up == 4, hosts.format_states(st))
  assert(st.dhcp_nak_rx >= 4, st.dhcp_nak_rx)
  assert(st.dhcp_ack_rx == 0 and st.dhcp_bad == 0)
end

-- Static hosts on VLAN 7: a tagged ARP request for host 1 gets its reply,
-- tagged, byte for byte; a tagged echo request to host 0 its reply with
-- the request's identifier, sequence and data and both checksums right;
-- an untagged request is not the table's (left in rx, unanswered).
function T.vlan_arp_and_echo_replies_byte_exact()
  setup()
  local t = hosts.new{ count = 2, mac = "02:09:00:00:07:01", ip = "10.9.7.1", vlan = 7 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local peer, bc = "\2\0\0\0\0\x99", ("\xff"):rep(6)
  local tag = "\x81\0\0\7"
  local arp_req = string.char(0, 1, 8, 0, 6, 4, 0, 1) .. peer .. "\10\9\7\254" .. ("\0"):rep(6) .. "\10\9\7\2"
  local data = "surge-hosts-echo"
  local icmp = string.char(8, 0, 0, 0, 0x12, 0x34, 0, 7) .. data
  local ck = cksum.finish(cksum.sum(ffi.cast("const uint8_t *", icmp), #icmp))
  icmp = icmp:sub(1, 2) .. string.char(bit.rshift(ck, 8), bit.band(ck, 255)) .. icmp:sub(5)
  local ip = string.char(0x45, 0, 0, 20 + #icmp, 0, 1, 0, 0, 64, 1, 0, 0) .. "\10\9\7\254" .. "\10\9\7\1"
  local ipck = cksum.finish(cksum.sum(ffi.cast("const uint8_t *", ip), 20))
  ip = ip:sub(1, 10) .. string.char(bit.rshift(ipck, 8), bit.band(ipck, 255)) .. ip:sub(13)
  t:poll(rxq, txq, rx, tx)             -- the hosts are bound at the first poll
  rx:free()
  send_frame(bc .. peer .. tag .. "\8\6" .. arp_req)
  send_frame(bc .. peer .. "\8\6" .. arp_req:sub(1, 24) .. "\10\9\7\1")   -- untagged, for host 0
  send_frame("\2\9\0\0\7\1" .. peer .. tag .. "\8\0" .. ip .. icmp)
  local arp_reply, echo_reply, untagged
  for _ = 1, 200 do
    local n = t:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local f = ffi.string(rx.data[i], rx.len[i])
      if f:sub(13, 16) == tag and f:sub(17, 18) == "\8\6" and f:byte(26) == 2 then arp_reply = f
      elseif f:sub(13, 16) == tag and f:sub(17, 18) == "\8\0" and f:byte(39) == 0 then echo_reply = f
      elseif f:sub(13, 14) == "\8\6" then untagged = f end
    end
    rx:free()
  end
  assert(arp_reply, "no ARP reply")
  local want = peer .. "\2\9\0\0\7\2" .. tag .. "\8\6" .. string.char(0, 1, 8, 0, 6, 4, 0, 2) ..
    "\2\9\0\0\7\2\10\9\7\2" .. peer .. "\10\9\7\254"
  assert(arp_reply:sub(1, #want) == want, "the ARP reply's bytes")
  assert(echo_reply, "no echo reply")
  assert(echo_reply:sub(1, 12) == peer .. "\2\9\0\0\7\1", "the echo reply's MACs")
  local rip = echo_reply:sub(19)
  assert(rip:sub(13, 16) == "\10\9\7\1" and rip:sub(17, 20) == "\10\9\7\254", "the echo reply's addresses")
  assert(cksum.sum(ffi.cast("const uint8_t *", rip), 20) == 0xffff, "the echo reply's IPv4 checksum")
  local ricmp = rip:sub(21, 20 + #icmp)
  assert(cksum.sum(ffi.cast("const uint8_t *", ricmp), #ricmp) == 0xffff, "the echo reply's ICMP checksum")
  assert(ricmp:sub(5) == icmp:sub(5), "the echo reply's identifier, sequence and data")
  assert(untagged, "the untagged request left in rx")
  local st = t:stats()
  assert(st.arp_request_rx == 1 and st.arp_reply_tx == 1 and st.icmp_reply_tx == 1, st.arp_request_rx)
end

-- hosts:run checks its options as engine:run does (surge.poll_loop): a
-- pool that is not one is refused at this line, not used
function T.run_refuses_its_options_at_the_callers_line()
  setup()
  local t = hosts.new{ count = 1, mac = "02:09:00:00:08:01", ip = "10.9.8.1", prefix = "runopts" }
  errors(at('hosts:run: pool: expected a pool (surge.pool{...}), got "x"', 1), function()
    t:run{ rxq = rxq, txq = txq, pool = "x", seconds = 0 } end)
  errors(at("hosts:run: on_event: expected a function, got 5", 1), function()
    t:run{ rxq = rxq, txq = txq, on_event = 5, seconds = 0 } end)
  errors(at("hosts:run: seconds: expected a number >= 0, got -1", 1), function()
    t:run{ rxq = rxq, txq = txq, seconds = -1 } end)
  errors(at("hosts:run: txq: expected a tx queue (port:txq(i)), got rxq(0,0)", 1), function()
    t:run{ rxq = rxq, txq = rxq, seconds = 0 } end)
  -- and a proper run of no time returns the counters, published under the prefix
  local st, published = t:run{ rxq = rxq, txq = txq, seconds = 0 }, nil
  for _, c in ipairs(counter.all()) do if c.name == "runopts.arp_reply_tx" then published = c.value end end
  assert(st.arp_reply_tx == 0 and published == 0, tostring(published))
end

function T.bad_ranges_are_refused_at_the_callers_line()
  local M = "02:00:00:00:00:01"
  errors(at("surge.hosts.new: count: expected an integer in 1..16777216, got 0", 1), function()
    hosts.new{ count = 0, mac = M, ip = "10.0.0.1" } end)
  errors(at("surge.hosts.new: 10 hosts from 255.255.255.250: past 255.255.255.255", 1), function()
    hosts.new{ count = 10, mac = M, ip = "255.255.255.250" } end)
  errors(at("surge.hosts.new: mac: 'x' is not a MAC address (aa:bb:cc:dd:ee:ff)", 1), function()
    hosts.new{ count = 1, mac = "x", ip = "10.0.0.1" } end)
  errors(at("surge.hosts.new: ip: '10.0.0.300' is not an IPv4 address", 1), function()
    hosts.new{ count = 1, mac = M, ip = "10.0.0.300" } end)
  errors(at("surge_hosts_new: 2 MACs from 02:ff:ff:ff:ff:ff run past 02:ff:ff:ff:ff:ff", 1), function()
    hosts.new{ count = 2, mac = "02:ff:ff:ff:ff:ff", ip = "10.0.0.1" } end)
  errors(at("surge_hosts_new: the MAC 01:00:5e:00:00:01 is multicast", 1), function()
    hosts.new{ count = 1, mac = "01:00:5e:00:00:01", ip = "10.0.0.1" } end)
  errors(at("surge.hosts.new: ip: DHCP hosts take their address from the server (no ip with dhcp)", 1), function()
    hosts.new{ count = 1, mac = M, ip = "10.0.0.1", dhcp = true, subnet = "10.0.0.0/24" } end)
  errors(at("surge.hosts.new: subnet: '10.0.0.0/8' is not A.B.C.D/LEN with LEN 12..32", 1), function()
    hosts.new{ count = 1, mac = M, dhcp = true, subnet = "10.0.0.0/8" } end)
  errors(at('surge.hosts.new: subnet (the server\'s subnet, "A.B.C.D/LEN", LEN 12..32): expected a string, got nil', 1),
    function() hosts.new{ count = 1, mac = M, dhcp = true } end)
  errors(at("surge.hosts.new: unknown option 'ips' (announce, arp_check, circuit_id, client_id, count, dad, dad6, "
    .. "decline_wait, dhcp, dhcp6, hostname, ip, ip6, leave_after, mac, number, options, outer_tpid, outer_vlan, "
    .. "outstanding, params, pd, prefix, probe, rapid_commit, rate, relay, remote_id, renewals, retries, rs, rto, subnet, "
    .. "vendor_class, vlan)", 4), function()
    hosts.new{ count = 1, mac = M, ips = "10.0.0.1" } end)
  errors(at("surge.hosts.new: ip: 0.0.0.0 is no host's address", 1), function()
    hosts.new{ count = 1, mac = M, ip = "0.0.0.0" } end)
  -- a range holding a group or the broadcast address: a host there would answer ARP for it
  local NO = ", no host's address (multicast 224.0.0.0/4 or broadcast)"
  errors(at("surge_hosts_new: the hosts' addresses 223.255.255.250..224.0.0.3 hold 224.0.0.0" .. NO, 1), function()
    hosts.new{ count = 10, mac = M, ip = "223.255.255.250" } end)
  errors(at("surge_hosts_new: the hosts' addresses 255.255.255.246..255.255.255.255 hold 255.255.255.255" .. NO, 1),
    function() hosts.new{ count = 10, mac = M, ip = "255.255.255.246" } end)
  errors(at("surge_hosts_new: the hosts' addresses 239.1.1.1..239.1.1.1 hold 239.1.1.1" .. NO, 1), function()
    hosts.new{ count = 1, mac = M, ip = "239.1.1.1" } end)
  local made = ffi.C.surge_hosts_count()
  errors(at("surge_hosts_new: the hosts' addresses 223.255.255.255..224.0.0.8 hold 224.0.0.0" .. NO, 1), function()
    hosts.vlans{ per_vlan = 10, vlan = 10, vlans = 2, mac = M, ip = "223.255.255.245" } end)
  assert(ffi.C.surge_hosts_count() == made, "the group's first table was made, its second refused")
end

return T
