-- hosts_relay.lua - test_hosts_relay_dnsmasq.sh's DHCPv4 clients behind the
-- generator acting as their relay agent (docs/hosts.md "DHCP relay"):
-- their messages leave as the relay's (giaddr, hops 1, option 82 from
-- the patterns), the server answers the relay's address. Runs until the
-- hosts settle, then --hold seconds more (the hosts answer ARP and echo
-- for their addresses); prints each host ("host I MAC STATE IP"), the
-- states and the counters.
local surge = require "surge"
local hosts = require "surge.hosts"

function configure(p)
  p:option("--clients", "DHCP clients", 8, "integer 1..1000")
  p:option("--mac", "client 0's MAC", "02:79:00:00:00:01")
  p:option("--subnet", "the relay's pool (the giaddr's subnet)", "10.20.0.0/24")
  p:option("--relay", "the relay agent's address (giaddr)", "10.20.0.1")
  p:option("--server", "the DHCP server's address", "10.1.0.1")
  p:option("--gateway-mac", "the next hop's MAC towards the server ('' ARP)", "")
  p:option("--circuit", "option 82.1's pattern", "")
  p:option("--remote", "option 82.2's pattern", "")
  p:option("--retries", "DHCP transmissions before a host gives up", 4, "integer 1..16")
  p:option("--seconds", "give up waiting after this long", 20, "number >0")
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
  local t = hosts.new{ count = args.clients, mac = args.mac, dhcp = true, subnet = args.subnet, rto = 0.5,
    retries = args.retries, circuit_id = nz(args.circuit), remote_id = nz(args.remote),
    relay = { address = args.relay, server = args.server, gateway_mac = nz(args.gateway_mac) } }
  local pool = t:pool()
  local st = t:run{ rxq = rxq, txq = txq, pool = pool, until_settled = true, seconds = args.seconds }
  if args.hold > 0 then st = t:run{ rxq = rxq, txq = txq, pool = pool, seconds = args.hold } end
  local lines = {}
  for i = 0, args.clients - 1 do
    local h = t:host(i)
    lines[#lines + 1] = ("host %d %s %s %s"):format(i, h.mac, h.state, h.ip)
  end
  lines[#lines + 1] = "states: " .. hosts.format_states(st)
  for _, k in ipairs(hosts.FIELDS) do lines[#lines + 1] = ("  %s %d"):format(k, st[k]) end   -- all, published or not
  return { lines = lines }
end
