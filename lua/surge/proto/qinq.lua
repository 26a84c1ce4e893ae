-- qinq.lua - the outer (service) tag of QinQ: a VLAN tag with TPID 0x88a8.
--   surge.proto.stack{ L.eth{}, L.qinq{ id = 10 }, L.vlan{ id = 100 }, L.ip4{}, L.udp{} }
local vlan = require("surge.proto.vlan")
local stack = require("surge.proto.stack")

local M = { size = 4, decode = vlan.decode, set_id = vlan._raw.set_id }
stack.setters(M, "qinq", { set_id = { "id", "integer 0..4095" } })

function M.layer(o)
  local l = vlan.layer(o, "qinq", 3)
  return l
end

return M
