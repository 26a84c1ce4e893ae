-- surge.hosts with IPv6 (issue 33, docs/hosts.md "IPv6") on `surge test`'s
-- ring port (its own loopback: what the hosts send comes back to the poll,
-- which leaves in rx what is not for them): the frames the hosts write,
-- byte for byte, with their checksums checked here over the IPv6
-- pseudo-header: DAD's NSs from ::, the RS, the NA answering an NS, the
-- NA defending an address, the echo reply; an RA's prefix gives the SLAAC
-- address prefix + EUI-64; an NA for a tentative link-local address is a
-- conflict (no RS after it); the DHCPv6 client's SOLICIT, REQUEST, RENEW
-- and RELEASE against a server written here, and its binding.
local surge = require("surge")
local ffi = require("ffi")
local bit = require("bit")
local hosts = require("surge.hosts")
local counter = require("surge.counter")
local ip6 = require("surge.proto.ip6")
local cksum = require("surge.proto.checksum")
local testrun = require("surge.vm.testrun")
local errors, at = testrun.errors, testrun.at

local T = {}

local rxq, txq, send_frame
local function setup()
  local r = testrun.ring()
  rxq, txq, send_frame = r.rxq, r.txq, r.send
end

local A = function(s) return ip6.addr(s, "test") end
local PEER = "\2\0\0\0\0\x99"
local PEER_LL = A("fe80::99")
local function be16(v) return string.char(bit.rshift(v, 8), bit.band(v, 255)) end
local function be32(v) return be16(bit.rshift(v, 16)) .. be16(bit.band(v, 0xffff)) end

