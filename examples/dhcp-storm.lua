-- dhcp-storm.lua - up to --clients DHCPv4 clients behind one port
-- (surge.hosts, docs/hosts.md): client i has MAC --mac + i; DISCOVERs are
-- paced at --rate per second with at most --outstanding transactions open,
-- each message retransmitted with back-off (--rto doubled) --retries
-- times. Stops when every client is bound or gave up (or after
-- --seconds), prints the counts by state, the bindings per second and the
-- DHCP counters; with --list each bound client's MAC and address; with
-- --release the bound clients then release their leases.
--
--   surge run --vdev net_af_packet0,iface=IF examples/dhcp-storm.lua --clients 1000 --rate 500
local surge = require "surge"
local hosts = require "surge.hosts"

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
end

function master(args)
  local port = surge.port(tonumber(args.dev) or args.dev, { rxq = 1, txq = 1 })
  local r = surge.wait(surge.launch("storm", port:rxq(0), port:txq(0), args))
  if r == nil then return 1 end
  for _, l in ipairs(r.list) do print(l) end
  print("clients: " .. r.states)
  print(("bindings: %d in %.3f s, %.0f per second"):format(r.bound, r.seconds, r.bound / r.seconds))
  print(r.counters)
  return 0
end

function storm(rxq, txq, args)
  local t = hosts.new{ count = args.clients, mac = args.mac, dhcp = true, subnet = args.subnet,
    vlan = args.vlan > 0 and args.vlan or nil, rate = args.rate, outstanding = args.outstanding,
    retries = args.retries, rto = args.rto }
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
  if args.release then
    t:release()
    st = t:run{ rxq = rxq, txq = txq, pool = pool, until_settled = true, seconds = 5 }
  end
  -- the rate over the time to the last binding (the wait for the clients
  -- that give up is the retries', not the server's)
  local busy = last > 0 and last / 1e3 or seconds
  return { states = hosts.format_states(st), counters = hosts.format_counters(st), list = list, bound = bound,
           seconds = busy }
end
