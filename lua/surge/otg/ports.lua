-- otg/ports.lua - a port's layer1 settings (the config's `layer1`) and its
-- link (control/state port.link), as the device allows (docs/otg.md).
--
--   speed        the device's own link speed only (surge sets no speed):
--                another is refused by name with the speed the port runs at
--   mtu          given to the port's open (surge.port's mtu: the device's
--                MTU where it has one, surge's send limit on every device);
--                a flow whose frames would exceed it is refused at set_config
--   promiscuous  given to the port's open (on: surge's default)
--   link         rte_eth_dev_set_link_up/down on the open port (opened for
--                it when no traffic has opened it yet); a device without the
--                operation (af_packet, pcap) is an error naming the port.
--                The state asked is applied again whenever traffic reopens
--                the port (a reopen starts the device: its link comes up).
local core = require("surge.core")
local port = require("surge.port")

local C = core.C
local M = {}

local MBPS = { speed_10_fd_mbps = 10, speed_10_hd_mbps = 10, speed_100_fd_mbps = 100, speed_100_hd_mbps = 100,
  speed_1_gbps = 1000, speed_10_gbps = 10000, speed_25_gbps = 25000, speed_40_gbps = 40000,
  speed_50_gbps = 50000, speed_100_gbps = 100000, speed_200_gbps = 200000, speed_400_gbps = 400000,
  speed_800_gbps = 800000 }

local settings = {}    -- port id -> { mtu, promisc } of the config's layer1
local link_down = {}   -- port id -> true: the link was set down
local by_name = {}     -- port name -> id (the config's)

-- The checked config's layer1 against its located ports (out.port_id:
-- name -> id) and compiled flows; adds "layer1[i]...: why" lines to errs.
-- Returns the settings for M.set.
function M.check(cfg, out, errs)
  local plan, taken = {}, {}
  for i, l in ipairs(cfg.layer1 or {}) do
    local path = ("layer1[%d]"):format(i - 1)
    for k, n in ipairs(l.port_names or {}) do
      local pp = ("%s.port_names[%d]"):format(path, k - 1)
      local id = out.port_id[n]
      if id == nil then errs[#errs + 1] = ("%s: '%s' is not a port of this config"):format(pp, n)
      elseif taken[n] then errs[#errs + 1] = ("%s: port '%s' is in %s already"):format(pp, n, taken[n])
      else
        taken[n] = path
        local info = port.wrap(id):info()
        if l.speed and MBPS[l.speed] ~= info.speed_mbps then
          errs[#errs + 1] = ("%s.speed: %s: surge cannot set a port's speed; port '%s' (%s) runs at %s"):format(path,
            l.speed, n, info.driver, info.speed_mbps > 0 and (info.speed_mbps .. " Mbit/s") or "no reported speed")
        end
        plan[id] = { mtu = l.mtu, promisc = l.promiscuous, path = path }
      end
    end
  end
  for i, f in ipairs(out.flows) do
    local id = out.port_id[f.tx]
    local s = id and plan[id]
    -- surge.port's limit: MTU + Ethernet header + two VLAN tags (the FCS not counted)
    if s and f.size > s.mtu + 22 then
      errs[#errs + 1] = ("flows[%d].size: %d is over %s.mtu %d of port '%s' (frames of at most %d bytes with the "
        .. "FCS)"):format(i - 1, f.size + 4, s.path, s.mtu, f.tx, s.mtu + 26)
    end
  end
  return plan
end

-- A new config's settings (M.check's) and ports (name -> id).
function M.set(plan, port_id)
  settings, by_name, link_down = plan, port_id, {}
end

-- The options of a port's open (traffic's): opts with the layer1 settings.
function M.open_opts(id, opts)
  local s = settings[id]
  if s then opts.mtu, opts.promisc = s.mtu, s.promisc end
  return opts
end

local function set_link(id, up)
  if C.surge_port_set_link(id, up and 1 or 0) ~= 0 then return core.last_error() end
end

-- After traffic (re)opened port id: promiscuous off where layer1 asks it
-- (the open only turns it on), its link as last asked.
function M.opened(id)
  local s = settings[id]
  if s and s.promisc == false and C.surge_port_set_promisc(id, 0) ~= 0 then
    error({ status = 400, errors = { ("%s.promiscuous: %s"):format(s.path, core.last_error()) } }, 0)
  end
  if link_down[id] then
    local why = set_link(id, false)
    if why then error({ status = 500, errors = { why } }, 0) end
  end
end

-- The link column of the port metrics.
function M.link(id)
  local info = port.wrap(id):info()
  if info.rxq == 0 then return link_down[id] and "down" or "up" end
  return info.link_up and "up" or "down"
end

-- control/state port.link: the named ports' links (all: names empty) up
-- or down, each opened (one queue) when nothing has opened it.
function M.control(names, state)
  local list = {}
  if names == nil or #names == 0 then
    for n in pairs(by_name) do list[#list + 1] = n end
    table.sort(list)
  else
    for i, n in ipairs(names) do
      if by_name[n] == nil then
        error({ status = 400, errors = { ("port.link.port_names[%d]: '%s' is not a port of the config"):format(
          i - 1, n) } }, 0)
      end
      list[#list + 1] = n
    end
  end
  local errs = {}
  for _, n in ipairs(list) do
    local id = by_name[n]
    if port.wrap(id):info().rxq == 0 then
      port.open(id, M.open_opts(id, { rxq = 1, txq = 1, clones = true, link_timeout = 0 }))
    end
    local why = set_link(id, state == "up")
    if why then errs[#errs + 1] = ("port.link: port '%s': %s"):format(n, why)
    else link_down[id] = state == "down" or nil end
  end
  if #errs > 0 then error({ status = 400, errors = errs }, 0) end
end

return M