-- the sum of the pseudo-header and the message (0xffff when its checksum is right)
local function sum6(src, dst, nh, msg)
  local s = src .. dst .. be32(#msg) .. "\0\0\0" .. string.char(nh) .. msg
  return cksum.sum(ffi.cast("const uint8_t *", s), #s)
end

-- an IPv6 frame to the hosts from the peer, its checksum (at cko in msg) filled
local function ip6_frame(dmac, src, dst, nh, msg, hlim, cko)
  local ck = cksum.finish(sum6(src, dst, nh, msg))
  msg = msg:sub(1, cko) .. be16(ck) .. msg:sub(cko + 3)
  return dmac .. PEER .. "\x86\xdd" .. "\x60\0\0\0" .. be16(#msg) .. string.char(nh, hlim) .. src .. dst .. msg
end

-- polls for `seconds`, returns the IPv6 frames left in rx (strings)
local function poll(t, rx, tx, seconds, out)
  out = out or {}
  local hz = tonumber(surge.tsc_hz())
  local stop = tonumber(surge.tsc()) + seconds * hz
  while tonumber(surge.tsc()) < stop do
    local n = t:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local f = ffi.string(rx.data[i], rx.len[i])
      if f:sub(13, 14) == "\x86\xdd" then out[#out + 1] = f end
    end
    rx:free()
  end
  return out
end

-- the frames of `list` whose ICMPv6 type (or, for UDP, the DHCPv6 message type) is `ty`
local function of_type(list, ty, nh)
  local r = {}
  for _, f in ipairs(list) do
    if f:byte(21) == (nh or 58) and f:byte(nh == 17 and 63 or 55) == ty then r[#r + 1] = f end
  end
  return r
end

-- the frame's upper-layer checksum, checked over the pseudo-header
local function sum_ok(f)
  local plen = f:byte(19) * 256 + f:byte(20)
  return sum6(f:sub(23, 38), f:sub(39, 54), f:byte(21), f:sub(55, 54 + plen)) == 0xffff
end

local MAC0 = "\2\9\0\0\6\1"
local LL0 = A("fe80::9:ff:fe00:601")
local ZERO16 = ("\0"):rep(16)

function T.dad_rs_na_echo_and_slaac_byte_exact()
  setup()
  local t = hosts.new{ count = 2, mac = "02:09:00:00:06:01", ip6 = "2001:db8:6::1", probe = 0.05, rs = 1 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local seen = poll(t, rx, tx, 0.4)
  local ns = of_type(seen, 135)
  assert(#ns == 4, "DAD: an NS for each host's link-local and static address, got " .. #ns)
  -- host 0's link-local DAD probe, whole
  local want = "\x33\x33\xff\0\6\1" .. MAC0 .. "\x86\xdd" .. "\x60\0\0\0\0\24\58\255" .. ZERO16 ..
    A("ff02::1:ff00:601") .. "\135\0"
  local got
  for _, f in ipairs(ns) do if f:sub(1, 6) == "\x33\x33\xff\0\6\1" then got = f end end
  assert(got and #got == 78, "host 0's link-local DAD NS")
  assert(got:sub(1, #want) == want, "the DAD NS's Ethernet and IPv6 headers: from ::, to the solicited-node group")
  assert(got:sub(59, 78) == "\0\0\0\0" .. LL0, "the DAD NS's target, no options")
  assert(sum_ok(got), "the DAD NS's checksum")
  local static = 0
  for _, f in ipairs(ns) do
    assert(sum_ok(f), "every NS's checksum")
    if f:sub(63, 78) == A("2001:db8:6::1") then
      static = static + 1
      assert(f:sub(1, 6) == "\x33\x33\xff\0\0\1" and f:sub(39, 54) == A("ff02::1:ff00:1"), "the static DAD NS's group")
    end
  end
  assert(static == 1, "one DAD NS for host 0's static address")
  -- the router solicitation, after DAD
  local rs = of_type(seen, 133)
  assert(#rs == 2, "an RS from each host, got " .. #rs)
  local r0 = rs[1]:sub(7, 12) == MAC0 and rs[1] or rs[2]
  assert(r0 == "\x33\x33\0\0\0\2" .. MAC0 .. "\x86\xdd" .. "\x60\0\0\0\0\16\58\255" .. LL0 .. A("ff02::2") ..
    "\133\0" .. r0:sub(57, 58) .. "\0\0\0\0\1\1" .. MAC0, "host 0's RS: from its link-local address, its MAC in the option")
  assert(sum_ok(r0), "the RS's checksum")
  local h = t:host6(0)
  assert(table.concat(h.assigned, ",") == "link-local,static" and #h.tentative == 0, table.concat(h.assigned, ","))
  assert(h["link-local"] == "fe80::9:ff:fe00:601" and h.static == "2001:db8:6::1" and h.slaac == nil, h["link-local"])
  assert(t:settled(), "settled once DAD is done")
  local evs = t:events()
  assert(#evs == 4 and evs[1].kind == "addr6", #evs)

  -- an NS for host 1's static address: its NA, solicited and override, to the NS's source
  local target1 = A("2001:db8:6::2")
  send_frame(ip6_frame("\x33\x33\xff\0\0\2", PEER_LL, A("ff02::1:ff00:2"), 58,
    "\135\0\0\0\0\0\0\0" .. target1 .. "\1\1" .. PEER, 255, 2))
  -- an echo request to host 0's link-local address
  local echo = "\128\0\0\0\x12\x34\0\7surge-hosts-echo6"
  send_frame(ip6_frame(MAC0, PEER_LL, LL0, 58, echo, 64, 2))
  -- another station's DAD for host 0's static address: defended
  send_frame(ip6_frame("\x33\x33\xff\0\0\1", ZERO16, A("ff02::1:ff00:1"), 58,
    "\135\0\0\0\0\0\0\0" .. A("2001:db8:6::1"), 255, 2))
  seen = poll(t, rx, tx, 0.1)
  local nas = of_type(seen, 136)
  local na, defence
  for _, f in ipairs(nas) do
    if f:sub(1, 6) == PEER then na = f elseif f:sub(1, 6) == "\x33\x33\0\0\0\1" then defence = f end
  end
  assert(na and #na == 86, "the NA answering the NS")
  assert(na == PEER .. "\2\9\0\0\6\2" .. "\x86\xdd" .. "\x60\0\0\0\0\32\58\255" .. target1 .. PEER_LL .. "\136\0" ..
    na:sub(57, 58) .. "\x60\0\0\0" .. target1 .. "\2\1\2\9\0\0\6\2", "the NA's bytes")
  assert(sum_ok(na), "the NA's checksum")
  assert(defence and defence:sub(7, 12) == MAC0 and defence:sub(39, 54) == A("ff02::1") and defence:byte(59) == 0x20
    and defence:sub(63, 78) == A("2001:db8:6::1") and sum_ok(defence), "the defence: an NA to all-nodes, override only")
  local reply = of_type(seen, 129)[1]
  assert(reply, "no echo reply")
  assert(reply:sub(1, 12) == PEER .. MAC0 and reply:sub(19, 20) == be16(#echo) and reply:byte(22) == 64, "echo headers")
  assert(reply:sub(23, 54) == LL0 .. PEER_LL, "the echo reply's addresses")
  assert(reply:sub(59, 54 + #echo) == echo:sub(5), "the echo reply's identifier, sequence and data")
  assert(sum_ok(reply), "the echo reply's checksum")
  local st = t:stats()
  assert(st.nd_ns_rx == 1 and st.nd_na_tx == 2 and st.icmp6_echo_rx == 1 and st.icmp6_reply_tx == 1, st.nd_na_tx)
  assert(st.nd_dad_tx == 4 and st.nd_rs_tx == 2 and st.nd_conflict == 0, st.nd_dad_tx)

  -- an RA with 2001:db8:77::/64 (A flag): each host's SLAAC address after its DAD
  local pio = "\3\4\64\xc0" .. be32(3600) .. be32(1800) .. "\0\0\0\0" .. A("2001:db8:77::")
  send_frame(ip6_frame("\x33\x33\0\0\0\1", PEER_LL, A("ff02::1"), 58,
    "\134\0\0\0\64\0\7\8" .. be32(0) .. be32(0) .. "\1\1" .. PEER .. pio, 255, 2))
  seen = poll(t, rx, tx, 0.3)
  assert(#of_type(seen, 135) == 2, "DAD for the two SLAAC addresses")
  h = t:host6(0)
  assert(h.slaac == "2001:db8:77:0:9:ff:fe00:601", tostring(h.slaac))
  assert(table.concat(h.assigned, ",") == "link-local,slaac,static", table.concat(h.assigned, ","))
  assert(h.valid >= 3599 and h.valid <= 3600 and h.preferred >= 1799 and h.preferred <= 1800, h.valid)
  st = t:stats()
  assert(st.nd_ra_rx == 1 and st.nd_prefix == 1 and st.hosts6_slaac == 2 and st.hosts6_ll == 2, st.hosts6_slaac)
  -- an echo to host 1's SLAAC address is answered
  send_frame(ip6_frame("\2\9\0\0\6\2", PEER_LL, A("2001:db8:77:0:9:ff:fe00:602"), 58, echo, 64, 2))
  seen = poll(t, rx, tx, 0.05)
  assert(#of_type(seen, 129) == 1, "host 1's SLAAC address answers")
end

-- An NA for a host's tentative link-local address: a conflict, the host's IPv6 off (RFC 4862 5.4.5)
function T.an_na_for_a_tentative_address_is_a_conflict()
  setup()
  local t = hosts.new{ count = 1, mac = "02:09:00:00:06:10", ip6 = true, dad6 = 3, probe = 0.05, rs = 1 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local ll = A("fe80::9:ff:fe00:610")
  local seen = {}
  for _ = 1, 100 do
    poll(t, rx, tx, 0.01, seen)
    if #of_type(seen, 135) > 0 then break end
  end
  assert(#of_type(seen, 135) == 1, "the first DAD NS")
  send_frame(ip6_frame("\x33\x33\0\0\0\1", PEER_LL, A("ff02::1"), 58, "\136\0\0\0\x20\0\0\0" .. ll .. "\2\1" .. PEER,
    255, 2))
  seen = poll(t, rx, tx, 0.3)
  local st = t:stats()
  assert(st.nd_conflict == 1 and st.hosts6_ll == 0 and st.nd_rs_tx == 0, st.nd_conflict)
  local h = t:host6(0)
  assert(#h.assigned == 0 and #h.tentative == 0, "no address")
  local evs = t:events()
  assert(#evs == 1 and evs[1].kind == "conflict6" and evs[1].addr == "link-local", evs[1] and evs[1].kind)
  assert(t:settled(), "settled")
  assert(#of_type(seen, 135) == 0, "no more probes after the conflict")
end

-- DHCPv6 options, DUIDs
local function opt(code, v) return be16(code) .. be16(#v) .. v end
local SID = opt(2, "\0\3\0\1" .. PEER)

-- the options of a host's DHCPv6 message (f: the frame): code -> value
local function options(f)
  local plen = f:byte(19) * 256 + f:byte(20)
  local b = f:sub(63, 54 + plen)
  local r, k = {}, 5
  while k <= #b do
    local code, len = b:byte(k) * 256 + b:byte(k + 1), b:byte(k + 2) * 256 + b:byte(k + 3)
    r[code] = b:sub(k + 4, k + 3 + len)
    k = k + 4 + len
  end
  return r, b
end

-- the server's message of type ty to the host whose message is f, with IA_NA and IA_PD (T1 1 s, T2 2 s)
-- (addr, pref, valid: the IA_NA's address and lifetimes, 2001:db8:37::100, 3, 4 by default)
local function answer(f, ty, extra, addr, pref, valid)
  local o = options(f)
  local iaid = o[3]:sub(1, 4)
  local na = opt(3, iaid .. be32(1) .. be32(2) .. opt(5, A(addr or "2001:db8:37::100") .. be32(pref or 3)
    .. be32(valid or 4)))
  local pd = opt(25, iaid .. be32(1) .. be32(2) .. opt(26, be32(3) .. be32(4) .. "\64" .. A("2001:db8:3700::")))
  local body = string.char(ty) .. f:sub(64, 66) .. opt(1, o[1]) .. SID .. na .. pd .. (extra or "")
  local udp = be16(547) .. be16(546) .. be16(8 + #body) .. "\0\0" .. body
  send_frame(ip6_frame(f:sub(7, 12), PEER_LL, f:sub(23, 38), 17, udp, 64, 6))
end

function T.dhcp6_solicit_request_renew_release_byte_exact()
  setup()
  local t = hosts.new{ count = 1, mac = "02:09:00:00:06:20", dhcp6 = true, pd = true, rs = 0, probe = 0.02,
    rto = 0.2, retries = 3 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local mac = "\2\9\0\0\6\32"
  local ll = A("fe80::9:ff:fe00:620")
  local seen = {}
  for _ = 1, 100 do
    poll(t, rx, tx, 0.01, seen)
    if #of_type(seen, 1, 17) > 0 then break end
  end
  local sol = of_type(seen, 1, 17)[1]
  assert(sol, "no SOLICIT")
  assert(sol:sub(1, 22) == "\x33\x33\0\1\0\2" .. mac .. "\x86\xdd\x60\0\0\0" .. sol:sub(19, 20) .. "\17\1",
    "the SOLICIT's Ethernet and IPv6 headers (to All_DHCP_Relay_Agents_and_Servers, hop limit 1)")
  assert(sol:sub(23, 54) == ll .. A("ff02::1:2"), "from the link-local address")
  assert(sol:sub(55, 58) == be16(546) .. be16(547) and sum_ok(sol), "UDP 546 to 547, its checksum")
  local o, b = options(sol)
  assert(b:byte(1) == 1, "SOLICIT")
  assert(o[1] == "\0\3\0\1" .. mac, "client identifier: DUID-LL of the MAC")
  assert(o[8] == "\0\0", "elapsed time 0")
  assert(o[3] == "\0\0\6\32" .. ("\0"):rep(8) and o[25] == "\0\0\6\32" .. ("\0"):rep(8),
    "IA_NA and IA_PD, IAID the MAC's last four bytes, no address yet")
  assert(o[14] == nil and o[2] == nil, "no rapid commit, no server id")
  assert(#b == 4 + 14 + 6 + 16 + 16, "nothing else")
  answer(sol, 2)                                          -- ADVERTISE
  seen = poll(t, rx, tx, 0.05)
  local req = of_type(seen, 3, 17)[1]
  assert(req, "no REQUEST")
  o, b = options(req)
  assert(b:sub(2, 4) ~= sol:sub(64, 66), "a new transaction")
  assert(o[2] == "\0\3\0\1" .. PEER, "the server's identifier")
  assert(o[3] == "\0\0\6\32" .. ("\0"):rep(8) .. "\0\5\0\24" .. A("2001:db8:37::100") .. ("\0"):rep(8),
    "IA_NA with the address advertised")
  assert(o[25] == "\0\0\6\32" .. ("\0"):rep(8) .. "\0\26\0\25" .. ("\0"):rep(8) .. "\64" .. A("2001:db8:3700::"),
    "IA_PD with the prefix advertised")
  assert(sum_ok(req), "the REQUEST's checksum")
  answer(req, 7)                                          -- REPLY
  poll(t, rx, tx, 0.05)
  local h = t:host6(0).dhcp6
  assert(h.state == "bound" and h.addr == "2001:db8:37::100" and h.prefix == "2001:db8:3700::/64", h.state)
  assert(h.iaid == 0x0620 and h.t1 == 1 and h.t2 == 2 and h.valid == 4, h.t1)
  local st = t:stats()
  assert(st.hosts6_dhcp == 1 and st.dhcp6_advertise_rx == 1 and st.dhcp6_reply_rx == 1, st.hosts6_dhcp)
  assert(t:settled(), "settled once bound")
  -- T1 (1 s): RENEW, naming the server, the address and the prefix
  seen = poll(t, rx, tx, 1.1)
  local ren = of_type(seen, 5, 17)[1]
  assert(ren, "no RENEW at T1")
  o = options(ren)
  assert(o[2] == "\0\3\0\1" .. PEER and o[3]:sub(17, 32) == A("2001:db8:37::100") and o[25]:sub(26, 41) ==
    A("2001:db8:3700::"), "the RENEW's server, address and prefix")
  answer(ren, 7)
  poll(t, rx, tx, 0.05)
  assert(t:host6(0).dhcp6.state == "bound", "renewed")
  local kinds = {}
  for _, e in ipairs(t:events()) do kinds[#kinds + 1] = e.kind end
  assert(table.concat(kinds, ",") == "addr6,bound,renewed", table.concat(kinds, ","))
  -- RELEASE
  assert(t:release() == 1, "one binding released")
  seen = poll(t, rx, tx, 0.05)
  local rel = of_type(seen, 8, 17)[1]
  assert(rel, "no RELEASE")
  o = options(rel)
  assert(o[2] == "\0\3\0\1" .. PEER and o[3]:sub(17, 32) == A("2001:db8:37::100"), "the RELEASE's server and address")
  st = t:stats()
  assert(st.dhcp6_release_tx == 1 and st.hosts6_dhcp == 0 and st.dhcp6_bad == 0 and st.dhcp6_stray == 0, st.dhcp6_bad)
end

-- count rapid-commit DHCPv6 hosts from mac, polled until each SOLICITed:
-- the table, its bursts and the SOLICITs seen
local function soliciting(count, mac)
  setup()
  local t = hosts.new{ count = count, mac = mac, dhcp6 = true, rapid_commit = true, rs = 0, probe = 0.02, rto = 0.2,
    retries = 2 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local seen = {}
  for _ = 1, 100 do
    poll(t, rx, tx, 0.01, seen)
    if #of_type(seen, 1, 17) >= count then break end
  end
  return t, rx, tx, of_type(seen, 1, 17)
end

-- rapid commit: the REPLY to the SOLICIT binds; a REPLY without it is stray; NoAddrsAvail refused
function T.dhcp6_rapid_commit_and_refusals()
  local t, rx, tx, sols = soliciting(2, "02:09:00:00:06:30")
  assert(#sols >= 2, "two SOLICITs")
  for _, s in ipairs(sols) do
    assert(options(s)[14] == "", "the rapid commit option")
    if s:byte(12) == 0x30 then
      answer(s, 7, opt(14, ""))                           -- host 0: REPLY with rapid commit
    else
      -- host 1: an ADVERTISE whose IA_NA says NoAddrsAvail
      local o = options(s)
      local body = "\2" .. s:sub(64, 66) .. opt(1, o[1]) .. SID .. opt(3, o[3]:sub(1, 4) .. be32(0) .. be32(0) ..
        opt(13, "\0\2none"))
      send_frame(ip6_frame(s:sub(7, 12), PEER_LL, s:sub(23, 38), 17,
        be16(547) .. be16(546) .. be16(8 + #body) .. "\0\0" .. body, 64, 6))
    end
  end
  poll(t, rx, tx, 0.8)                                    -- host 1's two SOLICITs out, before host 0's T1 (1 s)
  assert(t:host6(0).dhcp6.state == "bound" and t:host6(0).dhcp6.addr == "2001:db8:37::100", t:host6(0).dhcp6.state)
  assert(t:host6(1).dhcp6.state == "gave_up" and t:host6(1).dhcp6.addr == nil, t:host6(1).dhcp6.state)
  local st = t:stats()
  assert(st.dhcp6_noaddr >= 1 and st.dhcp6_gave_up == 1 and st.dhcp6_request_tx == 0, st.dhcp6_noaddr)
  assert(t:settled(), "settled")
end

-- A REPLY granting a multicast, unspecified or loopback address, or one
-- preferred longer than it is valid (RFC 8415 21.6: discarded), grants
-- nothing: counted (dhcp6_noaddr), the host never bound to it
function T.dhcp6_a_reply_of_no_usable_address_is_not_taken()
  local t, rx, tx, sols = soliciting(4, "02:09:00:00:06:50")
  local bad = { [0x50] = { "ff02::1" }, [0x51] = { "::" }, [0x52] = { "::1" }, [0x53] = { "2001:db8:37::100", 5, 4 } }
  for _, s in ipairs(sols) do
    local b = bad[s:byte(12)]
    if b then answer(s, 7, opt(14, ""), b[1], b[2], b[3]) bad[s:byte(12)] = nil end
  end
  assert(next(bad) == nil, "a SOLICIT from each host")
  poll(t, rx, tx, 0.3)
  local st = t:stats()
  for i = 0, 3 do
    local d = t:host6(i).dhcp6
    assert(d.state ~= "bound" and d.addr == nil, ("host %d took %s (%s)"):format(i, tostring(d.addr), d.state))
  end
  assert(st.dhcp6_noaddr == 4 and st.dhcp6_reply_rx == 4, st.dhcp6_noaddr .. " " .. st.dhcp6_reply_rx)
end

-- a table with DHCPv4 and DHCPv6 publishes both protocols' counters and
-- every bucket of the binding-time histogram (a run holds 256 counters)
function T.dual_stack_dhcp_table_publishes_every_counter()
  local t = hosts.new{ count = 1, mac = "02:09:00:00:06:40", dhcp = true, subnet = "10.9.0.0/16", dhcp6 = true, prefix = "dual" }
  t:publish()
  local names = {}
  for _, k in ipairs(t:counter_names()) do names[k] = true end
  assert(names.dhcp_discover_tx and names.dhcp6_solicit_tx, "both DHCPs' counters run")
  for _, b in ipairs(hosts.BIND_BUCKETS) do
    assert(surge.counter("dual." .. b):value() == 0, b)
  end
  local published = 0
  for _, c in ipairs(counter.all()) do
    if c.name:find("^dual%.") then published = published + 1 end
  end
  assert(published >= #t:counter_names() + #hosts.BIND_BUCKETS, published)
end

function T.ipv6_options_refused_at_the_callers_line()
  local M = "02:00:00:00:00:01"
  errors(at("surge.hosts.new: ip6: 'x' is not an IPv6 address", 1), function()
    hosts.new{ count = 1, mac = M, ip6 = "x" } end)
  errors(at("surge.hosts.new: ip6: 'ff02::1' is no host's static address (unspecified, loopback, v4-mapped or "
    .. "multicast)", 1), function() hosts.new{ count = 1, mac = M, ip6 = "ff02::1" } end)
  errors(at("surge_hosts_new: 2 IPv6 addresses from ip6_addr carry past its last 32 bits", 1), function()
    hosts.new{ count = 2, mac = M, ip6 = "2001:db8::ffff:ffff" } end)
  errors(at("surge.hosts.new: dad6 (DAD probes per IPv6 address): expected an integer in 0..16, got 17", 1), function()
    hosts.new{ count = 1, mac = M, ip6 = true, dad6 = 17 } end)
  errors(at("surge.hosts.new: dad6 and rs: for IPv6 hosts (ip6 = ...)", 1), function()
    hosts.new{ count = 1, mac = M, ip = "10.0.0.1", rs = 1 } end)
  errors(at("surge.hosts.new: rapid_commit: for DHCPv6 hosts (dhcp6 or pd)", 1), function()
    hosts.new{ count = 1, mac = M, ip6 = true, rapid_commit = true } end)
  errors(at("surge.hosts.new: ip (host 0's address, dhcp = true, or ip6): expected a string, got nil", 1), function()
    hosts.new{ count = 1, mac = M } end)
end

return T
