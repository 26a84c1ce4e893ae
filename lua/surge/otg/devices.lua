-- otg/devices.lua - a config's devices (checked by otg/model.lua) as surge
-- serves them: each IPv4 or IPv6 address of a device's ethernet is one
-- entry, one interface of surge's neighbour code (surge.dut.neigh) on the
-- ethernet's port: its MAC, its address (answered for: ARP, neighbour
-- solicitations) and its gateway (resolved: ARP request, solicitation).
-- The port tasks (otg/task.lua) resolve and answer; what they resolved is
-- in memory master owns (otg/stats.lua's neighbour block), read here for
-- /monitor/states and for the destination MAC of flows between devices.
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")
local stats = require("surge.otg.stats")

local M = {}

-- The devices of checked config cfg; port_names: name -> true. Returns
-- { entries = { entry }, by_name = name -> entry or ethernet, ports = port
-- name -> { entry } } and the errors (each "PATH: why").
-- entry: { k (its index), kind = 4|6, name, eth, port, mac, addr, prefix,
--          gw, gw_mac (the configured MAC; nil: resolved) }
function M.compile(cfg, port_names)
  local d = { entries = {}, by_name = {}, ports = {} }
  local errs, seen = {}, {}
  local function name(n, path)
    if seen[n] then errs[#errs + 1] = ("%s.name: '%s' is the name of %s"):format(path, n, seen[n]) end
    seen[n] = seen[n] or path
  end
  local mine = {}           -- port .. address -> the path of the address that has it
  for i, dev in ipairs(cfg.devices or {}) do
    local dpath = ("devices[%d]"):format(i - 1)
    name(dev.name, dpath)
    for j, e in ipairs(dev.ethernets or {}) do
      local epath = ("%s.ethernets[%d]"):format(dpath, j - 1)
      name(e.name, epath)
      local port = e.connection and e.connection.port_name
      if port == nil then
        errs[#errs + 1] = epath .. ".connection.port_name: required by surge (the port the ethernet is on)"
      elseif not port_names[port] then
        errs[#errs + 1] = ("%s.connection.port_name: '%s' is not a port of this config"):format(epath, port)
      end
      d.by_name[e.name] = { kind = "eth", name = e.name, port = port, mac = e.mac, mtu = e.mtu }
      for _, six in ipairs({ false, true }) do
        local list
        if six then list = e.ipv6_addresses else list = e.ipv4_addresses end
        for k, a in ipairs(list or {}) do
          local apath = ("%s.%s[%d]"):format(epath, six and "ipv6_addresses" or "ipv4_addresses", k - 1)
          name(a.name, apath)
          -- the canonical text: what the answers and states carry
          local addr = six and ip6.addr_text(ip6.addr(a.address, apath, 1)) or a.address
          local key = tostring(port) .. "/" .. addr
          if mine[key] then
            errs[#errs + 1] = ("%s.address: %s is the address of %s on the same port"):format(apath, addr, mine[key])
          end
          mine[key] = apath
          local gm = a.gateway_mac
          local en = { k = #d.entries + 1, kind = six and 6 or 4, name = a.name, eth = e.name, port = port,
                       mac = e.mac, mtu = e.mtu, addr = addr, prefix = a.prefix,
                       gw = six and ip6.addr_text(ip6.addr(a.gateway, apath, 1)) or a.gateway,
                       gw_mac = gm.choice == "value" and gm.value or nil }
          d.entries[en.k] = en
          d.by_name[a.name] = en
          if port then
            d.ports[port] = d.ports[port] or {}
            table.insert(d.ports[port], en)
          end
        end
      end
    end
  end
  d.block = stats.neigh_new(#d.entries)
  return d, errs
end

-- Whether address b is in a's subnet (a: an entry).
function M.on_link(a, b)
  if a.kind == 4 then
    local shift = 2 ^ (32 - a.prefix)
    return math.floor(ip4.addr(a.addr, "on_link", 1) / shift) == math.floor(ip4.addr(b, "on_link", 1) / shift)
  end
  local x, y = ip6.addr(a.addr, "on_link", 1), ip6.addr(b, "on_link", 1)
  local bits = a.prefix
  local bytes = math.floor(bits / 8)
  if x:sub(1, bytes) ~= y:sub(1, bytes) then return false end
  local rest = bits % 8
  if rest == 0 then return true end
  local m = 2 ^ (8 - rest)
  return math.floor(x:byte(bytes + 1) / m) == math.floor(y:byte(bytes + 1) / m)
end

-- The gateway MAC of entry en: its configured one, else what its port's
-- task resolved (nil: not yet).
function M.gateway_mac(d, en)
  if en.gw_mac then return en.gw_mac end
  return stats.neigh_mac(d.block, en.k)
end

-- The /monitor/states reply for checked request req (ipv4_neighbors or
-- ipv6_neighbors, ethernet_names filtering): one row a device address
-- (link_layer_address: its gateway's MAC, absent until resolved), as the
-- model's Neighborsv4.State. A name that is no ethernet raises a 400.
function M.states(d, req)
  local choice = req.choice
  local want = {}
  for i, n in ipairs(req[choice].ethernet_names or {}) do
    local e = d and d.by_name[n]
    if not e or e.kind ~= "eth" then
      error({ status = 400, errors = { ("%s.ethernet_names[%d]: '%s' is not a device ethernet of the config"):format(
        choice, i - 1, tostring(n)) } }, 0)
    end
    want[n] = true
  end
  local out = setmetatable({}, { __json = "array" })
  local kind = choice == "ipv4_neighbors" and 4 or 6
  for _, en in ipairs(d and d.entries or {}) do
    if en.kind == kind and (next(want) == nil or want[en.eth]) then
      local row = { ethernet_name = en.eth, link_layer_address = M.gateway_mac(d, en) }
      row[kind == 4 and "ipv4_address" or "ipv6_address"] = en.gw
      out[#out + 1] = row
    end
  end
  return { choice = choice, [choice] = out }
end

return M
