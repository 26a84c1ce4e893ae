-- scenario/kit/clients.lua - a scenario's client side as emulated hosts
-- (surge.hosts, docs/hosts.md): N DHCPv4 clients bound on the client's
-- port before the trials, whose addresses the trials then open from
-- (rfc9693 --clients-dhcp N). The options, their check before any port,
-- and the binding in the scenario's task.
local ffi = require("ffi")
local hosts = require("surge.hosts")
local ip4 = require("surge.proto.ip4")
local surge = require("surge")
local options = require("surge.scenario.kit.options")

local C = ffi.C

local M = {}

-- One client engine takes at most this many source addresses
-- (docs/connections.md, "Several source addresses"): every trial's engine
-- opens from all the bound clients.
M.MAX = C.SURGE_CONN_ADDR_MAX

function M.options(p)
  p:option("--clients-dhcp", "bind this many DHCPv4 clients on the --tx port first (the DUT's DHCP server) and "
    .. "open the connections from their addresses (0: from --src)", 0, "integer 0.." .. M.MAX)
  p:option("--clients-subnet", "--clients-dhcp: the DHCP server's subnet A.B.C.D/LEN, where the clients answer "
    .. "ARP (default: --gateway's /24)", "")
  p:option("--clients-mac", "--clients-dhcp: client 0's MAC (client i's is it plus i)", "02:96:93:00:00:01")
  p:option("--clients-rate", "--clients-dhcp: DISCOVERs per second (0: unpaced)", 1000, "number 0..1000000")
  p:option("--clients-timeout", "--clients-dhcp: seconds for every client to be bound", 30, "number 0.1..3600")
end

-- The clients' plan from the options (before any port, refusals naming the
-- option): nil without --clients-dhcp, else { count, subnet, mac, rate,
-- timeout }.
function M.plan(o, refuse)
  local n = o.clients_dhcp or 0
  options.unicast_mac(o.clients_mac or "", "--clients-mac", n)
  local subnet = o.clients_subnet or ""
  if subnet ~= "" then
    local a, len = subnet:match("^([%d.]+)/(%d+)$")
    len = tonumber(len)
    if not a or not pcall(ip4.addr, a, "subnet", 1) or len < 12 or len > 32 then
      refuse("--clients-subnet", "'%s' is not A.B.C.D/LEN with LEN 12..32", subnet)
    end
  end
  if n == 0 then return nil end
  if tostring(o.dst or ""):find(":", 1, true) then
    refuse("--clients-dhcp", "DHCPv4 clients open IPv4 connections: --dst %s is IPv6", o.dst)
  end
  if subnet == "" then
    local gw = o.gateway or ""
    local ok, a = pcall(ip4.addr, gw, "gateway", 1)
    if gw == "" or not ok then
      refuse("--clients-subnet", "not given, and no IPv4 --gateway to take a /24 from")
    end
    subnet = ip4.addr_text(a - a % 256) .. "/24"
  end
  return { count = n, subnet = subnet, mac = o.clients_mac, rate = o.clients_rate, timeout = o.clients_timeout }
end

-- In the task: the table bound on the port (rxq, txq) with pool's bursts;
-- returns the table and its bound addresses ({ ip = {..}, mac = {..} }),
-- or raises when not every client was bound within the timeout. The
-- table's counters are not published (the run's 64 belong to the
-- engines); its states are in the error and the progress line.
function M.bind(plan, rxq, txq, pool, progress)
  local t = hosts.new{ count = plan.count, mac = plan.mac, dhcp = true, subnet = plan.subnet, rate = plan.rate,
    outstanding = 64, retries = 4, rto = 1, prefix = "clients" }
  local rx, tx = pool:burst(64), pool:burst(64)
  local hz = tonumber(surge.tsc_hz())
  local t0 = tonumber(surge.tsc())
  local deadline = t0 + plan.timeout * hz
  while surge.running() and not t:settled() and tonumber(surge.tsc()) < deadline do
    if t:poll(rxq, txq, rx, tx) > 0 then rx:free() end
  end
  local st = t:stats()
  local a = t:bound_addresses(M.MAX)
  if #a.ip < plan.count and surge.running() then
    error(("--clients-dhcp: %d of %d DHCP clients bound in %.1f s (%s): is the DUT's DHCP server on the --tx "
      .. "side, with a pool of %d addresses?"):format(#a.ip, plan.count, (tonumber(surge.tsc()) - t0) / hz,
      hosts.format_states(st), plan.count), 0)
  end
  if progress then
    progress("clients: %d DHCP clients bound in %.2f s", #a.ip, (tonumber(surge.tsc()) - t0) / hz)
  end
  return t, a
end

return M
