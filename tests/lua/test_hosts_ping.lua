-- Hosts that ping and QinQ (issue 33, docs/hosts.md "Ping" and "QinQ") on
-- `surge test`'s ring port (its own loopback): the test is the target.
-- It answers the hosts' ARP request (or NS) for the next hop, then some of
-- their echo requests: each request sent ends in exactly one reply or
-- timeout, a duplicate reply is a stray, the requests' bytes are checked
-- (MACs, addresses, identifier per host, sequence per round, sizes, both
-- checksums). QinQ: an ARP request with both tags gets its reply with
-- both, byte for byte (one with an outer TPID of 0x8100 too: the TPID is
-- not compared on receipt); a frame with the inner tag alone, or another
-- outer VLAN, is not the table's; a ping's requests carry both tags. Then
-- the refusals, at the caller's line.
local surge = require("surge")
local ffi = require("ffi")
local bit = require("bit")
local hosts = require("surge.hosts")
local ip6 = require("surge.proto.ip6")
local testrun = require("surge.vm.testrun")
local cksum = require("surge.proto.checksum")
local errors, at = testrun.errors, testrun.at

local T = {}

local rxq, txq, send_frame
local function setup()
  local r = testrun.ring()
  rxq, txq, send_frame = r.rxq, r.txq, r.send
end

