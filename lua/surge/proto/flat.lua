-- flat.lua - whole frames from flat fields: surge.proto.udp{...}, .tcp{...}, ...
--
-- Common fields: src_mac, dst_mac, vlan (id or { id, pcp, dei }), qinq (outer
-- id), src, dst (IPv4 "10.0.0.1" or IPv6 "2001:db8::1": the family follows the
-- addresses), ttl, tos, id (IPv4) / hlim, tclass, flow (IPv6), size, payload;
-- plus the L4 module's own fields. Errors name the caller's line.
local stack = require("surge.proto.stack")
local eth = require("surge.proto.eth")
local qinq = require("surge.proto.qinq")
local vlan = require("surge.proto.vlan")
local ip6 = require("surge.proto.ip6")
local ip4 = require("surge.proto.ip4")
local check = require("surge.check")

local M = {}

local common = { src_mac = 1, dst_mac = 1, vlan = 1, qinq = 1, src = 1, dst = 1, ttl = 1, tos = 1,
                 id = 1, hlim = 1, tclass = 1, flow = 1, size = 1, payload = 1 }

local function tag(v, what)
  if type(v) == "number" then return { id = v } end
  if type(v) == "table" then return v end
  error(("%s must be a VLAN id or { id = ..., pcp = ... }"):format(what), 0)
end

local function build(l4name, o, l4defaults, l4layer)
  local l4 = {}
  for k, v in pairs(o) do
    if common[k] == nil then
      if l4defaults[k] == nil and k ~= "checksum" then
        local list = {}
        for a in pairs(common) do list[#list + 1] = a end
        for a in pairs(l4defaults) do list[#list + 1] = a end
        table.sort(list)
        error(("surge.proto.%s: unknown field '%s' (%s)"):format(l4name, tostring(k), table.concat(list, ", ")), 0)
      end
      l4[k] = v
    end
  end
  for _, k in ipairs({ "src_mac", "dst_mac" }) do
    if o[k] ~= nil then eth.mac(o[k], ("surge.proto.%s: %s"):format(l4name, k)) end
  end
  local layers = { eth.layer{ src = o.src_mac, dst = o.dst_mac } }
  if o.qinq ~= nil then layers[#layers + 1] = qinq.layer(tag(o.qinq, "qinq")) end
  if o.vlan ~= nil then layers[#layers + 1] = vlan.layer(tag(o.vlan, "vlan")) end
  local v6 = tostring(o.src or ""):find(":", 1, true) or tostring(o.dst or ""):find(":", 1, true)
  if v6 then
    layers[#layers + 1] = ip6.layer{ src = o.src, dst = o.dst, hlim = o.hlim or o.ttl,
                                                             tclass = o.tclass or o.tos, flow = o.flow }
  else
    layers[#layers + 1] = ip4.layer{ src = o.src, dst = o.dst, ttl = o.ttl,
                                                             tos = o.tos, id = o.id }
  end
  layers[#layers + 1] = l4layer(l4)
  layers.size = o.size
  if layers.size == nil then
    local hdr = 0
    for _, l in ipairs(layers) do hdr = hdr + l.len end
    layers.size = math.max(60, hdr)
    -- TCP without a size or payload carries no data (a SYN, an ACK): the
    -- frame's minimum 60 bytes are Ethernet padding after the packet
    if l4name == "tcp" and o.payload == nil then layers.trailer = layers.size - hdr end
  end
  layers.payload = o.payload
  return stack.build(layers)
end

-- frame(name, opts, l4 fields with defaults, the L4 layer constructor, level)
function M.frame(l4name, o, l4defaults, l4layer, level)
  check.expect(o, "table?", "surge.proto." .. l4name, "fields")
  o = o or {}
  local ok, t = pcall(build, l4name, o, l4defaults, l4layer)
  if not ok then
    -- report at the user's line, whatever depth the problem was found at
    local msg = tostring(t):gsub("^[^\n:]+:%d+: ", "")
    error(msg, level)
  end
  return t
end

return M
