-- ip4.lua - IPv4 header (20 bytes, no options).
--
--   layer{ src = "10.0.0.1", dst = "10.0.0.2", ttl = 64, tos = 0, id = 0, df = true,
--          proto = 17 }   -- proto defaults to the next layer's
-- Total length and header checksum are filled in from what follows.
local bit = require("bit")
local cs = require("surge.proto.checksum")
local stack = require("surge.proto.stack")

local band, rshift = bit.band, bit.rshift
local M = { size = 20, PROTO_ICMP = 1, PROTO_TCP = 6, PROTO_UDP = 17, PROTO_GRE = 47 }

-- Fields a flow may vary. The header checksum covers all of them; `pseudo`
-- ones are also in the L4 checksum's pseudo header.
M.fields = { tos = { off = 1, bytes = 1 }, id = { off = 4, bytes = 2 }, ttl = { off = 8, bytes = 1 },
             src = { off = 12, bytes = 4, pseudo = true }, dst = { off = 16, bytes = 4, pseudo = true },
             -- bit fields (OTG varies each): version/IHL, DSCP/ECN and the TOS bits, flags, fragment offset
             version = { off = 0, bytes = 2, mask = 0xf000 }, ihl = { off = 0, bytes = 2, mask = 0x0f00 },
             dscp = { off = 0, bytes = 2, mask = 0x00fc }, ecn = { off = 0, bytes = 2, mask = 0x0003 },
             precedence = { off = 0, bytes = 2, mask = 0x00e0 }, tos_delay = { off = 0, bytes = 2, mask = 0x0010 },
             tos_throughput = { off = 0, bytes = 2, mask = 0x0008 },
             tos_reliability = { off = 0, bytes = 2, mask = 0x0004 },
             tos_monetary = { off = 0, bytes = 2, mask = 0x0002 }, tos_unused = { off = 0, bytes = 2, mask = 0x0001 },
             len = { off = 2, bytes = 2 }, reserved = { off = 6, bytes = 2, mask = 0x8000 },
             df = { off = 6, bytes = 2, mask = 0x4000 }, mf = { off = 6, bytes = 2, mask = 0x2000 },
             frag = { off = 6, bytes = 2, mask = 0x1fff }, proto = { off = 9, bytes = 1 } }
M.header_checksum = 10   -- offset of the checksum that covers the header

-- "10.0.0.1" -> number (host order); errors name the option and the text.
function M.addr(s, what, level)
  if type(s) == "number" and s >= 0 and s < 2^32 and s == math.floor(s) then return s end
  local a, b, c, d = tostring(s):match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
  a, b, c, d = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
  if not a or a > 255 or b > 255 or c > 255 or d > 255 then
    error(("%s: '%s' is not an IPv4 address"):format(what, tostring(s)), (level or 2) + 1)
  end
  return ((a * 256 + b) * 256 + c) * 256 + d
end

function M.addr_text(v)
  return ("%d.%d.%d.%d"):format(rshift(v, 24) % 256, rshift(v, 16) % 256, rshift(v, 8) % 256, v % 256)
end

-- Writes a header for `total` bytes of IP datagram at p, checksum included.
function M.write(p, src, dst, proto, total, ttl, id, tos, df)
  p[0] = 0x45; p[1] = tos or 0
  stack.put16(p + 2, total)
  stack.put16(p + 4, id or 0)
  p[6] = (df == false) and 0 or 0x40; p[7] = 0
  p[8] = ttl; p[9] = proto
  p[10] = 0; p[11] = 0
  stack.put32(p + 12, src)
  stack.put32(p + 16, dst)
  stack.put16(p + 10, cs.finish(cs.sum(p, 20)))
end

-- Sum of the pseudo header for UDP/TCP checksums.
function M.pseudo_sum(src, dst, proto, len)
  return rshift(src, 16) + band(src, 0xffff) + rshift(dst, 16) + band(dst, 0xffff) + proto + len
end

local allowed = { src = 1, dst = 1, ttl = 1, tos = 1, id = 1, df = 1, proto = 1 }

local function write(self, p, ctx)
  local proto = self.proto or (ctx.next and ctx.next.ipproto)
  if not proto then error("surge.proto.ip4: no proto given and the next layer has none", 0) end
  self.proto_used = proto
  M.write(p, self.src, self.dst, proto, ctx.size - ctx.off, self.ttl, self.id, self.tos, self.df)
end

function M.layer(o)
  o = o or {}
  stack.check_keys("ip4", o, allowed, 2)
  local l = { name = "ip4", len = 20, ethertype = 0x0800, write = write,
              src = M.addr(o.src or "10.0.0.1", "surge.proto.ip4: src", 2),
              dst = M.addr(o.dst or "10.0.0.2", "surge.proto.ip4: dst", 2),
              ttl = stack.int("ip4", "ttl", o.ttl or 64, 0, 255, 2),
              tos = stack.int("ip4", "tos", o.tos or 0, 0, 255, 2),
              id = stack.int("ip4", "id", o.id or 0, 0, 65535, 2),
              df = o.df ~= false,
              proto = o.proto and stack.int("ip4", "proto", o.proto, 0, 255, 2) }
  l.pseudo_sum = function(self, proto, len) return M.pseudo_sum(self.src, self.dst, proto, len) end
  l.ipproto = 4        -- IP-in-IP when another layer is stacked on an IP layer
  return l
end

-- Hot-loop accessors on ip (uint8_t * to the IPv4 header), keeping the
-- header checksum valid. set_src/set_dst return the old and new address
-- halves so an L4 checksum can follow with checksum.update16.
local function set_addr(ip, at, v)
  local oh, ol, nh, nl = cs.swap32(ip, at, v)
  cs.update16(ip + 10, oh, nh)
  cs.update16(ip + 10, ol, nl)
  return oh, ol, nh, nl
end

function M.set_src(ip, v) return set_addr(ip, 12, v) end
function M.set_dst(ip, v) return set_addr(ip, 16, v) end
stack.setters(M, "ip4", { set_src = { "a", "integer 0..4294967295" }, set_dst = { "a", "integer 0..4294967295" } })
function M.src(ip) return stack.get32(ip + 12) end
function M.dst(ip) return stack.get32(ip + 16) end

function M.set_ttl(ip, v)
  local old = ip[8] * 256 + ip[9]
  ip[8] = v
  cs.update16(ip + 10, old, v * 256 + ip[9])
end
stack.setters(M, "ip4", { set_ttl = "integer 0..255" })

-- (a total length below the header, from the wire, is an empty payload)
function M.decode(p, len)
  if len < 20 then return "ip4 (truncated)", nil, len end
  local ihl = band(p[0], 15) * 4
  local ok = cs.sum(p, math.min(ihl, len)) == 0xffff
  local src, dst, proto = stack.get32(p + 12), stack.get32(p + 16), p[9]
  local text = ("ip4 %s > %s proto %d ttl %d len %d id %d csum %s"):format(M.addr_text(src),
    M.addr_text(dst), proto, p[8], stack.get16(p + 2), stack.get16(p + 4), ok and "ok" or "BAD")
  return text, { ipproto = proto, ip = { pseudo_sum = function(pr, l) return M.pseudo_sum(src, dst, pr, l) end,
                                           v4 = true, payload = math.max(stack.get16(p + 2) - ihl, 0) } }, ihl
end

stack.readers(M, "ip4", { "src", "dst" })

return M
