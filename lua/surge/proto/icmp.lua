-- icmp.lua - ICMP for IPv4 (RFC 792): an 8-byte header (type, code,
-- checksum, identifier, sequence number), a ready-made Ethernet/IPv4/ICMP
-- frame, and hot-loop setters that keep the checksum valid.
--
--   local t = surge.proto.icmp{ src = "10.0.0.1", dst = "10.0.0.2", type = 8, id = 1, seq = 1 }
--   icmp.set_seq(burst.data[i] + t.l4, n)     -- keeps the ICMP checksum valid
--
--   surge.proto.layer.icmp{ type = 8, code = 0, id = 0, seq = 0 }   -- for stacks
-- The checksum covers the ICMP header and what follows (no pseudo header).
-- Bytes 4..7 are the identifier and sequence number of echo, timestamp and
-- information messages; other types carry there whatever id/seq say.
local bit = require("bit")
local cs = require("surge.proto.checksum")
local stack = require("surge.proto.stack")
local check = require("surge.check")
local flat = require("surge.proto.flat")

local band, rshift = bit.band, bit.rshift
local M = { size = 8, ECHO_REPLY = 0, UNREACHABLE = 3, ECHO_REQUEST = 8, TIME_EXCEEDED = 11 }

M.fields = { type = { off = 0, bytes = 1 }, code = { off = 1, bytes = 1 }, id = { off = 4, bytes = 2 },
             seq = { off = 6, bytes = 2 } }
M.checksum = 2            -- offset of the checksum covering header and payload
M.pseudo_header = false   -- no IP pseudo header: address changes leave the checksum alone

M.type_names = { [0] = "echo-reply", [3] = "unreachable", [4] = "source-quench", [5] = "redirect",
                 [8] = "echo-request", [9] = "router-advertisement", [10] = "router-solicitation",
                 [11] = "time-exceeded", [12] = "parameter-problem", [13] = "timestamp",
                 [14] = "timestamp-reply" }

-- Writes type, code, id and seq at p; checksum 0 (it needs what follows).
function M.write(p, typ, code, id, seq)
  p[0] = typ; p[1] = code
  p[2], p[3] = 0, 0
  stack.put16(p + 4, id)
  stack.put16(p + 6, seq)
end

local allowed = { type = 1, code = 1, id = 1, seq = 1, checksum = 1 }

local function write(self, p, ctx)
  if ctx.ip and ctx.ip.name == "ip6" then
    error("surge.proto.icmp: ICMP over IPv6 is ICMPv6: use surge.proto.layer.icmp6 (or surge.proto.icmp6)", 0)
  end
  M.write(p, self.type, self.code, self.id, self.seq)
end

-- Shared with icmp6: the options of an ICMP-like layer.
function M.options(name, o, default_type, level)
  level = level + 1
  stack.check_keys(name, o, allowed, level)
  return { type = stack.int(name, "type", o.type or default_type, 0, 255, level),
           code = stack.int(name, "code", o.code or 0, 0, 255, level),
           id = stack.int(name, "id", o.id or 0, 0, 65535, level),
           seq = stack.int(name, "seq", o.seq or 0, 0, 65535, level),
           checksum = o.checksum ~= false }
end

-- Shared with icmp6 (one header, the checksum over it and what follows;
-- ICMPv6's also over the IPv6 pseudo header): an ICMP-like protocol's
-- layer constructor and its flat frame builder, surge.proto.NAME{...},
-- where `id` is the ICMP identifier. k: name, type (the default), ipproto,
-- write (the layer's), pseudo (the checksum covers the pseudo header),
-- ip_id (the flat field `ip_id` is the IPv4 header's id, which the other
-- flat builders call `id`), defaults (flat fields: src, dst).
-- checksum = false leaves it 0 (a deliberately bad checksum).
function M.family(k)
  local name, default_type, ipproto = k.name, k.type, k.ipproto
  local function finish(self, p, ctx)
    if not self.checksum then return end
    local len = ctx.size - ctx.off
    stack.put16(p + 2, cs.finish(cs.sum(p, len, k.pseudo and ctx.ip:pseudo_sum(ipproto, len) or nil)))
  end
  local function layer(o)
    local l = M.options(name, o or {}, default_type, 2)
    l.name, l.len, l.ipproto, l.write, l.finish = name, 8, ipproto, k.write, finish
    return l
  end
  local function frame(_, o)
    local f = {}
    check.expect(o, "table?", "surge.proto." .. name, "fields")
    for key, v in pairs(o or {}) do f[key] = v end
    for key, v in pairs(k.defaults or {}) do if f[key] == nil then f[key] = v end end
    local icmp_id = f.id                  -- the ICMP identifier, not flat's IP id
    f.id = nil
    if k.ip_id then f.id, f.ip_id = f.ip_id, nil end
    local function l4layer(l4)
      l4.id = icmp_id
      local l = layer(l4)
      return l
    end
    local t = flat.frame(name, f, { type = default_type, code = 0, seq = 0, checksum = true },
      l4layer, 3)
    return t
  end
  return layer, frame
end

-- surge.proto.icmp{...}: a whole Ethernet [/VLAN]/IPv4/ICMP frame from flat
-- fields; `ip_id` is the IPv4 header's id.
local frame
M.layer, frame = M.family{ name = "icmp", type = 8, ipproto = 1, write = write, ip_id = true }
setmetatable(M, { __call = frame })

-- Hot-loop setters on h (uint8_t * to the ICMP header): keep the checksum valid.
local function set16(h, at, v)
  local old = h[at] * 256 + h[at + 1]
  h[at] = rshift(v, 8); h[at + 1] = band(v, 0xff)
  cs.update16(h + 2, old, v)
end

function M.set_id(h, v) set16(h, 4, v) end
function M.set_seq(h, v) set16(h, 6, v) end

function M.set_type(h, v)
  local old = h[0] * 256 + h[1]
  h[0] = v
  cs.update16(h + 2, old, v * 256 + h[1])
end
M.setter_specs = { set_id = "integer 0..65535", set_seq = "integer 0..65535", set_type = "integer 0..255" }
stack.setters(M, "icmp", M.setter_specs)

function M.id(h) return h[4] * 256 + h[5] end
function M.seq(h) return h[6] * 256 + h[7] end

-- Shared with icmp6: "type T code C NAME id I seq S csum ok".
function M.describe(name, names, p, ok)
  local t = p[0]
  local text = ("%s type %d code %d"):format(name, t, p[1])
  if names[t] then text = text .. " " .. names[t] end
  return ("%s id %d seq %d csum %s"):format(text, stack.get16(p + 4), stack.get16(p + 6), ok)
end

function M.decode(p, len, ctx)
  if len < 8 then return "icmp (truncated)", nil, len end
  local n = len
  if ctx.ip and ctx.ip.payload and ctx.ip.payload <= len then n = ctx.ip.payload end
  return M.describe("icmp", M.type_names, p, cs.sum(p, n) == 0xffff and "ok" or "BAD"), nil, n
end

stack.readers(M, "icmp", { "id", "seq" })

return M
