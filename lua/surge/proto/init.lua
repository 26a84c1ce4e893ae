-- surge.proto - packet templates, hot-loop accessors and decoders.
--
--   surge.proto.udp{ dst = "10.0.0.2", size = 60 }          -- a whole frame (also tcp, icmp, ...)
--   surge.proto.stack{ L.eth{}, L.vlan{ id = 5 }, L.ip6{}, L.tcp{}, size = 128 }
--   surge.proto.layer.NAME{...}                              -- one layer, for stacks
--   surge.proto.decode(bytes)                                -- readable text
--   surge.proto.udp.set_sport(p, v), surge.proto.ip4.set_src(p, a), ...
--
-- Protocol modules (one file each in lua/surge/proto/) load on first use.
local decode = require("surge.proto.decode")
local stack = require("surge.proto.stack")

local M = {
  checksum = require("surge.proto.checksum"),
  stack = function(spec) local t = stack.build(spec, 2) return t end,
  payload = require("surge.proto.payload"),
}

local modules = { eth = 1, vlan = 1, qinq = 1, arp = 1, ip4 = 1, ip6 = 1, udp = 1, tcp = 1, icmp = 1,
                  icmp6 = 1, vxlan = 1, gre = 1, mpls = 1, igmp = 1, gtpv1 = 1, gtpv2 = 1,
                  ppp = 1, pause = 1, pfc = 1, raw = 1 }

M.layer = setmetatable({}, { __index = function(t, name)
  if not modules[name] then error(("surge.proto.layer: no protocol '%s'"):format(tostring(name)), 2) end
  local ctor = require("surge.proto." .. name).layer
  rawset(t, name, ctor)
  return ctor
end })

function M.decode(data, len)
  return decode.decode(data, len)
end

return setmetatable(M, { __index = function(t, name)
  if not modules[name] then return nil end
  local mod = require("surge.proto." .. name)
  rawset(t, name, mod)
  return mod
end })
