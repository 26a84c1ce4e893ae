-- pause.lua - MAC control frames (ethertype 0x8808) after an eth layer:
-- PAUSE (IEEE 802.3 Annex 31B, opcode 0x0001, one pause time) and, decoded
-- here too, priority flow control (802.1Qbb, opcode 0x0101, see pfc.lua).
--
--   surge.proto.stack{ L.eth{ dst = "01:80:c2:00:00:01" }, L.pause{ time = 0xffff } }
--
-- Times are in quanta of 512 bit times.
local stack = require("surge.proto.stack")

local M = { size = 4, ETHERTYPE = 0x8808, OPCODE = 0x0001, DST = "01:80:c2:00:00:01" }

M.fields = { opcode = { off = 0, bytes = 2 }, time = { off = 2, bytes = 2 } }

local allowed = { time = 1, opcode = 1 }

local function write(self, p)
  stack.put16(p, self.opcode)
  stack.put16(p + 2, self.time)
end

local ints = { { "opcode", 1, 0, 0xffff }, { "time", 0, 0, 0xffff } }
M.layer = stack.layer_fn(allowed, { name = "pause", len = 4, ethertype = 0x8808, write = write }, ints)

function M.decode(p, len)
  if len < 2 then return "macctl (truncated)", nil, len end
  local op = stack.get16(p)
  if op == 0x0001 and len >= 4 then return ("pause time %d"):format(stack.get16(p + 2)), nil, 4 end
  if op == 0x0101 and len >= 20 then
    local t = {}
    for i = 0, 7 do t[#t + 1] = tostring(stack.get16(p + 4 + 2 * i)) end
    return ("pfc enable 0x%04x times %s"):format(stack.get16(p + 2), table.concat(t, "/")), nil, 20
  end
  return ("macctl opcode 0x%04x"):format(op), nil, 2
end

return M
