-- ip6.lua - IPv6 header (40 bytes, no extension headers).
--
--   layer{ src = "2001:db8::1", dst = "2001:db8::2", hlim = 64, tclass = 0, flow = 0,
--          proto = 17 }   -- proto (next header) defaults to the next layer's
-- Payload length is filled in from what follows. IPv6 has no header
-- checksum; L4 checksums cover the IPv6 pseudo header (RFC 8200 8.1), which
-- pseudo_sum(proto, len) gives them.
local ffi = require("ffi")
local bit = require("bit")
local cs = require("surge.proto.checksum")
local stack = require("surge.proto.stack")
local check = require("surge.check")

local band, rshift = bit.band, bit.rshift
local M = { size = 40, PROTO_TCP = 6, PROTO_UDP = 17, PROTO_ICMP6 = 58 }

-- Fields a flow may vary: the low 32 bits of each address (in the L4
-- checksum's pseudo header), hop limit, flow label, traffic class.
M.fields = { src = { off = 20, bytes = 4, pseudo = true }, dst = { off = 36, bytes = 4, pseudo = true },
             hlim = { off = 7, bytes = 1 }, flow = { off = 0, bytes = 4, mask = 0x000fffff },
             tclass = { off = 0, bytes = 2, mask = 0x0ff0 }, version = { off = 0, bytes = 2, mask = 0xf000 },
             plen = { off = 4, bytes = 2 }, next = { off = 6, bytes = 1 } }

-- Groups of one side of "::" ("" is none); nil when a group is not 1..4 hex digits.
local function groups(side, out)
  if side == "" then return out end
  for g in (side .. ":"):gmatch("([^:]*):") do
    if not g:match("^%x%x?%x?%x?$") then return nil end
    out[#out + 1] = tonumber(g, 16)
  end
  return out
end

-- Text -> 16-byte string, or nil. Accepts the full form, "::" compression
-- (once) and a trailing dotted IPv4 part ("::ffff:192.0.2.1").
local function parse(s)
  if type(s) ~= "string" or #s < 2 or #s > 45 then return nil end
  local head, v4 = s:match("^(.*:)(%d+%.%d+%.%d+%.%d+)$")
  if head then
    local a, b, c, d = v4:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
    a, b, c, d = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
    if a > 255 or b > 255 or c > 255 or d > 255 then return nil end
    s = head .. ("%x:%x"):format(a * 256 + b, c * 256 + d)
  end
  local g
  local i = s:find("::", 1, true)
  if i then
    local left, right = s:sub(1, i - 1), s:sub(i + 2)
    local l, r = groups(left, {}), groups(right, {})
    if not l or not r or #l + #r > 7 then return nil end
    g = l
    for _ = 1, 8 - #l - #r do g[#g + 1] = 0 end
    for _, v in ipairs(r) do g[#g + 1] = v end
  else
    g = groups(s, {})
    if not g or #g ~= 8 then return nil end
  end
  local b = {}
  for k = 1, 8 do
    b[2 * k - 1] = string.char(rshift(g[k], 8))
    b[2 * k] = string.char(band(g[k], 0xff))
  end
  return table.concat(b)
end
M.parse = parse

-- "2001:db8::1" -> 16-byte string; the error names the option and the text.
function M.addr(s, what, level)
  local b = parse(s)
  if not b then
    error(("%s: '%s' is not an IPv6 address"):format(what, tostring(s)), (level or 2) + 1)
  end
  return b
end

-- 16 bytes (a string or a uint8_t *) -> canonical text (RFC 5952: lower
-- case, no leading zeros, the longest run of two or more zero groups as "::").
function M.addr_text(b)
  if type(b) == "string" then
    if #b < 16 then check.raise(("surge.proto.ip6.addr_text: b: expected 16 bytes, got %d"):format(#b)) end
  else
    check.expect(b, "pointer", "surge.proto.ip6.addr_text", "b")
  end
  local p = type(b) == "string" and ffi.cast("const uint8_t *", b) or b
  local g, best, bestlen, run, runlen = {}, 0, 0, 0, 0
  for k = 1, 8 do
    g[k] = p[2 * k - 2] * 256 + p[2 * k - 1]
    if g[k] == 0 then
      if runlen == 0 then run = k end
      runlen = runlen + 1
      if runlen > bestlen then best, bestlen = run, runlen end
    else
      runlen = 0
    end
  end
  for k = 1, 8 do g[k] = ("%x"):format(g[k]) end
  if bestlen < 2 then return table.concat(g, ":") end
  return table.concat(g, ":", 1, best - 1) .. "::" .. table.concat(g, ":", best + bestlen, 8)
end

-- Writes the header at p: `plen` bytes follow it.
function M.write(p, src, dst, proto, plen, hlim, tclass, flow)
  tclass, flow = tclass or 0, flow or 0
  p[0] = 0x60 + rshift(tclass, 4)
  p[1] = band(tclass, 15) * 16 + rshift(flow, 16)
  p[2] = band(rshift(flow, 8), 0xff)
  p[3] = band(flow, 0xff)
  stack.put16(p + 4, plen)
  p[6] = proto
  p[7] = hlim or 64
  ffi.copy(p + 8, src, 16)
  ffi.copy(p + 24, dst, 16)
end

-- Sum of the pseudo header (source, destination, upper-layer length, next
-- header) for L4 checksums; addr_sum is the folded sum of both addresses.
function M.pseudo_sum(addr_sum, proto, len)
  return addr_sum + rshift(len, 16) + band(len, 0xffff) + proto
end

local allowed = { src = 1, dst = 1, hlim = 1, tclass = 1, flow = 1, proto = 1 }

local function write(self, p, ctx)
  local proto = self.proto or (ctx.next and ctx.next.ipproto)
  if not proto then error("surge.proto.ip6: no proto given and the next layer has none", 0) end
  self.proto_used = proto
  M.write(p, self.src, self.dst, proto, ctx.size - ctx.off - 40, self.hlim, self.tclass, self.flow)
end

local function pseudo_sum(self, proto, len) return M.pseudo_sum(self.addr_sum, proto, len) end

function M.layer(o)
  o = o or {}
  stack.check_keys("ip6", o, allowed, 2)
  local l = { name = "ip6", len = 40, ethertype = 0x86dd, write = write, pseudo_sum = pseudo_sum,
              src = M.addr(o.src or "2001:db8::1", "surge.proto.ip6: src", 2),
              dst = M.addr(o.dst or "2001:db8::2", "surge.proto.ip6: dst", 2),
              hlim = stack.int("ip6", "hlim", o.hlim or 64, 0, 255, 2),
              tclass = stack.int("ip6", "tclass", o.tclass or 0, 0, 255, 2),
              flow = stack.int("ip6", "flow", o.flow or 0, 0, 0xfffff, 2),
              proto = o.proto and stack.int("ip6", "proto", o.proto, 0, 255, 2) }
  local both = l.src .. l.dst          -- anchored while its bytes are summed
  l.addr_sum = cs.sum(ffi.cast("const uint8_t *", both), 32)
  l.ipproto = 41       -- IPv6-in-IP when another layer is stacked on an IP layer
  return l
end

-- Hot-loop accessors on ip (uint8_t * to the IPv6 header). IPv6 has no
-- header checksum; set_src/set_dst change the low 32 bits of an address
-- and return the old and new halves so an L4 checksum can follow with
-- checksum.update16 (as ip4.set_src does).
function M.set_src(ip, v) return cs.swap32(ip, 20, v) end
function M.set_dst(ip, v) return cs.swap32(ip, 36, v) end
function M.src(ip) return stack.get32(ip + 20) end    -- low 32 bits
function M.dst(ip) return stack.get32(ip + 36) end
function M.set_hlim(ip, v) ip[7] = v end

function M.set_flow(ip, v)
  ip[1] = ip[1] - ip[1] % 16 + band(rshift(v, 16), 15)
  ip[2] = band(rshift(v, 8), 0xff)
  ip[3] = band(v, 0xff)
end
stack.setters(M, "ip6", { set_src = "integer 0..4294967295", set_dst = "integer 0..4294967295", set_hlim = "integer 0..255", set_flow = "integer 0..1048575" })

-- Extension headers the decoder steps over: hop-by-hop, routing, fragment,
-- destination options.
local ext = { [0] = "hop", [43] = "route", [44] = "frag", [60] = "dst" }

function M.decode(p, len)
  if len < 40 then return "ip6 (truncated)", nil, len end
  local w, plen, nh = stack.get32(p), stack.get16(p + 4), p[6]
  local off, exts, more = 40, {}, true
  while ext[nh] and off + 8 <= len do
    exts[#exts + 1] = ext[nh]
    local hl = nh == 44 and 8 or (p[off + 1] + 1) * 8
    if nh == 44 and (p[off + 2] * 256 + p[off + 3]) >= 8 then more = false end  -- not the first fragment
    nh = p[off]
    off = off + hl
  end
  local text = ("ip6 %s > %s next %d hlim %d len %d tclass %d flow 0x%05x"):format(M.addr_text(p + 8),
    M.addr_text(p + 24), nh, p[7], plen, band(rshift(w, 20), 0xff), band(w, 0xfffff))
  if #exts > 0 then text = text .. " ext " .. table.concat(exts, ",") end
  if rshift(p[0], 4) ~= 6 then text = text .. " (version " .. rshift(p[0], 4) .. ")" end
  if off > len or not more then return text, nil, math.min(off, len) end
  local asum = cs.sum(p + 8, 32)
  return text, { ipproto = nh, ip = { pseudo_sum = function(pr, l) return M.pseudo_sum(asum, pr, l) end,
                                      v4 = false, payload = plen - (off - 40) } }, off
end

stack.readers(M, "ip6", { "src", "dst" })

return M
