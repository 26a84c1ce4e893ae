-- hosts6.lua - N emulated IPv6 hosts behind one port (surge.hosts,
-- docs/hosts.md "IPv6"): host i has MAC --mac + i, the link-local address
-- fe80::EUI-64(MAC), with --ip6 the static address --ip6 + i, and the
-- SLAAC address a router's prefix gives; each goes through duplicate
-- address detection (--dad6 probes, --probe apart), then NSs and echo
-- requests for it are answered; hosts solicit a router (--rs). With
-- --dhcp6 (an address, IA_NA) and --pd (a delegated prefix, IA_PD) each
-- host is a DHCPv6 client (--rapid: rapid commit; --release: release the
-- bindings at the end). Runs --seconds (with --settle: until every host
-- settled), then prints the hosts' addresses (--list) and the counters.
--
--   surge run --vdev net_af_packet0,iface=IF examples/hosts6.lua --count 100 --seconds 5 --list
--   surge run --vdev net_af_packet0,iface=IF examples/hosts6.lua --count 8 --dhcp6 --pd --settle --list
local surge = require("surge")
local hosts = require("surge.hosts")

function configure(p)
  p:description("Many emulated IPv6 hosts behind one port: ND, DAD, RS, SLAAC, ICMPv6 echo.")
  p:option("--dev", "DPDK port number or device name", "0")
  p:option("--count", "hosts", 100, "integer 1..16777216")
  p:option("--mac", "host 0's MAC (host i's is it plus i)", "02:36:00:00:00:01")
  p:option("--ip6", "host 0's static IPv6 address (host i's is it plus i); none: link-local and SLAAC only", "")
  p:option("--dad6", "DAD probes per address (0: none)", 1, "integer 0..16")
  p:option("--rs", "router solicitations until an RA comes", 3, "integer 0..16")
  p:option("--probe", "DAD's RetransTimer in seconds", 1, "number 0.001..60")
  p:option("--seconds", "run this long", 5, "number >0")
  p:flag("--list", "print each host: its index, MAC and addresses assigned")
  p:flag("--dhcp6", "each host asks a DHCPv6 server for an address (IA_NA)")
  p:flag("--pd", "each host asks a DHCPv6 server for a prefix (IA_PD)")
  p:flag("--rapid", "DHCPv6 rapid commit")
  p:option("--retries", "DHCPv6 transmissions of a message", 4, "integer 1..16")
  p:option("--rto", "the first DHCPv6 retransmission, seconds (doubled each time)", 1, "number 0.01..64")
  p:option("--outstanding", "DHCPv6: most hosts soliciting or requesting at once (0: all)", 0, "integer 0..16777216")
  p:flag("--release", "DHCPv6: release every binding before the end")
  p:flag("--settle", "stop once every host settled (DAD done, DHCPv6 bound or given up)")
end

function master(args)
  local port = surge.port(tonumber(args.dev) or args.dev, { rxq = 1, txq = 1 })
  local r = surge.wait(surge.launch("run_hosts6", port:rxq(0), port:txq(0), args))
  if r == nil then return 1 end
  io.write(r.list)
  print(r.counters)
  return 0
end

function run_hosts6(rxq, txq, args)
  local t = hosts.new{ count = args.count, mac = args.mac, ip6 = args.ip6 ~= "" and args.ip6 or true,
    dad6 = args.dad6, rs = args.rs, probe = args.probe, dhcp6 = args.dhcp6 or nil, pd = args.pd or nil,
    rapid_commit = args.rapid or nil, retries = args.retries, rto = args.rto, outstanding = args.outstanding }
  local st = t:run{ rxq = rxq, txq = txq, seconds = args.seconds, until_settled = args.settle }
  if args.release then
    t:release()
    st = t:run{ rxq = rxq, txq = txq, seconds = args.seconds, until_settled = true }
  end
  local lines = {}
  if args.list then
    for i = 0, t.count - 1 do
      local h, mac = t:host6(i), t:host(i).mac
      for _, kind in ipairs(h.assigned) do lines[#lines + 1] = ("%s %d %s %s\n"):format(kind, i, mac, h[kind]) end
      for _, kind in ipairs(h.tentative) do lines[#lines + 1] = ("tentative %d %s %s\n"):format(i, mac, h[kind]) end
      local d = h.dhcp6
      if d then
        lines[#lines + 1] = ("dhcp6 %d %s %s %s %d\n"):format(i, mac, d.state, d.addr or "-", d.iaid)
        if d.prefix then lines[#lines + 1] = ("pd %d %s %s %d\n"):format(i, mac, d.prefix, d.iaid) end
      end
    end
  end
  return { list = table.concat(lines), counters = hosts.format_counters(st) }
end
