-- otg/config.lua - POST and GET /config: the body checked against the
-- model's subset (otg/model.lua), every flow compiled (otg/flows.lua: its
-- template and rewrite loop built once here, so what surge cannot build is
-- a 400 naming the flow, not a failed task later), the ports' locations
-- made DPDK ports. Nothing changes unless all of it succeeds (but devices
-- hot-plugged for a location stay: the next config reuses them).
--
-- A location is
--   a DPDK port's name already there (net_ring0 from --vdev, a PCI address)
--   a DPDK device string (net_ring0, net_pcap0,iface=x, net_af_packet0,iface=x,
--     anything with a ',' or starting "net_"): hot-plugged as surge.vdev does
--   a Linux interface (veth-a, eth1): net_af_packet<N>,iface=NAME hot-plugged
local common = require("surge.otg.common")
local surge, C, schema, model = common.surge, common.C, common.schema, common.model
local flows, capture, l1, devices = common.flows, common.capture, common.l1, common.devices

local M = {}

local current          -- the config as set (defaults filled), nil = none
local compiled         -- { ports = { { name, location, id } }, port_id = name -> id, flows = { spec },
                       -- devices: otg/devices.lua's (entries, by_name, ports, block) }
local plugged = {}     -- location -> port id of devices added for a location
local afp_next = 0

local function bad(errs) return { status = 400, kind = "validation", errors = errs } end

local function iface_exists(name)
  if not name:match("^[%w%._%-@:]+$") or #name > 15 then return false end
  local f = io.open("/sys/class/net/" .. name .. "/ifindex", "r")
  if f then f:close() return true end
  return false
end

-- The port id of a location, adding its device when needed; nil, why.
local function locate(loc)
  if plugged[loc] then return plugged[loc] end
  local id = C.surge_port_find(loc)
  if id >= 0 then return id end
  local spec
  if loc:find(",", 1, true) or loc:match("^net_") or loc:match("^%x+:%x+:%x+%.%x$") then
    spec = loc
  elseif iface_exists(loc) then
    while C.surge_port_find("net_af_packet" .. afp_next) >= 0 do afp_next = afp_next + 1 end
    spec = ("net_af_packet%d,iface=%s"):format(afp_next, loc)
    afp_next = afp_next + 1
  else
    return nil, ("'%s' is neither a DPDK port or device string nor a network interface of this host"):format(loc)
  end
  local ok, r = pcall(surge.vdev, spec)
  if not ok then return nil, (tostring(r):gsub("^[^\n:]+:%d+: ", "")) end
  plugged[loc] = r
  return r
end

-- Sets the config from the decoded body; returns nil or an error table
-- { status, kind, errors }. busy: traffic runs (409).
function M.set(body, busy)
  if busy then
    return { status = 409, kind = "validation",
             errors = { "traffic is running: stop it (control/state traffic.flow_transmit.state stop) before "
                        .. "setting a config" } }
  end
  local cfg, errs = schema.check(model.CONFIG, body, "")
  if not cfg then return bad(errs) end
  local out = { ports = {}, port_id = {}, flows = {} }
  errs = {}
  local seen, at = {}, {}
  for i, p in ipairs(cfg.ports or {}) do
    local path = ("ports[%d]"):format(i - 1)
    if seen[p.name] then errs[#errs + 1] = ("%s.name: '%s' is the name of another port"):format(path, p.name) end
    if p.location and at[p.location] then
      errs[#errs + 1] = ("%s.location: '%s' is the location of %s"):format(path, p.location, at[p.location])
    end
    seen[p.name] = true
    if p.location then at[p.location] = path end
    if p.location == nil or p.location == "" then
      errs[#errs + 1] = ("%s.location: required by surge (an interface or a DPDK device)"):format(path)
    end
  end
  if #errs > 0 then return bad(errs) end
  local names = {}
  for _, p in ipairs(cfg.ports or {}) do names[p.name] = true end
  out.devices, errs = devices.compile(cfg, names)
  if #errs > 0 then return bad(errs) end
  -- every flow compiled (and built) before any device is added
  local fseen = {}
  for i, f in ipairs(cfg.flows or {}) do
    local path = ("flows[%d]"):format(i - 1)
    if fseen[f.name] then errs[#errs + 1] = ("%s.name: '%s' is the name of another flow"):format(path, f.name) end
    fseen[f.name] = true
    local ok, spec = pcall(flows.compile, f, i - 1, names, path, out.devices)
    if not ok then
      errs[#errs + 1] = type(spec) == "table" and (spec.path .. ": " .. spec.msg) or (path .. ": " .. tostring(spec))
    else
      local built, why = pcall(flows.build, spec)
      if not built and type(why) == "table" then errs[#errs + 1] = why.path .. ": " .. why.msg
      elseif not built then errs[#errs + 1] = path .. ": " .. (tostring(why):gsub("^[^\n:]+:%d+: ", "")) end
      out.flows[i] = spec
    end
  end
  if #(cfg.flows or {}) > flows.MAX_FLOWS then errs[#errs + 1] = ("flows: at most %d"):format(flows.MAX_FLOWS) end
  -- the tagged flows' counts (otg/stats.lua: a slot of 32 bytes per value, sent and per port received)
  local slots = 0
  for i = 1, #(cfg.flows or {}) do
    local spec = out.flows[i]
    if spec and spec.tags then
      slots = slots + 2 ^ spec.tag_bits * (#(cfg.ports or {}) + 1)
      if slots > flows.TAG_SLOTS_MAX then
        errs[#errs + 1] = ("%s: its metric tags make %d counts with the flows' before it (a count per tag value, "
          .. "sent and per port received), over surge's %d: fewer tagged bits or flows"):format(spec.path, slots,
          flows.TAG_SLOTS_MAX)
        break
      end
    end
  end
  if #errs > 0 then return bad(errs) end
  for i, p in ipairs(cfg.ports or {}) do
    local id, why = locate(p.location)
    if not id then errs[#errs + 1] = ("ports[%d].location: %s"):format(i - 1, why)
    else
      out.ports[i] = { name = p.name, location = p.location, id = id }
      out.port_id[p.name] = id
    end
  end
  if #errs > 0 then return bad(errs) end
  local caps, layer1 = capture.check(cfg, errs), l1.check(cfg, out, errs)
  if #errs > 0 then return bad(errs) end
  capture.set(caps, #out.ports)
  l1.set(layer1, out.port_id)
  current, compiled = cfg, out
  return nil
end

function M.get() return current end
function M.compiled() return compiled end

return M
