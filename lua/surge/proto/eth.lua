-- eth.lua - Ethernet II header (14 bytes).
--
--   layer{ src = "02:00:00:00:00:01", dst = "02:00:00:00:00:02", type = 0x0800 }
--   (type defaults to what the next layer needs)
local ffi = require("ffi")
local stack = require("surge.proto.stack")
local check = require("surge.check")

local M = { size = 14, TYPE_IP4 = 0x0800, TYPE_ARP = 0x0806, TYPE_VLAN = 0x8100,
            TYPE_QINQ = 0x88a8, TYPE_IP6 = 0x86dd, TYPE_MPLS = 0x8847 }

-- Fields a flow may vary (see stack.lua): byte offset in the header, width.
M.fields = { dst = { off = 0, bytes = 6 }, src = { off = 6, bytes = 6 }, type = { off = 12, bytes = 2 } }

-- "02:00:00:00:00:01" -> 6-byte string; error names the bad text.
function M.mac(s, what, level)
  if type(s) ~= "string" then error(("%s: MAC address must be a string"):format(what), (level or 2) + 1) end
  local b = { s:match("^(%x%x)[:-](%x%x)[:-](%x%x)[:-](%x%x)[:-](%x%x)[:-](%x%x)$") }
  if #b ~= 6 then error(("%s: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)"):format(what, s), (level or 2) + 1) end
  for i = 1, 6 do b[i] = string.char(tonumber(b[i], 16)) end
  return table.concat(b)
end

function M.mac_text(p)
  check.expect(p, "pointer", "surge.proto.eth.mac_text", "p")
  return ("%02x:%02x:%02x:%02x:%02x:%02x"):format(p[0], p[1], p[2], p[3], p[4], p[5])
end

-- Whether the 6 bytes at p can be a host's own address: nil if so, else
-- what they are ("broadcast", "multicast", "zero"). The one rule for every
-- MAC surge learns from the wire (ARP replies, neighbour advertisements,
-- the senders it answers): frames to such an address reach every host or
-- none, never the neighbour alone.
function M.unicast_problem(p)
  if p[0] == 0 and p[1] == 0 and p[2] == 0 and p[3] == 0 and p[4] == 0 and p[5] == 0 then return "zero" end
  if p[0] == 0xff and p[1] == 0xff and p[2] == 0xff and p[3] == 0xff and p[4] == 0xff and p[5] == 0xff then
    return "broadcast"
  end
  if p[0] % 2 == 1 then return "multicast" end   -- the group bit
  return nil
end

-- Writes the header at p (uint8_t *).
function M.write(p, src, dst, ethertype)
  ffi.copy(p, dst, 6)
  ffi.copy(p + 6, src, 6)
  stack.put16(p + 12, ethertype)
end

local allowed = { src = 1, dst = 1, type = 1 }

local function write(self, p, ctx)
  local t = self.type or (ctx.next and ctx.next.ethertype)
  if not t then error("surge.proto.eth: no type given and the next layer has no ethertype", 0) end
  M.write(p, self.src, self.dst, t)
end

function M.layer(o)
  o = o or {}
  stack.check_keys("eth", o, allowed, 2)
  return { name = "eth", len = 14, write = write,
           src = M.mac(o.src or "02:00:00:00:00:01", "surge.proto.eth: src", 2),
           dst = M.mac(o.dst or "02:00:00:00:00:02", "surge.proto.eth: dst", 2),
           type = o.type and stack.int("eth", "type", o.type, 0, 0xffff, 2) }
end

-- Decoder: text, the next layer's ethertype, header length.
function M.decode(p, len)
  if len < 14 then return "eth (truncated)", nil, len end
  local t = stack.get16(p + 12)
  return ("eth %s > %s type 0x%04x"):format(M.mac_text(p + 6), M.mac_text(p), t), { ethertype = t }, 14
end

return M