local PEER = "\2\0\0\0\0\x99"
local function be16(v) return string.char(bit.rshift(v, 8), bit.band(v, 255)) end
local function be32(v) return be16(bit.rshift(v, 16)) .. be16(bit.band(v, 0xffff)) end
local function sum(s, acc) return cksum.sum(ffi.cast("const uint8_t *", s), #s, acc) end
local function u16(s, at) return s:byte(at) * 256 + s:byte(at + 1) end

-- polls until settled (or `seconds`), handing each frame left in rx to on(f)
local function run(t, rx, tx, seconds, on)
  local hz = tonumber(surge.tsc_hz())
  local stop = tonumber(surge.tsc()) + seconds * hz
  repeat
    local n = t:poll(rxq, txq, rx, tx)
    local got = {}
    for i = 0, n - 1 do got[#got + 1] = ffi.string(rx.data[i], rx.len[i]) end
    rx:free()
    for _, f in ipairs(got) do on(f) end
  until t:settled() or tonumber(surge.tsc()) >= stop
end

-- 3 static hosts ping 10.9.8.254 twice each; the test answers ARP for it
-- and the requests of hosts 0 and 1 (host 0's first twice, host 1's
-- second with its send time changed): 6 sent, 4 replies (3 round trips
-- measured), 2 timeouts (host 2's), 1 stray
function T.ping4_resolves_matches_replies_and_times_out()
  setup()
  local t = hosts.new{ count = 3, mac = "02:09:08:00:00:01", ip = "10.9.8.1", rate = 1000 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  t:poll(rxq, txq, rx, tx)
  rx:free()
  t:ping{ target = "10.9.8.254", count = 2, interval = 0.05, timeout = 0.3, size = 16 }
  assert(not t:settled(), "a ping in flight: not settled")
  local arps, reqs, idents = 0, {}, {}
  run(t, rx, tx, 5, function(f)
    if f:sub(13, 14) == "\8\6" and u16(f, 21) == 1 and f:sub(39, 42) == "\10\9\8\254" then
      arps = arps + 1
      assert(f:sub(1, 6) == ("\xff"):rep(6) and f:sub(7, 12) == "\2\9\8\0\0\1", "the ARP request from host 0")
      assert(f:sub(29, 32) == "\10\9\8\1", "the ARP request's sender address: host 0's")
      send_frame(f:sub(7, 12) .. PEER .. "\8\6" .. string.char(0, 1, 8, 0, 6, 4, 0, 2) .. PEER .. "\10\9\8\254" ..
        f:sub(7, 12) .. "\10\9\8\1")
    elseif f:sub(13, 14) == "\8\0" and f:byte(24) == 1 and f:byte(35) == 8 then
      local ip = f:sub(15, 34)
      local h = f:byte(30) - 1                      -- 10.9.8.1 + h
      assert(f:sub(1, 6) == PEER, "the request to the next hop's MAC (ARP's answer)")
      assert(f:sub(7, 12) == "\2\9\8\0\0" .. string.char(1 + h), "the request from its host's MAC")
      assert(ip:sub(17, 20) == "\10\9\8\254" and u16(ip, 3) == 20 + 8 + 16, "the request's target and length")
      assert(sum(ip) == 0xffff, "the request's IPv4 checksum")
      local icmp = f:sub(35, 34 + 8 + 16)
      assert(sum(icmp) == 0xffff, "the request's ICMP checksum")
      local ident, seq = u16(icmp, 5), u16(icmp, 7)
      idents[h] = idents[h] or ident
      assert(idents[h] == ident, "one identifier a host")
      reqs[#reqs + 1] = { h = h, seq = seq }
      if h < 2 then
        -- host 1's second reply with its send time zeroed: a reply, its round trip not taken
        local r = "\0\0\0\0" .. icmp:sub(5, 8) .. (h == 1 and seq == 1 and ("\0"):rep(8) or icmp:sub(9, 16)) .. icmp:sub(17)
        r = "\0\0" .. be16(cksum.finish(sum(r))) .. r:sub(5)
        local rip = ip:sub(1, 12) .. ip:sub(17, 20) .. ip:sub(13, 16)
        local reply = f:sub(7, 12) .. PEER .. "\8\0" .. rip .. r
        send_frame(reply)
        if h == 0 and seq == 0 then send_frame(reply) end   -- a duplicate: a stray
      end
    end
  end)
  assert(t:settled(), "settled: every request answered or timed out")
  local st = t:stats()
  assert(arps == 1 and st.ping_resolve_tx == 1, "one ARP request for the next hop")
  assert(#reqs == 6, "6 requests on the wire, got " .. #reqs)
  assert(idents[0] ~= idents[1] and idents[1] ~= idents[2], "each host its own identifier")
  for _, r in ipairs(reqs) do assert(r.seq == 0 or r.seq == 1, "sequence: the round") end
  assert(st.ping_tx == 6 and st.ping_reply == 4 and st.ping_timeout == 2 and st.ping_stray == 1,
    ("tx %d reply %d timeout %d stray %d"):format(st.ping_tx, st.ping_reply, st.ping_timeout, st.ping_stray))
  assert(st.ping_rtt_min_us <= st.ping_rtt_max_us and st.ping_rtt_max_us < 600000 and
    st.ping_rtt_sum_us >= 3 * st.ping_rtt_min_us and st.ping_rtt_sum_us <= 3 * st.ping_rtt_max_us,
    ("the round trips (3 of the 4 replies): min %d max %d sum %d"):format(st.ping_rtt_min_us, st.ping_rtt_max_us,
      st.ping_rtt_sum_us))
  -- a second ping to a given MAC: no ARP, every request times out
  t:ping{ target = "10.9.9.9", mac = "02:00:00:00:00:98", count = 3, interval = 0.01, timeout = 0.05 }
  local seen = 0
  run(t, rx, tx, 5, function(f) if f:sub(1, 6) == "\2\0\0\0\0\x98" then seen = seen + 1 end end)
  st = t:stats()
  assert(seen == 9 and st.ping_tx == 15 and st.ping_timeout == 11 and st.ping_resolve_tx == 1, st.ping_timeout)
end

-- IPv6: 2 hosts with static addresses ping 2001:db8:9::fe; the test
-- answers the NS (with its link-layer address) and every request
function T.ping6_nd_and_replies()
  setup()
  local A = function(s) return ip6.addr(s, "test") end
  local t = hosts.new{ count = 2, mac = "02:09:06:00:00:01", ip6 = "2001:db8:9::1", dad6 = 0, rs = 0 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  for _ = 1, 3 do t:poll(rxq, txq, rx, tx) rx:free() end
  local TGT = A("2001:db8:9::fe")
  t:ping{ target = "2001:db8:9::fe", count = 2, interval = 0.02, timeout = 0.5, size = 24 }
  local ns, reqs = 0, 0
  local function sum6(src, dst, msg) return sum(src .. dst .. be32(#msg) .. "\0\0\0\58" .. msg) end
  run(t, rx, tx, 5, function(f)
    if f:sub(13, 14) ~= "\x86\xdd" or f:byte(21) ~= 58 then return end
    local src, dst, msg = f:sub(23, 38), f:sub(39, 54), f:sub(55, 54 + u16(f, 19))
    assert(sum6(src, dst, msg) == 0xffff, "the ICMPv6 checksum")
    if msg:byte(1) == 135 and msg:sub(9, 24) == TGT then
      ns = ns + 1
      assert(dst == A("ff02::1:ff00:fe") and f:sub(1, 6) == "\x33\x33\xff\0\0\xfe", "the NS to the solicited-node group")
      assert(src == A("2001:db8:9::1") and msg:sub(25, 26) == "\1\1" and msg:sub(27, 32) == f:sub(7, 12),
        "the NS from host 0's address with its link-layer address")
      local na = string.char(136, 0, 0, 0, 0x60, 0, 0, 0) .. TGT .. "\2\1" .. PEER
      na = na:sub(1, 2) .. be16(cksum.finish(sum6(TGT, src, na))) .. na:sub(5)
      send_frame(f:sub(7, 12) .. PEER .. "\x86\xdd\x60\0\0\0" .. be16(#na) .. "\58\255" .. TGT .. src .. na)
    elseif msg:byte(1) == 128 then
      reqs = reqs + 1
      assert(f:sub(1, 6) == PEER and dst == TGT and #msg == 8 + 24 and f:byte(22) == 64, "the request")
      local r = "\129\0\0\0" .. msg:sub(5)
      r = r:sub(1, 2) .. be16(cksum.finish(sum6(TGT, src, r))) .. r:sub(5)
      send_frame(f:sub(7, 12) .. PEER .. "\x86\xdd\x60\0\0\0" .. be16(#r) .. "\58\64" .. TGT .. src .. r)
    end
  end)
  local st = t:stats()
  assert(ns == 1 and reqs == 4, ("NS %d, requests %d"):format(ns, reqs))
  assert(st.ping_tx == 4 and st.ping_reply == 4 and st.ping_timeout == 0 and st.ping_stray == 0, st.ping_reply)
end

-- QinQ: outer VLAN 100 (802.1ad), inner 200
function T.qinq_both_tags_byte_exact()
  setup()
  local t = hosts.new{ count = 2, mac = "02:09:0a:00:00:01", ip = "10.9.10.1", vlan = 200, outer_vlan = 100 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local tags = "\x88\xa8\0\100\x81\0\0\200"
  local arp_req = string.char(0, 1, 8, 0, 6, 4, 0, 1) .. PEER .. "\10\9\10\254" .. ("\0"):rep(6) .. "\10\9\10\2"
  t:poll(rxq, txq, rx, tx)
  rx:free()
  send_frame(("\xff"):rep(6) .. PEER .. tags .. "\8\6" .. arp_req)
  send_frame(("\xff"):rep(6) .. PEER .. "\x81\0\0\200\8\6" .. arp_req)              -- the inner tag alone
  send_frame(("\xff"):rep(6) .. PEER .. "\x81\0\0\100\x81\0\0\200\8\6" .. arp_req)  -- outer TPID 0x8100
  send_frame(("\xff"):rep(6) .. PEER .. "\x88\xa8\0\101\x81\0\0\200\8\6" .. arp_req)  -- outer VLAN 101
  local replies, left = {}, 0
  for _ = 1, 50 do
    local n = t:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local f = ffi.string(rx.data[i], rx.len[i])
      if f:sub(13, 22) == tags .. "\8\6" and f:byte(30) == 2 then replies[#replies + 1] = f
      elseif f:sub(7, 12) == PEER then left = left + 1 end
    end
    rx:free()
  end
  assert(#replies == 2, "two ARP replies, to the QinQ requests of VLANs 100 and 200; got " .. #replies)
  local want = PEER .. "\2\9\10\0\0\2" .. tags .. "\8\6" .. string.char(0, 1, 8, 0, 6, 4, 0, 2) ..
    "\2\9\10\0\0\2\10\9\10\2" .. PEER .. "\10\9\10\254"
  for k = 1, 2 do
    assert(replies[k]:sub(1, #want) == want and #replies[k] == 68, "the ARP reply's bytes, both tags (68 bytes)")
  end
  assert(left == 2, "the other two requests left in rx, got " .. left)
  assert(t:stats().arp_request_rx == 2, "two requests the table's")
  -- a ping's requests carry both tags too (outer TPID 0x8100 here)
  local q = hosts.new{ count = 1, mac = "02:09:0b:00:00:01", ip = "10.9.11.1", vlan = 7, outer_vlan = 9,
    outer_tpid = 0x8100 }
  q:poll(rxq, txq, rx, tx)
  rx:free()
  q:ping{ target = "10.9.11.254", mac = "02:00:00:00:00:97", count = 1, timeout = 0.05 }
  local got
  run(q, rx, tx, 3, function(f) if f:sub(1, 6) == "\2\0\0\0\0\x97" then got = f end end)
  assert(got and got:sub(13, 22) == "\x81\0\0\9\x81\0\0\7\8\0", "the echo request's two tags")
  assert(sum(got:sub(23, 42)) == 0xffff and sum(got:sub(43, 42 + 8 + 56)) == 0xffff, "its checksums")
  assert(q:stats().ping_timeout == 1)
end

-- ranges of VLANs: 2 hosts on each of outer 100..101 x inner 200..201, a
-- table a pair: each host answers ARP with its own pair's tags, not on
-- another pair; a group ping's requests carry each table's tags
function T.qinq_ranges_a_table_a_pair()
  setup()
  local g = hosts.vlans{ per_vlan = 2, vlan = 200, vlans = 2, outer_vlan = 100, outer_vlans = 2,
    mac = "02:09:0e:00:00:01", ip = "10.9.14.1", prefix = "qq" }
  assert(#g.tables == 4 and g.count == 8, "four tables, eight hosts")
  local pool = g.tables[1]:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  g:poll(rxq, txq, rx, tx)
  rx:free()
  local function tags(o, i) return "\x88\xa8\0" .. string.char(o) .. "\x81\0\0" .. string.char(i) end
  -- host k (0..7): pair k // 2, inner 200 + pair % 2, outer 100 + pair // 2
  for k = 0, 7 do
    local pair = math.floor(k / 2)
    local req = string.char(0, 1, 8, 0, 6, 4, 0, 1) .. PEER .. "\10\9\14\254" .. ("\0"):rep(6) .. "\10\9\14" ..
      string.char(1 + k)
    send_frame(("\xff"):rep(6) .. PEER .. tags(100 + math.floor(pair / 2), 200 + pair % 2) .. "\8\6" .. req)
    if k == 0 then send_frame(("\xff"):rep(6) .. PEER .. tags(101, 200) .. "\8\6" .. req) end   -- another pair's tags
  end
  local got = {}
  for _ = 1, 50 do
    local n = g:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local f = ffi.string(rx.data[i], rx.len[i])
      if f:sub(21, 22) == "\8\6" and f:byte(30) == 2 then got[#got + 1] = f end
    end
    rx:free()
  end
  assert(#got == 8, "eight ARP replies, got " .. #got)
  for _, f in ipairs(got) do
    local k = f:byte(12) - 1
    local pair = math.floor(k / 2)
    assert(f:sub(7, 11) == "\2\9\14\0\0" and f:sub(13, 20) == tags(100 + math.floor(pair / 2), 200 + pair % 2),
      "host " .. k .. "'s reply with its pair's tags")
  end
  g:ping{ target = "10.9.14.254", mac = "02:00:00:00:00:94", count = 1, timeout = 0.05 }
  local reqs = {}
  local stop = tonumber(surge.tsc()) + 3 * tonumber(surge.tsc_hz())
  repeat
    local n = g:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local f = ffi.string(rx.data[i], rx.len[i])
      if f:sub(1, 6) == "\2\0\0\0\0\x94" then reqs[f:byte(12) - 1] = f:sub(13, 20) end
    end
    rx:free()
  until g:settled() or tonumber(surge.tsc()) > stop
  for k = 0, 7 do
    local pair = math.floor(k / 2)
    assert(reqs[k] == tags(100 + math.floor(pair / 2), 200 + pair % 2), "host " .. k .. "'s request with its pair's tags")
  end
  local st = g:stats()
  assert(st.ping_tx == 8 and st.ping_timeout == 8 and st.arp_request_rx == 8 and st.state.bound == 8, st.ping_tx)
  errors(at("surge.hosts.vlans: 3 inner VLANs from 4093 pass 4094", 1), function()
    hosts.vlans{ per_vlan = 1, vlan = 4093, vlans = 3, mac = "02:00:00:00:00:01", ip = "10.0.0.1" } end)
  errors(at("surge.hosts.vlans: 2 outer VLANs from 4094 pass 4094", 1), function()
    hosts.vlans{ per_vlan = 1, vlan = 5, outer_vlan = 4094, outer_vlans = 2, mac = "02:00:00:00:00:01", ip = "10.0.0.1" } end)
  errors(at(("surge.hosts.vlans: 100 VLAN pairs, a table each, and a run has room for %d more tables")
    :format(64 - #hosts.tables()), 2), function()
    hosts.vlans{ per_vlan = 1, vlan = 5, vlans = 10, outer_vlan = 7, outer_vlans = 10, mac = "02:00:00:00:00:01" } end)
  -- its own options, by its own name: a count (hosts.new's, per_vlan here) is not taken silently
  errors((at("surge.hosts.vlans: unknown option 'count' (announce, arp_check, ", 1):gsub("%$$", "")), function()
    hosts.vlans{ per_vlan = 1, count = 5, vlan = 5, mac = "02:00:00:00:00:01", ip = "10.0.0.1" } end)
  errors((at("surge.hosts.vlans: unknown option 'vlan_count' (", 1):gsub("%$$", "")), function()
    hosts.vlans{ per_vlan = 1, vlan_count = 5, vlan = 5, mac = "02:00:00:00:00:01", ip = "10.0.0.1" } end)
  errors(at("surge.hosts.vlans: prefix: '" .. ("p"):rep(31) .. "' must be 1..30 letters, digits, _ - . (a table's is it "
    .. "and .OUTER.INNER)", 2), function()
    hosts.vlans{ per_vlan = 1, vlan = 5, mac = "02:00:00:00:00:01", ip = "10.0.0.1", prefix = ("p"):rep(31) } end)
end

function T.bad_pings_and_qinq_refused_at_the_callers_line()
  local M = "02:00:00:00:00:01"
  local t = hosts.new{ count = 4, mac = "02:09:0c:00:00:01", ip = "10.9.12.1" }
  errors(at("hosts:ping: target: '0.0.0.0' is no station's address", 1), function()
    t:ping{ target = "0.0.0.0" } end)
  errors(at("hosts:ping: target: '224.1.1.1' is a multicast address", 1), function()
    t:ping{ target = "224.1.1.1" } end)
  errors(at("hosts:ping: target: '255.255.255.255' is the broadcast address", 1), function()
    t:ping{ target = "255.255.255.255" } end)
  errors(at("hosts:ping: target: 'ff02::1' is a multicast address", 1), function()
    t:ping{ target = "ff02::1" } end)
  errors(at("hosts:ping: count (requests a host): expected an integer in 1..65535, got 0", 1), function()
    t:ping{ target = "10.9.12.254", count = 0 } end)
  errors(at("hosts:ping: hosts: expected an integer in 1..2, got 3", 1), function()
    t:ping{ target = "10.9.12.254", first = 2, hosts = 3 } end)
  errors(at("hosts:ping: size (echo data bytes): expected an integer in 8..1472, got 4", 1), function()
    t:ping{ target = "10.9.12.254", size = 4 } end)
  -- the ABI called without its struct (Python, a script's own FFI): refused, not read
  assert(ffi.C.surge_hosts_ping(t.id, nil) == -22 and ffi.string(ffi.C.surge_last_error()):find("no ping", 1, true))
  assert(ffi.C.surge_hosts_dhcp4(t.id, nil) == -22 and ffi.string(ffi.C.surge_last_error()):find("no options", 1, true))
  t:ping{ target = "10.9.12.254", mac = "02:00:00:00:00:96" }
  errors(at("surge_hosts_ping: the table's hosts are pinging already", 1), function()
    t:ping{ target = "10.9.12.254" } end)
  errors(at("hosts:ping: target: an IPv6 target, and the hosts have no IPv6 (ip6)", 1), function()
    t:ping{ target = "2001:db8::1" } end)
  -- a request the pool's mbufs cannot hold: the poll fails, in one line, and the ping ends
  setup()
  local q = hosts.new{ count = 1, mac = "02:09:0d:00:00:01", ip = "10.9.13.1" }
  local small = surge.pool{ template = surge.proto.udp{}, size = 255, data_room = 512 }
  local rx, tx = small:burst(8), small:burst(8)
  q:poll(rxq, txq, rx, tx)
  rx:free()
  q:ping{ target = "10.9.13.254", mac = "02:00:00:00:00:95", size = 1472 }
  errors(at("surge_hosts_ping: a request of 1514 bytes and the tx pool's mbufs hold 512", 1), function()
    q:poll(rxq, txq, rx, tx) end)
  rx:free()
  assert(q:settled() and q:stats().ping_skipped == 1 and q:stats().ping_tx == 0, "the ping ended, its request unsent")
  errors(at("surge.hosts.new: outer_vlan: QinQ needs the inner tag too (vlan = 1..4094)", 1), function()
    hosts.new{ count = 1, mac = M, ip = "10.0.0.1", outer_vlan = 100 } end)
  errors(at("surge.hosts.new: outer_vlan (QinQ: the outer tag's VLAN id): expected an integer in 1..4094, got 4095", 1),
    function() hosts.new{ count = 1, mac = M, ip = "10.0.0.1", vlan = 5, outer_vlan = 4095 } end)
  errors(at("surge.hosts.new: outer_tpid: 0x9100: 0x88a8 (802.1ad) or 0x8100", 1), function()
    hosts.new{ count = 1, mac = M, ip = "10.0.0.1", vlan = 5, outer_vlan = 6, outer_tpid = 0x9100 } end)
  errors(at("surge.hosts.new: outer_tpid: with outer_vlan (QinQ)", 1), function()
    hosts.new{ count = 1, mac = M, ip = "10.0.0.1", vlan = 5, outer_tpid = 0x88a8 } end)
end

return T
