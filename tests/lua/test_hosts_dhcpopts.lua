-- The DHCPv4 clients' options chosen by the script (issue 33, docs/hosts.md
-- "DHCP options") on `surge test`'s ring port: the DISCOVER's options
-- byte for byte (host names and relay agent information from patterns,
-- vendor class, client identifier and parameter list replacing the
-- client's own, a raw option; the message longer than 300 bytes with
-- its IPv4 and UDP lengths and checksum right); the options an ACK gives
-- kept per host, read from sname and file too (option overload); the
-- refusals at the caller's line; and the hosts behind the generator as
-- their relay agent (issue 33, "DHCP relay").
local surge = require("surge")
local ffi = require("ffi")
local bit = require("bit")
local hosts = require("surge.hosts")
local testrun = require("surge.vm.testrun")
local cksum = require("surge.proto.checksum")
local errors, at = testrun.errors, testrun.at

local T = {}

local rxq, txq, send_frame
local function setup()
  local r = testrun.ring()
  rxq, txq, send_frame = r.rxq, r.txq, r.send
end

-- polls t until it has sent its DISCOVERs and they came back around the
-- ring: each host's (by its MAC's last byte) as a string of the frame
local function discovers(t, n)
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local got, k = {}, 0
  for _ = 1, 200 do
    local m = t:poll(rxq, txq, rx, tx)
    for i = 0, m - 1 do
      local p = rx.data[i]
      if rx.len[i] > 282 and p[23] == 17 and p[37] == 67 and p[282] == 53 and p[284] == 1 then
        got[p[75]] = ffi.string(p, rx.len[i])
        k = k + 1
      end
    end
    rx:free()
    if k >= n then return got, pool, rx, tx end
  end
  error("no DISCOVERs came back")
end

