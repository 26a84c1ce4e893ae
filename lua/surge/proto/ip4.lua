-- ip4.lua - IPv4 header (20 bytes, no options).
local bit = require "bit"
local cs = require "surge.proto.checksum"

local band, rshift = bit.band, bit.rshift
local M = { size = 20, PROTO_ICMP = 1, PROTO_TCP = 6, PROTO_UDP = 17 }

-- "10.0.0.1" -> number (host order); errors name the option and the text.
function M.addr(s, what)
  if type(s) == "number" and s >= 0 and s < 2^32 then return s end
  local a, b, c, d = tostring(s):match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
  a, b, c, d = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
  if not a or a > 255 or b > 255 or c > 255 or d > 255 then
    error(("%s: '%s' is not an IPv4 address"):format(what, tostring(s)), 3)
  end
  return ((a * 256 + b) * 256 + c) * 256 + d
end

local function put32(p, v)
  p[0] = rshift(v, 24) % 256; p[1] = rshift(v, 16) % 256; p[2] = rshift(v, 8) % 256; p[3] = v % 256
end

-- Writes a header for `total` bytes of IP datagram at p, checksum included.
function M.write(p, src, dst, proto, total, ttl, id)
  p[0] = 0x45; p[1] = 0
  p[2] = rshift(total, 8); p[3] = band(total, 0xff)
  p[4] = rshift(id, 8); p[5] = band(id, 0xff)
  p[6] = 0x40; p[7] = 0                -- don't fragment
  p[8] = ttl; p[9] = proto
  p[10] = 0; p[11] = 0
  put32(p + 12, src)
  put32(p + 16, dst)
  local c = cs.finish(cs.sum(p, 20))
  p[10] = rshift(c, 8); p[11] = band(c, 0xff)
end

-- Sum of the pseudo header for UDP/TCP checksums.
function M.pseudo_sum(src, dst, proto, len)
  return rshift(src, 16) + band(src, 0xffff) + rshift(dst, 16) + band(dst, 0xffff) + proto + len
end

-- Hot-loop accessor: set the source address at ip (uint8_t * to the IPv4
-- header), keeping the IPv4 checksum valid. Returns old and new as numbers
-- so an L4 checksum can be updated with update_l4().
function M.set_src(ip, v)
  local oh, ol = ip[12] * 256 + ip[13], ip[14] * 256 + ip[15]
  local nh, nl = rshift(v, 16), band(v, 0xffff)
  ip[12] = rshift(nh, 8); ip[13] = band(nh, 0xff); ip[14] = rshift(nl, 8); ip[15] = band(nl, 0xff)
  cs.update16(ip + 10, oh, nh)
  cs.update16(ip + 10, ol, nl)
  return oh, ol, nh, nl
end

return M
