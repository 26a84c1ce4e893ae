-- dhcp-storm.lua - up to --clients DHCPv4 clients behind one port
-- (surge.hosts, docs/hosts.md): client i has MAC --mac + i; DISCOVERs are
-- paced at --rate per second with at most --outstanding transactions open,
-- each message retransmitted with back-off (--rto doubled) --retries
-- times. Stops when every client is bound or gave up (or after
-- --seconds), prints the counts by state, the bindings per second and the
-- DHCP counters; with --list each bound client's MAC and address; with
-- --release the bound clients then release their leases. With --send N
-- --to ADDR --to-mac MAC, every bound client then sends N UDP datagrams
-- (port 9) to ADDR: a surge.flow whose source MAC and address cycle over
-- the bound clients (hosts:source_fields(), docs/hosts.md), the clients
-- still answering ARP and ping meanwhile.
--
--   surge run --vdev net_af_packet0,iface=IF examples/dhcp-storm.lua --clients 1000 --rate 500
local surge = require("surge")
local hosts = require("surge.hosts")

-- hosts.new's options from the command line's
local function table_options(args)
  return { count = args.clients, mac = args.mac, dhcp = true, subnet = args.subnet,
    vlan = args.vlan > 0 and args.vlan or nil, rate = args.rate, outstanding = args.outstanding,
    retries = args.retries, rto = args.rto }
end

function configure(p)
  p:description("A storm of DHCPv4 clients: DORA for --clients hosts at --rate DISCOVERs per second.")
  p:option("--dev", "DPDK port number or device name", "0")
  p:option("--clients", "DHCP clients", 100, "integer 1..16777216")
  p:option("--rate", "DISCOVERs per second (0: unpaced)", 1000, "number >=0")
  p:option("--outstanding", "most transactions open at once (0: no cap)", 1024, "integer 0..16777216")
  p:option("--retries", "transmissions of a message before a client gives up", 4, "integer 1..16")
  p:option("--rto", "first retransmission timeout in seconds (doubled each time, RFC 2131: 4)", 1,
    "number 0.01..64")
  p:option("--subnet", "the server's subnet A.B.C.D/LEN: bound clients answer ARP and ping there", "10.1.0.0/24")
  p:option("--mac", "client 0's MAC (client i's is it plus i)", "02:77:00:00:00:01")
  p:option("--vlan", "802.1Q VLAN id (0: untagged)", 0, "integer 0..4094")
  p:option("--seconds", "give up waiting after this long (0: until --duration or a signal)", 0, "number >=0")
  p:flag("--list", "print each bound client: MAC and address")
  p:flag("--release", "release every lease at the end (DHCPRELEASE)")
  p:option("--send", "UDP datagrams each bound client sends to --to once bound (0: none)", 0, "integer 0..1000000")
  p:option("--to", "--send's destination address", "10.1.0.1")
  p:option("--to-mac", "--send's destination MAC (the peer's, or its gateway's)", "ff:ff:ff:ff:ff:ff")
  p:option("--http", "then one HTTP GET from each bound client to --to:PORT (0: none): surge.conn with the "
    .. "clients' addresses as its sources", 0, "integer 0..65535")
  hosts.check_options(p, table_options, "--clients, --mac, --subnet, --vlan")   -- the table's refusals, before EAL
end

function master(args)
  local port = surge.port(tonumber(args.dev) or args.dev, { rxq = 1, txq = 1 })
  local r = surge.wait(surge.launch("storm", port:rxq(0), port:txq(0), args))
  if r == nil then return 1 end
  for _, l in ipairs(r.list) do print(l) end
  print("clients: " .. r.states)
  print(("bindings: %d in %.3f s, %.0f per second"):format(r.bound, r.seconds, r.bound / r.seconds))
  if args.send > 0 then print(("sent: %d datagrams from %d bound clients"):format(r.sent, r.bound)) end
  if r.http then print(require("surge.conn").format(r.http)) end
  print(r.counters)
  return 0
end

-- args.send datagrams from each of the `bound` clients, their sources in
-- turn; the table polled between bursts (ARP and echo answered)
local function send(t, rxq, txq, pool, args, bound)
  local tpl = surge.proto.udp{ dst = args.to, dst_mac = args.to_mac, dport = 9, size = 64 }
  local f = surge.flow{ template = tpl, fields = t:source_fields(), combine = "zip" }
  local b = surge.pool{ template = tpl, size = 1023 }:burst(32)
  local rx, tx = pool:burst(32), pool:burst(32)
  local left, sent = args.send * bound, 0
  while surge.running() and left > 0 do
    local n = b:alloc(left < 32 and left or 32)
    f:apply(b)
    local k = txq:send(b)
    sent, left = sent + k, left - n
    if t:poll(rxq, txq, rx, tx) > 0 then rx:free() end
  end
  return sent
end

-- one GET from each bound client: a surge.conn client whose sources are
-- the clients' addresses (capacity = their count: connection i from
-- address i); the kernel's ARP for them is answered by the table, which
-- takes what the engine leaves in rx
local function http(t, rxq, txq, args)
  local conn = require("surge.conn")
  local a = t:bound_addresses(conn.ADDR_MAX)
  local e = conn.client{ src = a.ip, server = args.to, port = args.http, mac = a.mac[1], peer_mac = args.to_mac,
    connections = #a.ip, capacity = #a.ip, concurrency = math.min(64, #a.ip), request = conn.http_get{ host = args.to },
    expect = { http = 200 } }
  local pool = surge.pool{ template = e:template(), data_room = conn.data_room(), size = 4095 }
  local rx, tx = pool:burst(32), pool:burst(32)
  local t0 = surge.tsc()
  local deadline = t0 + 20 * surge.tsc_hz()
  while surge.running() and not e:done() and surge.tsc() < deadline do
    e:poll(rxq, txq, rx, tx)
    if t:take(txq, rx, tx) > 0 then rx:free() end
  end
  if not e:done() then e:abort(txq, tx) end
  return e:summary(tonumber(surge.tsc() - t0) / tonumber(surge.tsc_hz()))
end

function storm(rxq, txq, args)
  local t = hosts.new(table_options(args))
  local pool = t:pool()
  local t0 = surge.tsc()
  local last = 0   -- ms of the last binding
  local st = t:run{ rxq = rxq, txq = txq, pool = pool, until_settled = true,
    seconds = args.seconds > 0 and args.seconds or nil,
    on_event = function(ev) if ev.kind == "bound" then last = ev.ms end end }
  local seconds = tonumber(surge.tsc() - t0) / surge.tsc_hz()
  local bound = st.state.bound
  local list = {}
  if args.list then
    for i = 0, args.clients - 1 do
      local h = t:host(i)
      if h.state == "bound" then list[#list + 1] = ("bound %s %s"):format(h.mac, h.ip) end
    end
  end
  local sent, got = 0, nil
  if args.send > 0 and bound > 0 then sent = send(t, rxq, txq, pool, args, bound) end
  if args.http > 0 and bound > 0 then got = http(t, rxq, txq, args) end
  if args.release then
    t:release()
    st = t:run{ rxq = rxq, txq = txq, pool = pool, until_settled = true, seconds = 5 }
  end
  -- the rate over the time to the last binding (the wait for the clients
  -- that give up is the retries', not the server's)
  local busy = last > 0 and last / 1e3 or seconds
  return { states = hosts.format_states(st), counters = hosts.format_counters(st), list = list, bound = bound,
           seconds = busy, sent = sent, http = got }
end
