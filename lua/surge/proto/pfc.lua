-- pfc.lua - priority flow control (IEEE 802.1Qbb) after an eth layer: MAC
-- control ethertype 0x8808, opcode 0x0101, the class-enable vector and a
-- pause time per priority 0..7.
--
--   surge.proto.stack{ L.eth{ dst = "01:80:c2:00:00:01" }, L.pfc{ enable = 0x08, times = { [3] = 100 } } }
local stack = require("surge.proto.stack")
local check = require("surge.check")

local M = { size = 20, OPCODE = 0x0101 }

M.fields = { opcode = { off = 0, bytes = 2 }, enable = { off = 2, bytes = 2 } }
for i = 0, 7 do M.fields["class" .. i] = { off = 4 + 2 * i, bytes = 2 } end

local allowed = { enable = 1, times = 1, opcode = 1 }

local function write(self, p)
  stack.put16(p, self.opcode)
  stack.put16(p + 2, self.enable)
  for i = 0, 7 do stack.put16(p + 4 + 2 * i, self.times[i] or 0) end
end

local ints = { { "opcode", 0x0101, 0, 0xffff }, { "enable", 0, 0, 0xffff } }

function M.layer(o)
  local t
  t, o = stack.layer_of(o, allowed, { name = "pfc", len = 20, ethertype = 0x8808, write = write, times = {} }, ints)
  if o.times ~= nil then
    check.expect(o.times, "table", "surge.proto.pfc", "times")
    for k, v in pairs(o.times) do
      stack.int("pfc", "times key", k, 0, 7, 2)
      t.times[k] = stack.int("pfc", ("times[%d]"):format(k), v, 0, 0xffff, 2)
    end
  end
  return t
end

-- the decoder is pause.lua's: both are MAC control frames, told by opcode
M.decode = require("surge.proto.pause").decode

return M
