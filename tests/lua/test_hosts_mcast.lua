-- surge.hosts' multicast memberships (docs/hosts.md "Multicast") on
-- `surge test`'s ring port, which loops what the hosts send back to their
-- poll (reports are not the hosts' own to take: they stay in rx, where the
-- test reads them). Each report and leave is compared byte for byte with
-- the frame surge.proto.igmp builds for the same host and group (written
-- apart, for the rfc3918 scenario: IPv4 TTL 1 with the router alert option,
-- IPv6 hop limit 1 with the hop-by-hop router alert, the link-local source
-- from the MAC) and its checksums are summed again here; queries injected on
-- the ring are answered within their maximum response time, spread over
-- it; a bad checksum is counted and not answered; the refusals of t:join.
local surge = require("surge")
local ffi = require("ffi")
local bit = require("bit")
local hosts = require("surge.hosts")
local igmp = require("surge.proto.igmp")
local ip6 = require("surge.proto.ip6")
local cksum = require("surge.proto.checksum")
local testrun = require("surge.vm.testrun")
local errors, at = testrun.errors, testrun.at

local T = {}

local rxq, txq, inject
local function setup()
  local r = testrun.ring()
  rxq, txq, inject = r.rxq, r.txq, r.send
end

-- polls t for `seconds`; the IGMP / MLD frames left in rx, in order, as
-- { bytes, ms } (ms since the start)
local function collect(t, seconds, rx, tx, out)
  out = out or {}
  local hz = tonumber(surge.tsc_hz())
  local t0 = tonumber(surge.tsc())
  while tonumber(surge.tsc()) < t0 + seconds * hz do
    local n = t:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local p, len = rx.data[i], rx.len[i]
      local is4 = len >= 38 and p[12] == 8 and p[13] == 0 and p[23] == 2
      local is6 = len >= 62 and p[12] == 0x86 and p[13] == 0xdd and p[20] == 0 and p[54] == 58
      if is4 or is6 then
        out[#out + 1] = { bytes = ffi.string(p, len), ms = (tonumber(surge.tsc()) - t0) * 1000 / hz }
      end
    end
    rx:free()
  end
  return out
end

local MAC = { "02:09:08:00:00:01", "02:09:08:00:00:02", "02:09:08:00:00:03" }
local IP = { "10.9.8.1", "10.9.8.2", "10.9.8.3" }

-- the frames of `got` (in any order) are exactly those of `want`
local function same_set(what, got, want)
  local count = {}
  for _, f in ipairs(want) do count[f.bytes] = (count[f.bytes] or 0) + 1 end
  for i, f in ipairs(got) do
    assert(count[f.bytes] and count[f.bytes] > 0, ("%s: frame %d (%d bytes) is none of the %d expected: %s"):format(
      what, i, #f.bytes, #want, (f.bytes:gsub(".", function(c) return ("%02x"):format(c:byte()) end))))
    count[f.bytes] = count[f.bytes] - 1
  end
  assert(#got == #want, ("%s: %d frames, expected %d"):format(what, #got, #want))
end

-- a table of count hosts from mac / ip, its bursts, polled until bound
local function fresh(count, mac, ip, prefix)
  setup()
  local t = hosts.new{ count = count, mac = mac, ip = ip, prefix = prefix }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  collect(t, 0.05, rx, tx)
  return t, rx, tx
end

local function ok_sum(s, from, n, acc)
  return cksum.sum(ffi.cast("const uint8_t *", s) + from, n, acc) == 0xffff
end

function T.hm_igmp_reports_and_leaves_byte_for_byte()
  local t, rx, tx = fresh(3, MAC[1], IP[1], "hm1")
  -- hosts 1 and 2 join 239.1.2.3 and 239.1.2.4 with IGMPv2, once (robustness 1)
  local m = t:join{ group = "239.1.2.3", groups = 2, first = 1, hosts = 2, version = 2, robustness = 1 }
  local got = collect(t, 0.1, rx, tx)
  local want = {}
  for h = 2, 3 do
    for _, g in ipairs{ "239.1.2.3", "239.1.2.4" } do want[#want + 1] = igmp.v2{ src_mac = MAC[h], src = IP[h], group = g } end
  end
  same_set("v2 reports", got, want)
  for _, f in ipairs(got) do
    assert(ok_sum(f.bytes, 14, 24) and ok_sum(f.bytes, 38, 8), "v2 report checksums")
    assert(f.bytes:byte(23) == 1 and f.bytes:sub(35, 38) == "\148\4\0\0", "TTL 1, router alert")
  end
  assert(t:membership(m).state == "joined" and t:membership(m).reports == 4, t:membership(m).state)
  -- the joined events: one a host
  local joined = {}
  for _, ev in ipairs(t:events()) do
    if ev.kind == "joined" then joined[#joined + 1] = ev.host .. "/" .. ev.membership .. "/" .. ev.ip end
  end
  table.sort(joined)
  assert(table.concat(joined, " ") == ("1/%d/239.1.2.3 2/%d/239.1.2.3"):format(m, m), table.concat(joined, " "))
  -- host 0 joins 239.2.0.1 with IGMPv3: TO_EX {} to 224.0.0.22, TOS 0xc0, twice (robustness 2) within 50 ms
  local m3 = t:join{ group = "239.2.0.1", first = 0, hosts = 1, robustness = 2, interval = 0.05 }
  assert(not t:settled(), "settled while joining")
  got = collect(t, 0.15, rx, tx)
  assert(t:settled(), "not settled once joined")
  local v3 = igmp.v3{ src_mac = MAC[1], src = IP[1], records = { { type = igmp.TO_EX, group = "239.2.0.1" } } }
  same_set("v3 reports", got, { v3, v3 })
  assert(got[2].ms - got[1].ms <= 150, ("the retransmission within the interval: %.1f ms"):format(got[2].ms - got[1].ms))
  -- leaves: v2 leave messages to 224.0.0.2 once; v3 TO_IN {} twice
  t:leave(m)
  t:leave(m3)
  assert(not t:settled(), "settled while leaving")
  got = collect(t, 0.15, rx, tx)
  local vin = igmp.v3{ src_mac = MAC[1], src = IP[1], records = { { type = igmp.TO_IN, group = "239.2.0.1" } } }
  want = { vin, vin }
  for h = 2, 3 do
    for _, g in ipairs{ "239.1.2.3", "239.1.2.4" } do
      want[#want + 1] = igmp.v2{ src_mac = MAC[h], src = IP[h], group = g, leave = true }
    end
  end
  same_set("leaves", got, want)
  assert(t:membership(m).state == "free" and t:membership(m3).state == "free", t:membership(m).state)
  local st = t:stats()
  assert(st.igmp_v2_report_tx == 4 and st.igmp_leave_tx == 4 and st.igmp_v3_report_tx == 4,
    ("v2 %d leave %d v3 %d"):format(st.igmp_v2_report_tx, st.igmp_leave_tx, st.igmp_v3_report_tx))
  local left = 0
  for _, ev in ipairs(t:events()) do if ev.kind == "left" then left = left + 1 end end
  assert(left == 3, "left events: " .. left)
  rx:free()
end

function T.hm_mld_reports_byte_for_byte()
  local t, rx, tx = fresh(2, MAC[1], IP[1], "hm2")
  t:join{ group = "ff3e::1:7", first = 0, hosts = 1, robustness = 1 }                 -- MLDv2
  local got = collect(t, 0.1, rx, tx)
  local ll = igmp.link_local(MAC[1])
  assert(ll == "fe80::9:8ff:fe00:1", ll)
  same_set("MLDv2 report", got, { igmp.mld2{ src_mac = MAC[1], src = ll,
    records = { { type = igmp.TO_EX, group = "ff3e::1:7" } } } })
  -- MLDv1 (RFC 2710 3): type 131 to the group, from host 1's link-local address
  local m1 = t:join{ group = "ff3e::1:8", first = 1, hosts = 1, version = 1, robustness = 1 }
  got = collect(t, 0.1, rx, tx)
  assert(#got == 1, #got)
  local b = got[1].bytes
  local grp = ip6.addr("ff3e::1:8")
  assert(#b == 14 + 40 + 8 + 24, #b)
  assert(b:sub(1, 6) == "\51\51\0\1\0\8", "to 33:33 and the group's last 32 bits")
  assert(b:sub(15, 22) == "\96\0\0\0\0\32\0\1", "IPv6: payload 32, hop-by-hop next, hop limit 1")
  assert(b:sub(23, 38) == ip6.addr(igmp.link_local(MAC[2])) and b:sub(39, 54) == grp, "from the link-local, to the group")
  assert(b:sub(55, 62) == "\58\0\5\2\0\0\1\0", "hop-by-hop: router alert (MLD), PadN")
  assert(b:byte(63) == 131 and b:sub(71, 86) == grp, "a listener report for the group")
  local acc = ip6.pseudo_sum(cksum.sum(ffi.cast("const uint8_t *", b) + 22, 32), 58, 24)
  assert(ok_sum(b, 62, 24, acc), "the ICMPv6 checksum over the pseudo header")
  t:leave(m1)
  got = collect(t, 0.1, rx, tx)
  assert(#got == 1 and got[1].bytes:byte(63) == 132 and got[1].bytes:sub(39, 54) == ip6.addr("ff02::2"), "a done to ff02::2")
  acc = ip6.pseudo_sum(cksum.sum(ffi.cast("const uint8_t *", got[1].bytes) + 22, 32), 58, 24)
  assert(ok_sum(got[1].bytes, 62, 24, acc), "the done's checksum")
  local st = t:stats()
  assert(st.mld_v2_report_tx == 1 and st.mld_v1_report_tx == 1 and st.mld_done_tx == 1, st.mld_v2_report_tx)
  rx:free()
end

-- an IGMP query from 10.9.8.254: max response time in tenths, group (nil: general), v3 when `v3`
local function igmp_query(tenths, group, v3, bad)
  local g = group and { group:match("(%d+)%.(%d+)%.(%d+)%.(%d+)") } or { 0, 0, 0, 0 }
  local msg = string.char(0x11, tenths, 0, 0, tonumber(g[1]), tonumber(g[2]), tonumber(g[3]), tonumber(g[4]))
  if v3 then msg = msg .. string.char(2, 125, 0, 0) end
  local s = cksum.finish(cksum.sum(ffi.cast("const uint8_t *", msg), #msg))
  if bad then s = bit.bxor(s, 1) end
  msg = msg:sub(1, 2) .. string.char(bit.rshift(s, 8), bit.band(s, 255)) .. msg:sub(5)
  local ip = string.char(0x46, 0xc0, 0, 24 + #msg, 0, 0, 0, 0, 1, 2, 0, 0, 10, 9, 8, 254, 224, 0, 0, 1) .. "\148\4\0\0"
  local hs = cksum.finish(cksum.sum(ffi.cast("const uint8_t *", ip), 24))
  ip = ip:sub(1, 10) .. string.char(bit.rshift(hs, 8), bit.band(hs, 255)) .. ip:sub(13)
  local f = "\1\0\94\0\0\1\2\9\8\0\0\254\8\0" .. ip .. msg
  return f .. ("\0"):rep(math.max(0, 60 - #f))
end

function T.hm_queries_answered_within_their_max_response_time()
  local N = 200
  local t, rx, tx = fresh(N, "02:09:09:00:00:01", "10.9.9.1", "hm3")
  local m = t:join{ group = "239.3.3.3", version = 2, robustness = 1 }
  assert(#collect(t, 0.1, rx, tx) == N)
  -- a general query, 0.5 s: each host reports once within it, the reports spread over it
  inject(igmp_query(5))
  local got = collect(t, 0.8, rx, tx)
  assert(#got == N, ("%d reports to the general query, expected %d"):format(#got, N))
  local last, early = 0, 0
  for _, f in ipairs(got) do
    last = math.max(last, f.ms)
    if f.ms < 250 then early = early + 1 end
  end
  -- (each is due within 500 ms; sent by the first poll after: 200 ms of slack for a loaded machine)
  assert(last <= 700, ("the last report %.0f ms after the query (max response 500 ms)"):format(last))
  assert(early > N / 4 and early < 3 * N / 4, ("%d of %d reports in the first half: not spread"):format(early, N))
  -- a group-specific query for another group: no answer; for ours: one report a host
  inject(igmp_query(2, "239.3.3.4"))
  assert(#collect(t, 0.3, rx, tx) == 0, "a query for a group no host joined is answered")
  inject(igmp_query(2, "239.3.3.3"))
  assert(#collect(t, 0.3, rx, tx) == N, "the group-specific query")
  -- a bad checksum: counted, not answered
  inject(igmp_query(2, nil, false, true))
  assert(#collect(t, 0.3, rx, tx) == 0, "a query with a bad checksum is answered")
  local st = t:stats()
  assert(st.mcast_bad == 1 and st.igmp_query_rx == 3, ("bad %d queries %d"):format(st.mcast_bad, st.igmp_query_rx))
  assert(t:membership(m).queries == 2, t:membership(m).queries)
  -- IGMPv3 hosts answer a v3 query with one IS_EX record each, and a v2
  -- query in v2 (RFC 3376 7.2.1: an older querier present)
  rx:free()
  local t3, rx3, tx3 = fresh(2, "02:09:0a:00:00:01", "10.9.10.1", "hm4")
  rx, tx = rx3, tx3
  local m3 = t3:join{ group = "239.4.4.4", robustness = 1 }
  collect(t3, 0.05, rx, tx)
  inject(igmp_query(1, nil, true))
  got = collect(t3, 0.2, rx, tx)
  same_set("v3 answers", got, {
    igmp.v3{ src_mac = "02:09:0a:00:00:01", src = "10.9.10.1", records = { { type = igmp.IS_EX, group = "239.4.4.4" } } },
    igmp.v3{ src_mac = "02:09:0a:00:00:02", src = "10.9.10.2", records = { { type = igmp.IS_EX, group = "239.4.4.4" } } } })
  inject(igmp_query(1))
  got = collect(t3, 0.2, rx, tx)
  same_set("v2 answers of v3 hosts", got, { igmp.v2{ src_mac = "02:09:0a:00:00:01", src = "10.9.10.1", group = "239.4.4.4" },
    igmp.v2{ src_mac = "02:09:0a:00:00:02", src = "10.9.10.2", group = "239.4.4.4" } })
  assert(t3:membership(m3).version_now == 2, t3:membership(m3).version_now)
  rx:free()
end

-- on VLAN 7: reports tagged (the frame surge.proto.igmp builds, with the
-- tag after the MACs), a tagged query answered, an untagged one left in rx
function T.hm_vlan_reports_tagged_and_queries_of_the_vlan_only()
  setup()
  local t = hosts.new{ count = 1, mac = "02:09:0c:00:00:01", ip = "10.9.12.1", vlan = 7, prefix = "hm6" }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  t:join{ group = "239.7.7.7", version = 2, robustness = 1 }
  local function tagged(f) return f.bytes:sub(1, 12) .. "\129\0\0\7" .. f.bytes:sub(13) end
  local want = tagged(igmp.v2{ src_mac = "02:09:0c:00:00:01", src = "10.9.12.1", group = "239.7.7.7" })
  local function reports(seconds)
    local out, hz = {}, tonumber(surge.tsc_hz())
    local t0 = tonumber(surge.tsc())
    while tonumber(surge.tsc()) < t0 + seconds * hz do
      local n = t:poll(rxq, txq, rx, tx)
      for i = 0, n - 1 do
        local b = ffi.string(rx.data[i], rx.len[i])
        if b:sub(13, 16) == "\129\0\0\7" and b:byte(28) == 2 then out[#out + 1] = b end
      end
      rx:free()
    end
    return out
  end
  local got = reports(0.1)
  assert(#got == 1 and got[1] == want, ("%d tagged reports, the first as built: %s"):format(#got, tostring(got[1] == want)))
  local q = igmp_query(1)
  inject(q)                                                 -- untagged: not the hosts'
  assert(#reports(0.2) == 0, "an untagged query answered by hosts on VLAN 7")
  inject(q:sub(1, 12) .. "\129\0\0\7" .. q:sub(13))
  got = reports(0.2)
  assert(#got == 1 and got[1] == want, "the tagged query's answer")
  assert(t:stats().igmp_query_rx == 1, t:stats().igmp_query_rx)
end

-- an IGMPv3 host in 200 groups: its report split over frames of at most
-- 183 records (1500 bytes), or as many as the pool's mbufs hold (512 bytes
-- of data: 58 records), every record sent once
function T.hm_v3_records_split_by_the_mtu_and_the_mbufs()
  setup()
  for _, case in ipairs{ { room = 2048, most = 183, frames = 2 }, { room = 512, most = 58, frames = 4 } } do
    local t = hosts.new{ count = 1, mac = "02:09:0d:00:00:01", ip = "10.9.13.1", prefix = "hm7_" .. case.room }
    local pool = surge.pool{ template = surge.proto.udp{}, size = 1023, data_room = case.room }
    local rx, tx = pool:burst(64), pool:burst(64)
    t:join{ group = "239.13.0.1", groups = 200, robustness = 1 }
    local got = collect(t, 0.1, rx, tx)
    local seen, most = {}, 0
    for _, f in ipairs(got) do
      local b = f.bytes
      local n = b:byte(45) * 256 + b:byte(46)
      assert(#b == 14 + 24 + 8 + 8 * n and b:byte(39) == 0x22, "a v3 report of its records' length")
      assert(ok_sum(b, 38, 8 + 8 * n), "the report's checksum")
      most = math.max(most, n)
      for r = 0, n - 1 do
        local g = b:sub(47 + 8 * r + 4, 47 + 8 * r + 7)
        assert(b:byte(47 + 8 * r) == igmp.TO_EX and not seen[g], "a TO_EX record, each group once")
        seen[g] = true
      end
    end
    local ng = 0
    for _ in pairs(seen) do ng = ng + 1 end
    assert(#got == case.frames and most == case.most and ng == 200,
      ("data room %d: %d frames, at most %d records, %d groups"):format(case.room, #got, most, ng))
    assert(t:stats().tx_nobufs == 0, "no frame refused")
  end
end

-- hosts 3..5 of ten leave: their leaves alone; the others stay joined (in
-- two memberships) and answer a query; a part of a membership still
-- joining, or hosts outside it, are refused
function T.hm_a_part_of_a_membership_leaves()
  local t, rx, tx = fresh(10, "02:09:0e:00:00:01", "10.9.14.1", "hm8")
  local m = t:join{ group = "239.14.0.1", version = 2, robustness = 1 }
  errors(at(("surge_hosts_leave: membership %d is still joining: leave it whole or once it is joined"):format(m), 1),
    function() t:leave(m, 3, 3) end)
  assert(#collect(t, 0.1, rx, tx) == 10)
  errors(at(("surge_hosts_leave: hosts 8..+3 are not all in membership %d (hosts 0..9)"):format(m), 1), function()
    t:leave(m, 8, 3) end)
  local a, b = t:leave(m, 3, 3)
  assert(a and b and a ~= m and b ~= m and a ~= b, "two memberships stay")
  local want = {}
  for h = 3, 5 do
    want[#want + 1] = igmp.v2{ src_mac = ("02:09:0e:00:00:%02x"):format(h + 1), src = "10.9.14." .. (h + 1),
      group = "239.14.0.1", leave = true }
  end
  same_set("the part's leaves", collect(t, 0.1, rx, tx), want)
  local ma, mb = t:membership(a), t:membership(b)
  assert(ma.state == "joined" and ma.first == 0 and ma.hosts == 3 and mb.first == 6 and mb.hosts == 4,
    ("%s %d+%d, %d+%d"):format(ma.state, ma.first, ma.hosts, mb.first, mb.hosts))
  inject(igmp_query(1))
  want = {}
  for _, h in ipairs{ 0, 1, 2, 6, 7, 8, 9 } do
    want[#want + 1] = igmp.v2{ src_mac = ("02:09:0e:00:00:%02x"):format(h + 1), src = "10.9.14." .. (h + 1),
      group = "239.14.0.1" }
  end
  same_set("the others' answers", collect(t, 0.3, rx, tx), want)
  -- the rest leave whole: every membership free
  t:leave(a)
  t:leave(b)
  assert(#collect(t, 0.1, rx, tx) == 7)
  assert(t:membership(a).state == "free" and t:membership(b).state == "free" and t:membership(m).state == "free")
  rx:free()
end

function T.hm_join_refusals_at_the_callers_line()
  setup()
  local t = hosts.new{ count = 4, mac = "02:09:0b:00:00:01", ip = "10.9.11.1", prefix = "hm5" }
  errors(at("surge_hosts_join: 2 groups from 239.255.255.255: not all in 224.0.0.0/4", 1), function()
    t:join{ group = "239.255.255.255", groups = 2 } end)
  errors(at("surge_hosts_join: 224.0.0.5: the local network control block is never reported (RFC 4541 2.1.2)", 1),
    function() t:join{ group = "224.0.0.5" } end)
  errors(at("surge_hosts_join: a reserved or interface-local scope, or ff02::1, is never reported (RFC 3810 6)", 1),
    function() t:join{ group = "ff02::1" } end)
  errors(at("hosts:join: group: '239.1' is not an IPv4 address"), function() t:join{ group = "239.1" } end)
  errors(at("surge_hosts_join: 4 hosts times 2147483648 groups: at most 2^32 - 1 pairs a membership", 1), function()
    t:join{ group = "239.1.1.1", groups = 2 ^ 31 } end)
  errors(at("hosts:join: hosts: expected an integer in 1..2, got 3", 1), function()
    t:join{ group = "239.1.1.1", first = 2, hosts = 3 } end)
  errors(at("hosts:join: version (IGMP 2 or 3): expected an integer in 2..3, got 1", 1), function()
    t:join{ group = "239.1.1.1", version = 1 } end)
  local m = t:join{ group = "239.1.1.1", groups = 10, first = 0, hosts = 2 }
  errors(at(("surge_hosts_join: hosts 0..1 already joined some of these groups (membership %d)"):format(m), 1),
    function() t:join{ group = "239.1.1.5", first = 1, hosts = 3 } end)
  t:join{ group = "239.1.1.5", first = 2, hosts = 2 }        -- other hosts, the same groups: fine
  errors(at("surge_hosts_leave: no membership 63 joined"), function() t:leave(63) end)
end

return T
