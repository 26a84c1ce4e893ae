-- gtpv1.lua - GTPv1-U (3GPP TS 29.281): 8 bytes after a UDP header (port
-- 2152), 12 when any of the E, S or PN flags is set (sequence number,
-- N-PDU number, next extension header type), then the user's IP packet.
--
--   surge.proto.stack{ L.eth{}, L.ip4{}, L.udp{ sport = 2152 }, L.gtpv1{ teid = 7 },
--                      L.ip4{ src = "10.9.0.1" }, L.udp{} }
--
-- The message length counts what follows the first 8 bytes (the optional
-- fields and the payload); the preceding udp layer's dport defaults to 2152.
local bit = require("bit")
local stack = require("surge.proto.stack")

local band, rshift = bit.band, bit.rshift
local M = { size = 8, PORT = 2152, T_PDU = 0xff }

-- The flags byte is one 16-bit word with the message type: each flag a
-- masked field. seq, npdu and next_ext exist in a 12-byte header only.
M.fields = { version = { off = 0, bytes = 2, mask = 0xe000 }, pt = { off = 0, bytes = 2, mask = 0x1000 },
             reserved = { off = 0, bytes = 2, mask = 0x0800 }, e = { off = 0, bytes = 2, mask = 0x0400 },
             s = { off = 0, bytes = 2, mask = 0x0200 }, pn = { off = 0, bytes = 2, mask = 0x0100 },
             type = { off = 1, bytes = 1 }, length = { off = 2, bytes = 2 }, teid = { off = 4, bytes = 4 },
             seq = { off = 8, bytes = 2 }, npdu = { off = 10, bytes = 1 }, next_ext = { off = 11, bytes = 1 } }

local allowed = { teid = 1, type = 1, seq = 1 }

local function write(self, p, ctx)
  p[0] = self.seq and 0x32 or 0x30          -- version 1, PT 1 (GTP), S when a sequence number is given
  p[1] = self.type
  stack.put32(p + 4, self.teid)
  if self.seq then stack.put16(p + 8, self.seq); p[10], p[11] = 0, 0 end
end

local finish = stack.length_at(2, 8)   -- the length: what follows the first 8 bytes
local ints = { { "seq", nil, 0, 65535 }, { "teid", 0, 0, 0xffffffff }, { "type", 0xff, 0, 255 } }

function M.layer(o)
  local t = stack.layer_of(o, allowed, { name = "gtpv1", len = 8, udpport = 2152, write = write, finish = finish }, ints)
  if t.seq then t.len = 12 end   -- the optional fields (sequence number, N-PDU, next type) are there
  return t
end

function M.teid(p) return stack.get32(p + 4) end

-- Decoder: the header, its optional part and extension headers; a T-PDU's
-- payload is decoded as IPv4 or IPv6 by its version nibble.
function M.decode(p, len)
  if len < 8 then return "gtpv1 (truncated)", nil, len end
  local flags = p[0]
  local text = ("gtpv1 teid %d type %d len %d flags 0x%02x"):format(stack.get32(p + 4), p[1],
    stack.get16(p + 2), flags)
  local hlen = 8
  if band(flags, 0x07) ~= 0 then
    if len < 12 then return text .. " (truncated)", nil, len end
    text = text .. (" seq %d npdu %d"):format(stack.get16(p + 8), p[10])
    hlen = 12
    local nxt = p[11]
    -- each extension header: its length in 4-byte units, then its next type in its last byte
    while band(flags, 0x04) ~= 0 and nxt ~= 0 do
      if hlen >= len or p[hlen] == 0 or hlen + p[hlen] * 4 > len then return text .. " (bad extension)", nil, len end
      local n = p[hlen] * 4
      text = text .. (" ext 0x%02x"):format(nxt)
      nxt = p[hlen + n - 1]
      hlen = hlen + n
    end
  end
  if p[1] ~= 0xff or hlen >= len then return text, nil, hlen end
  local v = rshift(p[hlen], 4)
  return text, { kind = v == 4 and "ip4" or v == 6 and "ip6" or nil }, hlen
end

return M
