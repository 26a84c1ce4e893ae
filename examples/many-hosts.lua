-- many-hosts.lua - N emulated hosts behind one port (surge.hosts,
-- docs/hosts.md): host i has MAC --mac + i and address --ip + i, answers
-- ARP and ICMP echo once bound; with --dad it first probes for its address
-- (RFC 5227) and a host whose address another station holds is counted in
-- conflict. Runs --seconds (0: until --duration or a signal), then prints
-- the hosts' counts by state and the protocol counters. With --serve PORT
-- the bound hosts are also an HTTP server's addresses: a surge.conn server
-- listening on each answers every request with a 200 of
-- --body bytes, from the address it was sent to; the table answers the
-- ARP for them (docs/hosts.md, "Hosts as endpoints").
--
--   surge run --vdev net_af_packet0,iface=IF examples/many-hosts.lua --count 1000 --ip 10.34.1.1
--   surge run --vdev net_af_packet0,iface=IF examples/many-hosts.lua --count 50 --serve 80 --seconds 30
local surge = require("surge")
local hosts = require("surge.hosts")

-- hosts.new's options from the command line's
local function table_options(args)
  return { count = args.count, ip = args.ip, mac = args.mac, vlan = args.vlan > 0 and args.vlan or nil,
    outer_vlan = args.outer_vlan > 0 and args.outer_vlan or nil,
    outer_tpid = args.outer_vlan > 0 and tonumber(args.outer_tpid) or nil,
    dad = args.dad, probe = args.probe, announce = args.announce }
end

function configure(p)
  p:description("Many emulated hosts behind one port: ARP, RFC 5227 DAD, ICMP echo.")
  p:option("--dev", "DPDK port number or device name", "0")
  p:option("--count", "hosts", 1000, "integer 1..16777216")
  p:option("--ip", "host 0's address (host i's is it plus i)", "10.34.1.1")
  p:option("--mac", "host 0's MAC (host i's is it plus i)", "02:34:00:00:00:01")
  p:option("--vlan", "802.1Q VLAN id (0: untagged)", 0, "integer 0..4094")
  p:option("--outer-vlan", "QinQ: the outer tag's VLAN id (0: none), before --vlan's", 0, "integer 0..4094")
  p:option("--outer-tpid", "QinQ: the outer tag's TPID, 0x88a8 (802.1ad) or 0x8100", "0x88a8")
  p:flag("--dad", "probe for each address before using it (RFC 5227)")
  p:option("--probe", "RFC 5227 PROBE_MIN in seconds (probes 1..2x apart)", 1, "number 0.001..60")
  p:option("--announce", "gratuitous ARP announcements once bound", 0, "integer 0..255")
  p:option("--seconds", "run this long (0: until --duration or a signal)", 0, "number >=0")
  p:option("--serve", "TCP port of an HTTP server on the bound hosts' addresses (0: none)", 0, "integer 0..65535")
  p:option("--body", "--serve's response: bytes of its body", 64, "integer 0..1000000")
  hosts.check_options(p, table_options, "--count, --ip, --mac, --vlan, --outer-vlan, --outer-tpid")   -- the table's refusals, before EAL
end

function master(args)
  local port = surge.port(tonumber(args.dev) or args.dev, { rxq = 1, txq = 1 })
  local r = surge.wait(surge.launch("run_hosts", port:rxq(0), port:txq(0), args))
  if r == nil then return 1 end
  print("hosts: " .. r.states)
  print(r.counters)
  if r.served then print(require("surge.conn").format(r.served)) end
  return 0
end

-- --serve: once the hosts are settled, a server engine on the bound
-- addresses (one MAC for all, host 0's: the engine's) until --seconds or
-- a signal; the table takes what the engine's poll leaves in rx (the
-- peer's ARP for the hosts, its pings)
local function serve(t, rxq, txq, args)
  local conn = require("surge.conn")
  local t0 = surge.tsc()
  local stop = args.seconds > 0 and t0 + args.seconds * surge.tsc_hz() or nil
  t:run{ rxq = rxq, txq = txq, until_settled = true, seconds = args.seconds > 0 and args.seconds or nil }
  local a = t:bound_addresses(conn.ADDR_MAX)
  if #a.ip == 0 then return nil end
  local e = conn.server{ addr = a.ip, port = args.serve, mac = a.mac[1], capacity = 4096,
    response = conn.http_response{ body = args.body } }
  local pool = surge.pool{ template = e:template(), data_room = e:data_room(), size = 4095 }
  local rx, tx = pool:burst(32), pool:burst(32)
  while surge.running() and (not stop or surge.tsc() < stop) do
    e:poll(rxq, txq, rx, tx)
    if t:take(txq, rx, tx) > 0 then rx:free() end
  end
  e:abort(txq, tx)
  return e:summary(tonumber(surge.tsc() - t0) / tonumber(surge.tsc_hz()))
end

function run_hosts(rxq, txq, args)
  local t = hosts.new(table_options(args))
  local served = args.serve > 0 and serve(t, rxq, txq, args) or nil
  local st = served and t:stats() or t:run{ rxq = rxq, txq = txq, seconds = args.seconds > 0 and args.seconds or nil }
  return { states = hosts.format_states(st), counters = hosts.format_counters(st), served = served }
end
