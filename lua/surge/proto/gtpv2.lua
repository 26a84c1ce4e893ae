-- gtpv2.lua - GTPv2-C (3GPP TS 29.274) header: 8 bytes, 12 with the TEID
-- flag; over UDP port 2123.
--
--   surge.proto.stack{ L.eth{}, L.ip4{}, L.udp{}, L.gtpv2{ type = 32, teid = 5, seq = 9 } }
--
-- The message length counts what follows the first 4 bytes.
local bit = require("bit")
local stack = require("surge.proto.stack")

local band = bit.band
local M = { size = 12, PORT = 2123 }

-- seq and spare2 sit after the TEID when the T flag is set (seq/spare2) and
-- right after the length without it (seq0/spare0).
M.fields = { version = { off = 0, bytes = 2, mask = 0xe000 }, p = { off = 0, bytes = 2, mask = 0x1000 },
             t = { off = 0, bytes = 2, mask = 0x0800 }, spare1 = { off = 0, bytes = 2, mask = 0x0700 },
             type = { off = 1, bytes = 1 }, length = { off = 2, bytes = 2 }, teid = { off = 4, bytes = 4 },
             seq = { off = 8, bytes = 4, mask = 0xffffff00 }, spare2 = { off = 11, bytes = 1 },
             seq0 = { off = 4, bytes = 4, mask = 0xffffff00 }, spare0 = { off = 7, bytes = 1 } }

local allowed = { teid = 1, type = 1, seq = 1 }

local function write(self, p, ctx)
  p[0] = self.teid and 0x48 or 0x40          -- version 2, T when a TEID is given
  p[1] = self.type
  local at = 4
  if self.teid then stack.put32(p + 4, self.teid); at = 8 end
  stack.put32(p + at, self.seq * 256)
end

local finish = stack.length_at(2, 4)   -- the length: what follows the first 4 bytes
local ints = { { "teid", nil, 0, 0xffffffff }, { "type", 1, 0, 255 }, { "seq", 0, 0, 0xffffff } }

function M.layer(o)
  local t = stack.layer_of(o, allowed, { name = "gtpv2", len = 8, udpport = 2123, write = write, finish = finish }, ints)
  if t.teid then t.len = 12 end   -- the TEID is there (flag T)
  return t
end

function M.decode(p, len)
  if len < 8 then return "gtpv2 (truncated)", nil, len end
  local t = band(p[0], 0x08) ~= 0
  if t and len < 12 then return "gtpv2 (truncated)", nil, len end
  local at = t and 8 or 4
  local text = ("gtpv2 type %d len %d"):format(p[1], stack.get16(p + 2))
  if t then text = text .. (" teid %d"):format(stack.get32(p + 4)) end
  text = text .. (" seq %d"):format((p[at] * 256 + p[at + 1]) * 256 + p[at + 2])
  return text, nil, t and 12 or 8
end

return M
