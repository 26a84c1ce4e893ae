-- stack.lua - build a frame from a list of protocol layers.
--
--   local L = surge.proto.layer
--   local t = surge.proto.stack{ L.eth{}, L.vlan{ id = 100 }, L.ip4{ dst = "10.0.0.2" },
--                                L.udp{ dport = 5000 }, size = 128, payload = "inc" }
--   t.bytes, t.size      -- the frame (without FCS), checksums valid
--   t.off.udp, t.l3, t.l4 -- offsets: first layer of each name, first L3, first L4
--   t.layers[i]          -- { name, off, len } for every layer, in order
--   t.trailer            -- bytes of Ethernet padding after the packet (spec.trailer, 0 by default):
--                           zeros no IP length or checksum counts, so a 60-byte frame can carry
--                           a 54-byte TCP/IPv4 packet with no data
--
-- A layer (made by a module's layer(opts)) is a table with:
--   name        "ip4", "udp", ...
--   len         header length in bytes
--   ethertype   what a preceding eth/vlan/qinq puts in its type field (L3 and tags)
--   ipproto     what a preceding ip4/ip6 puts in its protocol field (L4, tunnels)
--   udpport     destination port a preceding udp uses when none was given (vxlan)
--   write(self, p, ctx)   writes the header at p (uint8_t *)
--   finish(self, p, ctx)  runs innermost first, after every header is written:
--                         lengths and checksums that depend on what follows
-- A module (lua/surge/proto/NAME.lua) exports layer(opts), decode(p, len,
-- ctx) -> text, next-info, header length, and for flows:
--   fields = { NAME = { off, bytes, mask?, pseudo? } }  varying fields
--   header_checksum = OFF   a checksum over this header alone (IPv4)
--   checksum = OFF          a checksum over header, payload and, where the
--                           protocol has one, the enclosing IP pseudo header
--   checksum_zero_none      0 in that checksum means "none" (UDP over IPv4)
-- ctx: { size, off, index, layers, next (layer or nil), prev, ip (nearest
-- enclosing ip4/ip6 layer, with .off) }. IP layers offer pseudo_sum(proto, len)
-- for the L4 checksum.
local ffi = require("ffi")
local payload = require("surge.proto.payload")
local check = require("surge.check")

local M = {}

local MAX_FRAME = 9600

function M.build(spec, level)
  level = (level or 1) + 1
  if type(spec) ~= "table" or #spec == 0 then
    error("surge.proto.stack: give a list of layers, e.g. { L.eth{}, L.ip4{}, L.udp{} }", level)
  end
  local layers, hdr = {}, 0
  for i, l in ipairs(spec) do
    if type(l) ~= "table" or type(l.write) ~= "function" then
      error(("surge.proto.stack: item %d is not a layer (use surge.proto.layer.NAME{...})"):format(i), level)
    end
    layers[i] = l
    hdr = hdr + l.len
  end
  for k in pairs(spec) do
    if type(k) ~= "number" and k ~= "size" and k ~= "payload" and k ~= "trailer" then
      error(("surge.proto.stack: unknown field '%s' (size, payload, trailer)"):format(tostring(k)), level)
    end
  end
  local size = spec.size or math.max(60, hdr + (type(spec.payload) == "string" and #spec.payload or 0))
  if type(size) ~= "number" or size ~= math.floor(size) or size < hdr or size > MAX_FRAME then
    error(("surge.proto.stack: size = %s outside %d..%d bytes (the headers take %d)"):format(
      tostring(size), hdr, MAX_FRAME, hdr), level)
  end
  local trailer = spec.trailer or 0
  if type(trailer) ~= "number" or trailer ~= math.floor(trailer) or trailer < 0 or trailer > size - hdr then
    error(("surge.proto.stack: trailer = %s outside 0..%d bytes (the size less the headers)"):format(
      tostring(trailer), size - hdr), level)
  end
  local buf = ffi.new("uint8_t[?]", size)
  payload.fill(buf + hdr, size - trailer - hdr, spec.payload, level)
  local ctxs, off, ip = {}, 0, nil
  for i, l in ipairs(layers) do
    -- the layers see the packet; the trailer after it stays zeros
    local ctx = { size = size - trailer, off = off, index = i, layers = layers, next = layers[i + 1],
                  prev = layers[i - 1], ip = ip }
    l.off = off
    ctxs[i] = ctx
    local ok, err = pcall(l.write, l, buf + off, ctx)
    if not ok then error((tostring(err):gsub("^[^\n:]+:%d+: ", "")), level) end
    if l.pseudo_sum then ip = l end
    off = off + l.len
  end
  for i = #layers, 1, -1 do
    local l = layers[i]
    if l.finish then
      local ok, err = pcall(l.finish, l, buf + ctxs[i].off, ctxs[i])
      if not ok then error((tostring(err):gsub("^[^\n:]+:%d+: ", "")), level) end
    end
  end
  local t = { bytes = ffi.string(buf, size), size = size, trailer = trailer, layers = {}, off = {} }
  for i, l in ipairs(layers) do
    t.layers[i] = { name = l.name, off = l.off, len = l.len }
    if t.off[l.name] == nil then t.off[l.name] = l.off end
    if l.pseudo_sum and not t.l3 then t.l3 = l.off end
    if l.ipproto and not l.pseudo_sum and not t.l4 then t.l4 = l.off end
  end
  return t
end

-- For modules: checks an options table against the allowed keys.
function M.check_keys(name, opts, allowed, level)
  check.expect(opts, "table", "surge.proto." .. name, "fields")
  for k in pairs(opts) do
    if allowed[k] == nil then
      local list = {}
      for a in pairs(allowed) do list[#list + 1] = a end
      table.sort(list)
      error(("surge.proto.%s: unknown field '%s' (%s)"):format(name, tostring(k), table.concat(list, ", ")),
        level + 1)
    end
  end
end

-- For modules: an integer option within bounds, or an error naming it.
function M.int(name, field, v, lo, hi, level)
  if type(v) ~= "number" or v ~= math.floor(v) or v < lo or v > hi then
    error(("surge.proto.%s: %s = %s outside %d..%d"):format(name, field, tostring(v), lo, hi), level + 1)
  end
  return v
end

-- For modules: the layer t (its name, len, write, ...) made from the
-- caller's fields o (nil: none): a key not in allowed refused, then each
-- integer field of ints, { KEY, DEFAULT, LO, HI } in order, checked and set
-- in t (DEFAULT nil: the field is optional and stays nil when not given).
-- Errors name the line that called the layer function (which calls this,
-- and not as a tail call). Returns t and o (never nil) for the fields that
-- are not integers.
function M.layer_of(o, allowed, t, ints)
  o = o or {}
  M.check_keys(t.name, o, allowed, 3)
  for _, f in ipairs(ints) do
    local k = f[1]
    local v = o[k]
    if v == nil then v = f[2] end
    if v ~= nil then t[k] = M.int(t.name, k, v, f[3], f[4], 3) end
  end
  return t, o
end

-- For modules: a layer's finish that writes its 16-bit length field at
-- byte `at`: the bytes from the layer's start to the packet's end, less
-- the first `minus` (GTPv1 counts after its 8 mandatory bytes, GTPv2 after 4).
function M.length_at(at, minus)
  return function(_, p, ctx)
    M.put16(p + at, ctx.size - ctx.off - minus)
  end
end

-- For modules: a layer function whose every field is an integer of ints
-- (see layer_of): each call makes a copy of base with the fields set.
function M.layer_fn(allowed, base, ints)
  return function(o)
    local t = {}
    for k, v in pairs(base) do t[k] = v end
    return (M.layer_of(o, allowed, t, ints))   -- no tail call: errors name the caller's line
  end
end

function M.put16(p, v)
  p[0] = math.floor(v / 256) % 256
  p[1] = v % 256
end

function M.put32(p, v)
  p[0] = math.floor(v / 16777216) % 256
  p[1] = math.floor(v / 65536) % 256
  p[2] = math.floor(v / 256) % 256
  p[3] = v % 256
end

function M.get16(p) return p[0] * 256 + p[1] end
function M.get32(p) return ((p[0] * 256 + p[1]) * 256 + p[2]) * 256 + p[3] end

-- mod[fn] checked by surge.check.hot; the unchecked function in mod._raw
local function checked(mod, name, fn, params)
  mod._raw = mod._raw or {}
  local raw = mod._raw[fn] or mod[fn]
  mod._raw[fn] = raw
  mod[fn] = check.hot(raw, ("surge.proto.%s.%s"):format(name, fn), params)
end

-- The hot-loop setters of module `mod` (surge.proto.NAME), checked: each
-- mod[SETTER] named in specs (SETTER = "integer LO..HI", or { PARAM, SPEC }
-- where the value's name is not v) is replaced by a wrapper that refuses a
-- p that is not a non-NULL pointer and a value outside the field (a
-- non-integer, NaN, a string) at the user's line, before any byte is
-- written (surge.check.hot). The unchecked functions stay in mod._raw for
-- modules that share them (icmp6 uses icmp's, qinq vlan's).
function M.setters(mod, name, specs)
  for setter, spec in pairs(specs) do
    local param = "v"
    if type(spec) == "table" then param, spec = spec[1], spec[2] end
    checked(mod, name, setter, { { "p", "pointer" }, { param, spec } })
  end
end

-- The field readers of `mod` (udp.sport(p), ...) check their pointer the
-- same way: a NULL or a non-byte cdata is refused at the user's line
-- instead of being read. Called at the end of the module, its readers
-- defined.
function M.readers(mod, name, list)
  for _, field in ipairs(list) do checked(mod, name, field, { { "p", "pointer" } }) end
end

return M
