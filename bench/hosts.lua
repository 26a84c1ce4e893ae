-- bench/hosts.lua - one side of scripts/bench's hosts rows (docs/hosts.md,
-- docs/performance.md "Emulated hosts"): surge's DHCPv4 clients against
-- surge's DHCP server, and a table of static hosts answering ARP, each
-- role on one lcore of its own process over a net_memif pair; --role
-- both runs client and server in one task on one port (a loopback ring:
-- tests/e2e/test_hosts_bench.sh checks the driver so).
--
--   surge run --vdev net_memif0,role=server,... bench/hosts.lua --role dhcp-server --count N
--   surge run --vdev net_memif0,role=client,... bench/hosts.lua --role dhcp-client --count N
--   surge run --vdev net_memif0,role=server,... bench/hosts.lua --role arp-hosts --count N
--   surge run --vdev net_memif0,role=client,... bench/hosts.lua --role arp-asker --count N --seconds S
--
-- The last line of each side is its summary ("dhcp-client: bound N of M in
-- S s, R bindings/s, C cycles per binding, B bytes per host", ...), which
-- scripts/bench reads. Cycles per binding are the client lcore's cycles
-- from its first DISCOVER to its last ACK over the bindings: the lcore
-- busy-polls, so this bounds the work per binding from above.
local surge = require("surge")
local ffi = require("ffi")
local bit = require("bit")
local hosts = require("surge.hosts")

local SRV_MAC, CLI_MAC = "02:5b:00:00:00:01", "02:5c:00:00:00:01"

-- the hosts' frames are written whole; shared: a ring's receiver (this
-- lcore, or with --role both the same task) frees them
local function frames()
  return surge.pool{ template = surge.proto.udp{}, size = 16383, data_room = 2048, shared = true }
end

function configure(p)
  p:description("scripts/bench's hosts rows: DHCPv4 clients against surge's server, ARP answered by static hosts.")
  p:option("--role", "dhcp-server, dhcp-client, both, arp-hosts or arp-asker", "both")
  p:option("--count", "clients (the server's pool: the same), or static hosts", 1000, "integer 1..16777216")
  p:option("--outstanding", "dhcp-client: most transactions open at once (more than the port's ring holds: retransmissions)", 256, "integer 1..16777216")
  p:option("--seconds", "how long a side runs at most (the server, the hosts: until stopped)", 60, "number >0")
  p:option("--burst", "frames per poll", 64, "integer 1..256")
  p:flag("--options", "dhcp-client: each client sends a host name and relay agent information from patterns "
    .. "(docs/hosts.md \"DHCP options\")")
  p:option("--hold", "dhcp-client, both: seconds the bound clients keep answering after (a scrape's time)", 0,
    "number 0..600")
  p:check(function(o)
    local ok = { ["dhcp-server"] = 1, ["dhcp-client"] = 1, both = 1, ["arp-hosts"] = 1, ["arp-asker"] = 1 }
    if not ok[o.role] then return ("--role %s: dhcp-server, dhcp-client, both, arp-hosts or arp-asker"):format(o.role) end
    return nil
  end)
end

local function subnet(count)
  -- the smallest prefix holding the pool (at 10.0.0.0, from 10.0.0.10) and the server
  local len = 32
  while len > 12 and 2 ^ (32 - len) < count + 16 do len = len - 1 end
  return len
end

function master(args)
  local port = surge.port(0, { rxq = 1, txq = 1, link_timeout = 30 })
  local r = surge.wait(surge.launch("side", port:rxq(0), port:txq(0), args))
  if r == nil then return 1 end
  print(r)
  return 0
end

local function dhcp_server(args)
  return hosts.server{ count = args.count, pool = "10.0.0.10", server = "10.0.0.1", mac = SRV_MAC, lease = 86400,
    prefix_len = subnet(args.count), prefix = "dhcps" }
end

local function dhcp_client(args)
  return hosts.new{ count = args.count, mac = CLI_MAC, dhcp = true, subnet = ("10.0.0.0/%d"):format(subnet(args.count)),
    rate = 0, outstanding = args.outstanding, retries = 8, rto = 0.5, prefix = "hosts",
    hostname = args.options and "cpe-%d" or nil, circuit_id = args.options and "olt1/1/%d" or nil,
    remote_id = args.options and "subscriber-%d" or nil }
end

local function client_summary(t, t0, last_tsc)
  local st = t:stats()
  local hz = tonumber(surge.tsc_hz())
  local cyc = tonumber(last_tsc - t0)
  local s = cyc / hz
  return ("dhcp-client: bound %d of %d in %.3f s, %.0f bindings/s, %.0f cycles per binding, %d bytes per host, "
    .. "%d retransmits, binding time mean %.1f ms"):format(st.state.bound, t.count, s, st.state.bound / s,
    cyc / math.max(st.state.bound, 1), st.bytes_per_host, st.dhcp_retransmits, st.bind_ms_sum / math.max(st.bind_count, 1))
end

-- the clients (and, with server, the server on the same port) until all
-- are bound or gave up; last_tsc: the tsc of the last binding seen
local function clients(rxq, txq, args, server)
  local t = dhcp_client(args)
  local pool = frames()
  local rx, tx = pool:burst(args.burst), pool:burst(args.burst)
  local hz = tonumber(surge.tsc_hz())
  local t0 = surge.tsc()
  local deadline = tonumber(t0) + args.seconds * hz
  local bound, last, n = 0, t0, 0
  t:publish()
  if server then server:publish() end
  while surge.running() do
    local k = t:poll(rxq, txq, rx, tx)
    if server then k = server:take(txq, rx, tx) end   -- every turn: its timers run there too
    if k > 0 then rx:free() end
    n = n + 1
    if n % 64 == 0 then
      local st = t:stats()
      if st.state.bound ~= bound then bound, last = st.state.bound, surge.tsc() end
      if t:settled() or tonumber(surge.tsc()) > deadline then break end
    end
  end
  t:sync()
  if server then server:sync() end
  local st = t:stats()
  if st.state.bound ~= bound then last = surge.tsc() end
  local hold = tonumber(surge.tsc()) + args.hold * hz
  while surge.running() and tonumber(surge.tsc()) < hold do
    local k = t:poll(rxq, txq, rx, tx)
    if server then k = server:take(txq, rx, tx) end
    if k > 0 then rx:free() end
    t:sync()
    if server then server:sync() end
  end
  local r = client_summary(t, t0, last)
  if server then
    local ss = server:stats()
    r = r .. ("\ndhcp-server: %d acks, %d leases, %d naks"):format(ss.dhcps_ack_tx, ss.state.bound, ss.dhcps_nak_tx)
  end
  return r
end

local function arp_hosts(rxq, txq, args)
  local t = hosts.new{ count = args.count, mac = SRV_MAC, ip = "10.0.0.10" }
  local st = t:run{ rxq = rxq, txq = txq, pool = frames(), seconds = args.seconds, burst = args.burst }
  return ("arp-hosts: %d requests in, %d replies out, %d other, %d tx_full, %d tx_nobufs"):format(st.arp_request_rx,
    st.arp_reply_tx, st.rx_other, st.tx_full, st.tx_nobufs)
end

-- the ARP frames in one receive
local function arp_back(rxq, rx)
  local m, n = rxq:recv(rx), 0
  for k = 0, m - 1 do
    local p = rx.data[k]
    if p[12] == 8 and p[13] == 6 then n = n + 1 end
  end
  rx:free()
  return n
end

-- ARP requests for the hosts' addresses in turn, as fast as the port
-- takes them, for --seconds; the ARP frames back counted (the hosts'
-- replies, or the reference's requests with their MACs swapped)
local function arp_asker(rxq, txq, args)
  local pool = frames()
  local b, rx = pool:burst(args.burst), pool:burst(args.burst)
  local req = ffi.new("uint8_t[60]")
  ffi.copy(req, "\255\255\255\255\255\255\2\92\0\0\0\1\8\6\0\1\8\0\6\4\0\1\2\92\0\0\0\1\10\0\0\2", 32)
  local hz = tonumber(surge.tsc_hz())
  -- the other side's hosts are made once the link is up: a moment to start them
  local t0 = tonumber(surge.tsc()) + hz / 2
  while tonumber(surge.tsc()) < t0 do end
  local deadline = t0 + args.seconds * hz
  local sent, replies, i = 0, 0, 0
  while surge.running() and tonumber(surge.tsc()) < deadline do
    local n = b:alloc(args.burst)
    for k = 0, n - 1 do
      local ip = 0x0a00000a + i
      req[38], req[39], req[40], req[41] = 10, bit.band(bit.rshift(ip, 16), 255), bit.band(bit.rshift(ip, 8), 255),
        bit.band(ip, 255)
      ffi.copy(b.data[k], req, 60)
      b.len[k] = 60
      i = i + 1
      if i == args.count then i = 0 end
    end
    sent = sent + txq:send(b)
    replies = replies + arp_back(rxq, rx)
  end
  -- the replies still on their way
  local tail = tonumber(surge.tsc()) + hz / 2
  while tonumber(surge.tsc()) < tail do replies = replies + arp_back(rxq, rx) end
  local s = (tonumber(surge.tsc()) - t0) / hz - 0.5
  return ("arp-asker: %d requests sent, %d replies in %.3f s, %.0f replies/s"):format(sent, replies, s, replies / s)
end

function side(rxq, txq, args)
  if args.role == "dhcp-server" then
    -- until every client has its ACK (or --seconds), then 2 s more for the
    -- last ones in flight: it ends on its own, not by a signal as the
    -- pair's link goes down
    local t = dhcp_server(args)
    local pool = frames()
    local t_end = tonumber(surge.tsc()) + args.seconds * tonumber(surge.tsc_hz())
    local st
    repeat
      st = t:run{ rxq = rxq, txq = txq, pool = pool, seconds = 0.2, burst = args.burst }
    until not surge.running() or st.dhcps_ack_tx >= args.count or tonumber(surge.tsc()) > t_end
    st = t:run{ rxq = rxq, txq = txq, pool = pool, seconds = 2, burst = args.burst }
    return ("dhcp-server: %d discovers, %d offers, %d requests, %d acks, %d naks, %d no address, %d bytes per lease")
      :format(st.dhcps_discover_rx, st.dhcps_offer_tx, st.dhcps_request_rx, st.dhcps_ack_tx, st.dhcps_nak_tx,
        st.dhcps_no_address, st.bytes_per_host)
  elseif args.role == "dhcp-client" then
    return clients(rxq, txq, args, nil)
  elseif args.role == "both" then
    return clients(rxq, txq, args, dhcp_server(args))
  elseif args.role == "arp-hosts" then
    return arp_hosts(rxq, txq, args)
  elseif args.role == "arp-asker" then
    return arp_asker(rxq, txq, args)
  end
end
