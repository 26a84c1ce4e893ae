-- vlan.lua - 802.1Q tag (and 802.1ad for QinQ): 4 bytes after the MACs.
--
--   layer{ id = 100, pcp = 0, dei = 0 }            -- C-tag, TPID 0x8100
--   layer{ id = 10, tpid = 0x88a8 }               -- S-tag: QinQ outer tag
--   surge.proto.stack{ L.eth{}, L.qinq{ id = 10 }, L.vlan{ id = 100 }, L.ip4{}, ... }
--
-- The tag's TPID is what the layer before it (eth or an outer tag) writes as
-- its type; the tag's own type field is the next layer's ethertype.
local stack = require("surge.proto.stack")

local M = { size = 4 }
M.fields = { id = { off = 0, bytes = 2, mask = 0x0fff }, pcp = { off = 0, bytes = 2, mask = 0xe000 },
             dei = { off = 0, bytes = 2, mask = 0x1000 } }
local allowed = { id = 1, pcp = 1, dei = 1, tpid = 1 }

local function write(self, p, ctx)
  local t = ctx.next and ctx.next.ethertype
  if not t then error("surge.proto.vlan: the next layer has no ethertype", 0) end
  stack.put16(p, self.pcp * 8192 + self.dei * 4096 + self.id)
  stack.put16(p + 2, t)
end

function M.layer(o, name, level)
  o = o or {}
  name, level = name or "vlan", level or 2
  stack.check_keys(name, o, allowed, level)
  return { name = name, len = 4, write = write,
           id = stack.int(name, "id", o.id or 0, 0, 4095, level),
           pcp = stack.int(name, "pcp", o.pcp or 0, 0, 7, level),
           dei = stack.int(name, "dei", o.dei or 0, 0, 1, level),
           ethertype = stack.int(name, "tpid", o.tpid or (name == "qinq" and 0x88a8 or 0x8100), 0, 0xffff, level) }
end

-- Hot loop: the VLAN id at p (uint8_t * to the tag), keeping pcp/dei.
function M.set_id(p, id)
  p[0] = p[0] - p[0] % 16 + math.floor(id / 256)
  p[1] = id % 256
end
stack.setters(M, "vlan", { set_id = { "id", "integer 0..4095" } })

function M.decode(p, len)
  if len < 4 then return "vlan (truncated)", nil, len end
  local tci, t = stack.get16(p), stack.get16(p + 2)
  return ("vlan %d pcp %d dei %d type 0x%04x"):format(tci % 4096, math.floor(tci / 8192),
    math.floor(tci / 4096) % 2, t), { ethertype = t }, 4
end

return M
