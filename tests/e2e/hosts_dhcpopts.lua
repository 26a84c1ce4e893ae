-- hosts_dhcpopts.lua - test_hosts_dhcpopts_dnsmasq.sh's DHCPv4 clients with
-- the script's options out (docs/hosts.md "DHCP options"): host name,
-- vendor class, relay agent information from patterns; the ARP check and
-- its DECLINE; renewals or leave_after then RELEASE; with --relay, the
-- hosts behind the generator as their relay agent ("DHCP relay"), --hold
-- seconds more once settled (answering ARP and echo). Prints each host
-- ("host I MAC STATE IP MASK ROUTER DNS"), the states and the counters.
local surge = require("surge")
local hosts = require("surge.hosts")

function configure(p)
  p:option("--clients", "DHCP clients", 4, "integer 1..1000")
  p:option("--mac", "client 0's MAC", "02:78:00:00:00:01")
  p:option("--hostname", "option 12's pattern", "")
  p:option("--circuit", "option 82.1's pattern", "")
  p:option("--remote", "option 82.2's pattern", "")
  p:option("--vendor", "option 60", "")
  p:option("--renewals", "renewals, then RELEASE (0: keep)", 0, "integer 0..255")
  p:option("--leave-after", "seconds bound, then RELEASE (0: keep)", 0, "number >=0")
  p:option("--decline-wait", "seconds after a DECLINE", 10, "number >0")
  p:option("--seconds", "give up waiting after this long", 20, "number >0")
  p:flag("--arp-check", "probe the ACKed address, DECLINE it when answered")
  p:flag("--wait-released", "run until every host released its lease")
  p:option("--subnet", "the hosts' pool (with --relay: the giaddr's subnet)", "10.1.0.0/24")
  p:option("--relay", "the relay agent's address (giaddr), '' no relay", "")
  p:option("--server", "the DHCP server's address (with --relay)", "10.1.0.1")
  p:option("--gateway-mac", "the relay's next hop's MAC towards the server ('' ARP)", "")
  p:option("--retries", "DHCP transmissions before a host gives up", 4, "integer 1..16")
  p:option("--hold", "seconds to keep answering once settled", 0, "number >=0")
end

local function nz(s) return s ~= "" and s or nil end

function master(args)
  local port = surge.port(0, { rxq = 1, txq = 1 })
  local r = surge.wait(surge.launch("clients", port:rxq(0), port:txq(0), args))
  if r == nil then return 1 end
  for _, l in ipairs(r.lines) do print(l) end
  return 0
end

function clients(rxq, txq, args)
  local relay = nz(args.relay) and { address = args.relay, server = args.server, gateway_mac = nz(args.gateway_mac) }
  local t = hosts.new{ count = args.clients, mac = args.mac, dhcp = true, subnet = args.subnet, rto = 0.5,
    retries = args.retries, relay = relay,
    rate = 0, hostname = nz(args.hostname), circuit_id = nz(args.circuit), remote_id = nz(args.remote),
    vendor_class = nz(args.vendor), renewals = args.renewals, leave_after = args.leave_after > 0 and args.leave_after or nil,
    arp_check = args.arp_check or nil, decline_wait = args.decline_wait, probe = 0.2 }
  local st
  if args.wait_released then
    local pool = t:pool()
    local deadline = surge.tsc() + args.seconds * surge.tsc_hz()
    repeat
      st = t:run{ rxq = rxq, txq = txq, pool = pool, seconds = 0.1 }
    until st.state.released == args.clients or surge.tsc() > deadline or not surge.running()
    st = t:run{ rxq = rxq, txq = txq, pool = pool, until_settled = true, seconds = 2 }
  else
    local pool = t:pool()
    st = t:run{ rxq = rxq, txq = txq, pool = pool, until_settled = true, seconds = args.seconds }
    if args.hold > 0 then st = t:run{ rxq = rxq, txq = txq, pool = pool, seconds = args.hold } end
  end
  local lines = {}
  for i = 0, args.clients - 1 do
    local h = t:host(i)
    lines[#lines + 1] = ("host %d %s %s %s %s %s %s"):format(i, h.mac, h.state, h.ip, h.mask or "-", h.router or "-",
      h.dns and table.concat(h.dns, ",") or "-")
  end
  lines[#lines + 1] = "states: " .. hosts.format_states(st)
  for _, k in ipairs(hosts.FIELDS) do lines[#lines + 1] = ("  %s %d"):format(k, st[k]) end   -- all, published or not
  return { lines = lines }
end
