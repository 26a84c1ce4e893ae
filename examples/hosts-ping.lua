-- hosts-ping.lua - N emulated hosts ping one target (surge.hosts, t:ping,
-- docs/hosts.md "Ping"): host i has MAC --mac + i and address --ip + i;
-- once bound, hosts --first.. each send --pings echo requests to --target
-- (IPv4 or, with --ip6, IPv6), --interval apart, paced by --rate hosts a
-- second; prints the ping's counters (sent, replies, timeouts, round
-- trips). The next hop: --to-mac, else ARP / ND for --via or the target;
-- with --dhcp SUBNET the hosts are DHCPv4 clients, bound before they
-- ping, and a target off the subnet their ACK gave goes through the
-- router it named (option 3) unless --via says otherwise.
-- On a ring port (its own loopback) with --target the address of host 0
-- and --first 1, the table answers its own pings: surge's speed alone.
--
--   surge run --vdev net_af_packet0,iface=IF examples/hosts-ping.lua --count 1000 --ip 10.36.1.1 --target 10.36.0.1
local surge = require("surge")
local hosts = require("surge.hosts")

-- hosts.new's options from the command line's
local function table_options(args)
  local dhcp = args.dhcp ~= ""
  return { count = args.count, ip = not dhcp and args.ip or nil, mac = args.mac, rate = args.rate,
    dhcp = dhcp or nil, subnet = dhcp and args.dhcp or nil,
    ip6 = args.ip6 ~= "" and args.ip6 or nil, dad6 = args.ip6 ~= "" and 0 or nil, rs = args.ip6 ~= "" and 0 or nil,
    vlan = args.vlan > 0 and args.vlan or nil, outer_vlan = args.outer_vlan > 0 and args.outer_vlan or nil }
end

function configure(p)
  p:description("Emulated hosts ping a target: ICMP or ICMPv6 echo, every request a reply or a timeout.")
  p:option("--dev", "DPDK port number or device name", "0")
  p:option("--count", "hosts", 1000, "integer 1..16777216")
  p:option("--ip", "host 0's address (host i's is it plus i)", "10.36.1.1")
  p:option("--dhcp", "the hosts are DHCPv4 clients of a server on this subnet A.B.C.D/LEN (not --ip)", "")
  p:option("--ip6", "host 0's static IPv6 address (host i's is it plus i), to ping an IPv6 target", "")
  p:option("--mac", "host 0's MAC (host i's is it plus i)", "02:36:00:00:00:01")
  p:option("--vlan", "802.1Q VLAN id (0: untagged)", 0, "integer 0..4094")
  p:option("--outer-vlan", "QinQ: the outer 802.1ad tag's VLAN id (0: none)", 0, "integer 0..4094")
  p:option("--rate", "hosts started, and requests of a round sent, per second (0: at once)", 0, "number 0..1e8")
  p:option("--target", "the address pinged", "10.36.0.1")
  p:option("--via", "the gateway (the next hop when the target is off-link)", "")
  p:option("--to-mac", "the next hop's MAC (no ARP / ND)", "")
  p:option("--first", "the first host that pings", 0, "integer >=0")
  p:option("--pings", "requests a host", 3, "integer 1..65535")
  p:option("--interval", "seconds between a host's requests", 1, "number 0.001..3600")
  p:option("--timeout", "seconds a request waits for its reply", 2, "number 0.001..60")
  p:option("--size", "echo data bytes", 56, "integer 8..1472")
  hosts.check_options(p, table_options, "--count, --ip, --dhcp, --ip6, --mac, --vlan, --outer-vlan, --rate")   -- the table's refusals, before EAL
end

function master(args)
  local port = surge.port(tonumber(args.dev) or args.dev, { rxq = 1, txq = 1 })
  local r = surge.wait(surge.launch("pinger", port:rxq(0), port:txq(0), args))
  if r == nil then return 1 end
  print(r)
  return 0
end

function pinger(rxq, txq, args)
  local t = hosts.new(table_options(args))
  -- shared: a ring port's receiver frees what it sent (the loopback measure)
  local pool = surge.pool{ template = surge.proto.udp{}, size = 16383, data_room = 2048, shared = true }
  local rx, tx = pool:burst(64), pool:burst(64)
  local function settle()
    repeat
      if t:poll(rxq, txq, rx, tx) > 0 then rx:free() end
    until t:settled() or not surge.running()
  end
  settle()
  local hz = tonumber(surge.tsc_hz())
  local t0 = tonumber(surge.tsc())
  t:ping{ target = args.target, via = args.via ~= "" and args.via or nil, mac = args.to_mac ~= "" and args.to_mac or nil,
    first = args.first, hosts = args.count - args.first, count = args.pings, interval = args.interval,
    timeout = args.timeout, size = args.size }
  settle()
  rx:free()
  local s = (tonumber(surge.tsc()) - t0) / hz
  local st = t:stats()
  return ("ping: %d sent, %d replies, %d timeouts, %d not sent, %d stray in %.2f s; rtt min/avg/max %d/%d/%d us\n%s")
    :format(st.ping_tx, st.ping_reply, st.ping_timeout, st.ping_skipped, st.ping_stray, s, st.ping_rtt_min_us,
      st.ping_rtt_sum_us / math.max(st.ping_reply, 1), st.ping_rtt_max_us, hosts.format_counters(st))
end
