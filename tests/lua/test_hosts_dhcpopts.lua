-- The DHCPv4 clients' options chosen by the script (issue 33, docs/hosts.md
-- "DHCP options") on `surge test`'s ring port: the DISCOVER's options
-- byte for byte (host names and relay agent information from patterns,
-- vendor class, client identifier and parameter list replacing the
-- client's own, a raw option; the message longer than 300 bytes with
-- its IPv4 and UDP lengths and checksum right); the options an ACK gives
-- kept per host, read from sname and file too (option overload); the
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
end

return T