-- the options of a BOOTP message (the frame's bytes from 282) as a list of { code, value }
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

function T.the_discover_carries_the_scripts_options_byte_for_byte()
  setup()
  local t = hosts.new{ count = 3, mac = "02:0a:00:00:00:10", dhcp = true, subnet = "10.10.0.0/24", rto = 5,
    hostname = "cpe-%d", number = 7, vendor_class = "surge-cpe", client_id = "\0cust-x", params = { 1, 3, 6, 42 },
    options = { { 224, "\1\2\3" }, { 77, "" } }, circuit_id = "eth0/%d:100%%", remote_id = "olt-1" }
  local got = discovers(t, 3)
  for h = 0, 2 do
    local f = got[0x10 + h]
    assert(f, "host " .. h .. "'s DISCOVER")
    local o = options(f)
    local want = { { 53, "\1" }, { 12, "cpe-" .. (7 + h) }, { 60, "surge-cpe" }, { 61, "\0cust-x" },
      { 55, "\1\3\6\42" }, { 224, "\1\2\3" }, { 77, "" },
      { 82, "\1" .. string.char(#("eth0/" .. (7 + h) .. ":100%")) .. "eth0/" .. (7 + h) .. ":100%" .. "\2\5olt-1" },
      { 255 } }
    assert(#o == #want, ("host %d: %d options, expected %d"):format(h, #o, #want))
    for k = 1, #want do
      assert(o[k][1] == want[k][1] and o[k][2] == want[k][2],
        ("host %d option %d: %d %q, expected %d %q"):format(h, k, o[k][1], tostring(o[k][2]), want[k][1],
          tostring(want[k][2])))
    end
    -- a 300-byte BOOTP message at least; the lengths and the IPv4 checksum agree with the frame
    local iplen = f:byte(17) * 256 + f:byte(18)
    assert(#f == 14 + iplen and iplen >= 328, #f .. " " .. iplen)
    assert(f:byte(39) * 256 + f:byte(40) == iplen - 20)
    local ip = ffi.new("uint8_t[20]")
    ffi.copy(ip, f:sub(15, 34), 20)
    assert(cksum.sum(ip, 20) == 0xffff or cksum.sum(ip, 20) == 0, "IPv4 checksum")
  end
end

-- A BOOTREPLY to the request p (its xid and chaddr): address yi (4 bytes),
-- the options opts after the cookie, sname and file (empty by default)
local function bootreply(p, yi, opts, sname, file)
  sname, file = sname or "", file or ""
  local chaddr, xid = ffi.string(p + 70, 6), ffi.string(p + 46, 4)
  local bootp = string.char(2, 1, 6, 0) .. xid .. ("\0"):rep(8) .. yi .. ("\0"):rep(8) .. chaddr .. ("\0"):rep(10)
    .. sname .. ("\0"):rep(64 - #sname) .. file .. ("\0"):rep(128 - #file) .. string.char(99, 130, 83, 99) .. opts
  local udp = string.char(0, 67, 0, 68, bit.rshift(8 + #bootp, 8), bit.band(8 + #bootp, 255), 0, 0) .. bootp
  local iplen = 20 + #udp
  send_frame(chaddr .. string.char(2, 0, 0, 0, 0, 0x99, 8, 0) .. string.char(0x45, 0, bit.rshift(iplen, 8),
    bit.band(iplen, 255), 0, 0, 0, 0, 64, 17, 0, 0, 10, 10, 0, 1) .. yi .. udp)
end

-- an OFFER or ACK whose options go on in file (router) and sname (mask, DNS)
local function ack_overloaded(p)
  local sname = string.char(1, 4, 255, 255, 255, 0, 6, 8, 10, 10, 0, 53, 10, 10, 0, 54, 255)
  local file = string.char(3, 4, 10, 10, 0, 254, 58, 4, 0, 0, 3, 232, 255)   -- T1 1000 s
  local opts = string.char(53, 1, p[284] == 1 and 2 or 5, 54, 4, 10, 10, 0, 1, 51, 4, 0, 0, 14, 16,   -- 3600 s
    52, 1, 3, 255)
  bootreply(p, string.char(10, 10, 0, 100 + p[75] - 0x20), opts, sname, file)
end

function T.the_acks_options_are_kept_read_from_sname_and_file_too()
  setup()
  local t = hosts.new{ count = 2, mac = "02:0a:00:00:00:20", dhcp = true, subnet = "10.10.0.0/24", rto = 0.05 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local deadline = surge.tsc() + 5 * surge.tsc_hz()
  while surge.tsc() < deadline and t:stats().state.bound < 2 do
    local n = t:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local p = rx.data[i]
      if rx.len[i] > 284 and p[23] == 17 and p[37] == 67 and (p[284] == 1 or p[284] == 3) then ack_overloaded(p) end
    end
    rx:free()
  end
  local st = t:stats()
  assert(st.state.bound == 2, hosts.format_states(st))
  assert(st.dhcp_overload == st.dhcp_offer_rx + st.dhcp_ack_rx and st.dhcp_bad == 0, st.dhcp_overload)
  for i = 0, 1 do
    local h = t:host(i)
    assert(h.ip == "10.10.0." .. (100 + i) and h.mask == "255.255.255.0" and h.router == "10.10.0.254"
      and h.dns[1] == "10.10.0.53" and h.dns[2] == "10.10.0.54" and h.lease == 3600,
      ("host %d: %s %s %s %s"):format(i, h.ip, tostring(h.mask), tostring(h.router), tostring(h.dns and h.dns[1])))
  end
end

-- a BOOTREPLY (OFFER 2 or ACK 5) to the request p giving address 10.10.0.<last>, lease 3600 s
local function answer(p, msg, last)
  bootreply(p, string.char(10, 10, 0, last), string.char(53, 1, msg, 54, 4, 10, 10, 0, 1, 51, 4, 0, 0, 14, 16, 255))
end

-- RFC 2131 3.1.5 with RFC 5227's probes: host 0's first address (10.10.0.50)
-- is answered for by another MAC: DECLINEd (broadcast, ciaddr 0, 50 the
-- address, 54 the server), and after decline_wait a new DISCOVER binds
-- 10.10.0.51; host 1's probes go unanswered: bound after its 3 probes
function T.the_arp_check_declines_an_address_in_use_and_starts_over()
  setup()
  local t = hosts.new{ count = 2, mac = "02:0a:00:00:00:30", dhcp = true, subnet = "10.10.0.0/24", rto = 0.05,
    arp_check = true, probe = 0.01, decline_wait = 0.05 }
  local pool = t:pool(1023)
  local rx, tx = pool:burst(64), pool:burst(64)
  local declines = {}
  local deadline = surge.tsc() + 5 * surge.tsc_hz()
  while surge.tsc() < deadline and not (t:settled() and t:stats().state.bound == 2) do
    local n = t:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      local p, len = rx.data[i], rx.len[i]
      if len > 284 and p[23] == 17 and p[37] == 67 then
        local msg, host = p[284], p[75] - 0x30
        if msg == 4 then declines[#declines + 1] = ffi.string(p, len) end
        -- host 0: 10.10.0.50 the first time, 10.10.0.51 after; host 1: 10.10.0.60
        local last = host == 1 and 60 or (#declines == 0 and 50 or 51)
        if msg == 1 then answer(p, 2, last) elseif msg == 3 then answer(p, 5, last) end
        if msg == 3 and last == 50 then
          -- another station holds it: its ARP reply reaches the host while it probes (the ring
          -- hands the host its own probes back, taken as its own: they are not seen here)
          send_frame(ffi.string(p + 6, 6) .. string.char(2, 0x99, 0, 0, 0, 1, 8, 6, 0, 1, 8, 0, 6, 4, 0, 2,
            2, 0x99, 0, 0, 0, 1, 10, 10, 0, 50) .. ffi.string(p + 6, 6) .. string.char(0, 0, 0, 0))
        end
      end
    end
    rx:free()
  end
  local st = t:stats()
  assert(st.state.bound == 2 and st.dhcp_declined == 1 and st.arp_conflict == 1, hosts.format_states(st) ..
    (" declined %d conflicts %d"):format(st.dhcp_declined, st.arp_conflict))
  assert(t:host(0).ip == "10.10.0.51" and t:host(1).ip == "10.10.0.60", t:host(0).ip .. " " .. t:host(1).ip)
  -- 3 probes for each address used; the one in use was answered before its first or second
  assert(st.arp_probe_tx == 6 or st.arp_probe_tx == 7, st.arp_probe_tx)
  assert(#declines == 1)
  local f = declines[1]
  assert(f:sub(1, 6) == ("\255"):rep(6) and f:sub(31, 34) == ("\255"):rep(4), "broadcast")
  assert(f:sub(55, 58) == "\0\0\0\0", "ciaddr 0")
  local o = options(f)
  local want = { { 53, "\4" }, { 61, "\1\2\10\0\0\0\48" }, { 50, "\10\10\0\50" }, { 54, "\10\10\0\1" }, { 255 } }
  assert(#o == #want, #o)
  for k = 1, #want do assert(o[k][1] == want[k][1] and o[k][2] == want[k][2], "DECLINE option " .. k) end
  local kinds = {}
  for _, e in ipairs(t:events()) do kinds[#kinds + 1] = e.host .. e.kind end
  assert(table.concat(kinds, " "):find("0declined") and select(2, table.concat(kinds, " "):gsub("bound", "")) == 2,
    table.concat(kinds, " "))
end

function T.options_out_of_bounds_are_refused_at_the_callers_line()
  local function new(o)
    o.count, o.mac, o.dhcp, o.subnet = o.count or 1, "02:0a:00:00:01:00", true, "10.10.0.0/24"
    return hosts.new(o)
  end
  -- a refused table is not made: it would keep one of the run's 64 slots (and show at the prompt)
  local made = ffi.C.surge_hosts_count()
  errors(at("surge.hosts.new: hostname: '" .. ("x"):rep(64) .. "' is 64 bytes: a pattern holds 1..63, no NUL", 1),
    function() new{ hostname = ("x"):rep(64) } end)
  errors(at("surge_hosts_dhcp4: hostname (option 12): 'a%s' is no pattern ('%d' the host's number, '%%' a %, "
    .. "at most 63 bytes)", 1), function() new{ hostname = "a%s" } end)
  errors(at("surge_hosts_dhcp4: hostname (option 12): '" .. ("%d"):rep(31) .. "' makes 310 bytes for host number "
    .. "4294967295: an option holds 255", 1), function() new{ hostname = ("%d"):rep(31), number = 4294967295 } end)
  errors(at("surge_hosts_dhcp4: circuit_id and remote_id make 256 bytes of option 82 for host number 4294960999: it "
    .. "holds 255", 2), function()
    new{ count = 1000, number = 4294960000, circuit_id = ("%d"):rep(12) .. ("c"):rep(6),
      remote_id = ("%d"):rep(12) .. ("r"):rep(6) } end)
  errors(at("surge_hosts_dhcp4: the options make 325 bytes for host number 0 (with the client's own 33): a message's "
    .. "576-byte datagram holds 308", 2), function()
    new{ hostname = ("h"):rep(60), options = { { 224, ("x"):rep(200) } }, remote_id = ("r"):rep(24) } end)
  errors(at("surge.hosts.new: vendor_class, client_id, params and options make 243 bytes: at most 240", 1), function()
    new{ vendor_class = ("v"):rep(200), options = { { 224, ("x"):rep(39) } } } end)
  errors(at("surge.hosts.new: options[1]: 256 bytes: an option holds 255", 1), function()
    new{ options = { { 224, ("x"):rep(256) } } } end)
  errors(at("surge_hosts_dhcp4: options: option 53 is the client's own (12 and 82 are patterns: hostname, "
    .. "circuit_id, remote_id)", 1), function() new{ options = { { 53, "\1" } } } end)
  errors(at("surge.hosts.new: params[2]: expected an integer in 1..254, got 255", 1), function()
    new{ params = { 1, 255 } } end)
  errors(at("surge.hosts.new: options[1][1] (the option's code): expected an integer in 1..254, got 0", 1), function()
    new{ options = { { 0, "x" } } } end)
  errors(at("surge.hosts.new: decline_wait (seconds after a DECLINE, RFC 2131: 10): expected a number in 0.01..3600, "
    .. "got 0", 1), function() new{ arp_check = true, decline_wait = 0 } end)
  errors(at("surge.hosts.new: hostname, circuit_id, remote_id, vendor_class, client_id, params, options, number, "
    .. "arp_check, decline_wait, leave_after, relay: for DHCPv4 hosts (dhcp = true)", 2), function()
    hosts.new{ count = 1, mac = "02:0a:00:00:01:00", ip = "10.10.0.1", hostname = "x" } end)
  assert(ffi.C.surge_hosts_count() == made, ("%d tables made by refusals"):format(ffi.C.surge_hosts_count() - made))
end

-- DHCPv4 relay mode (docs/hosts.md "DHCP relay"): the hosts' messages
-- leave as a relay agent's, byte for byte (the relay's MACs and addresses,
-- UDP 67 to 67, hops 1, giaddr, option 82 last before the end, the IPv4
-- checksum and lengths); relayed replies bind the hosts, an option 82 not
-- echoed is counted; the relay answers ARP for its address and learns the
-- server's MAC by ARP; the refusals at the caller's line.
local RELAY = string.char(10, 2, 0, 2)          -- 10.2.0.2
local SERVER = string.char(10, 1, 0, 1)         -- 10.1.0.1
local GW = string.char(2, 0x99, 0, 0, 0, 1)

local function be16(s, i) return s:byte(i) * 256 + s:byte(i + 1) end

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
-- with respond(f, msg) (nil: none); returns the relayed requests seen
local function drive(t, cond, respond)
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
        if respond then respond(f, f:byte(285)) end
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
