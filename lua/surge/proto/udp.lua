-- udp.lua - UDP over IPv4 over Ethernet: template builder and hot-loop setters.
--
--   local t = surge.proto.udp{ src = "10.0.0.1", dst = "10.0.0.2", sport = 1024,
--                              dport = 5000, size = 60 }
--   t.bytes   -- the frame, checksums valid;   t.l3, t.l4 -- header offsets
--   udp.set_sport(burst.data[i] + t.l4, port) -- keeps the UDP checksum valid
local ffi = require "ffi"
local bit = require "bit"
local cs = require "surge.proto.checksum"
local eth = require "surge.proto.eth"
local ip4 = require "surge.proto.ip4"

local band, rshift = bit.band, bit.rshift
local M = { size = 8 }

local defaults = {
  src_mac = "02:00:00:00:00:01", dst_mac = "02:00:00:00:00:02",
  src = "10.0.0.1", dst = "10.0.0.2", sport = 1024, dport = 1024,
  size = 60, ttl = 64, id = 0, payload = nil,
}

local function port_number(v, what)
  if type(v) ~= "number" or v < 0 or v > 65535 or v ~= math.floor(v) then
    error(("surge.proto.udp: %s = %s is not a port number (0..65535)"):format(what, tostring(v)), 3)
  end
  return v
end

-- Builds a UDP/IPv4/Ethernet frame of `size` bytes (without FCS); called as
-- surge.proto.udp{...} (the module's __call), so errors point at the caller.
local function template(_, o)
  o = o or {}
  for k in pairs(o) do
    if defaults[k] == nil and k ~= "payload" then
      error(("surge.proto.udp: unknown field '%s'"):format(tostring(k)), 2)
    end
  end
  local function get(k) if o[k] == nil then return defaults[k] end return o[k] end
  local size = get("size")
  local hdr = eth.size + ip4.size + M.size
  if type(size) ~= "number" or size < hdr or size > 9600 or size ~= math.floor(size) then
    error(("surge.proto.udp: size = %s outside %d..9600 bytes"):format(tostring(size), hdr), 2)
  end
  local ttl = get("ttl")
  if type(ttl) ~= "number" or ttl < 0 or ttl > 255 then
    error(("surge.proto.udp: ttl = %s outside 0..255"):format(tostring(ttl)), 2)
  end
  local src, dst = ip4.addr(get("src"), "surge.proto.udp: src"), ip4.addr(get("dst"), "surge.proto.udp: dst")
  local sport, dport = port_number(get("sport"), "sport"), port_number(get("dport"), "dport")
  local buf = ffi.new("uint8_t[?]", size)
  local payload = get("payload")
  if payload ~= nil then
    ffi.copy(buf + hdr, payload, math.min(#payload, size - hdr))
  end
  eth.write(buf, eth.mac(get("src_mac"), "surge.proto.udp: src_mac"),
            eth.mac(get("dst_mac"), "surge.proto.udp: dst_mac"), eth.TYPE_IP4)
  ip4.write(buf + eth.size, src, dst, ip4.PROTO_UDP, size - eth.size, ttl, get("id"))
  local u = buf + eth.size + ip4.size
  local ulen = size - eth.size - ip4.size
  u[0] = rshift(sport, 8); u[1] = band(sport, 0xff)
  u[2] = rshift(dport, 8); u[3] = band(dport, 0xff)
  u[4] = rshift(ulen, 8); u[5] = band(ulen, 0xff)
  u[6] = 0; u[7] = 0
  local c = cs.finish(cs.sum(u, ulen, ip4.pseudo_sum(src, dst, ip4.PROTO_UDP, ulen)))
  if c == 0 then c = 0xffff end
  u[6] = rshift(c, 8); u[7] = band(c, 0xff)
  return { bytes = ffi.string(buf, size), size = size, l3 = eth.size, l4 = eth.size + ip4.size }
end

-- Hot-loop setters on u (uint8_t * to the UDP header): keep the checksum valid.
function M.set_sport(u, v)
  local old = u[0] * 256 + u[1]
  u[0] = rshift(v, 8); u[1] = band(v, 0xff)
  cs.update16(u + 6, old, v, true)
end

function M.set_dport(u, v)
  local old = u[2] * 256 + u[3]
  u[2] = rshift(v, 8); u[3] = band(v, 0xff)
  cs.update16(u + 6, old, v, true)
end

function M.sport(u) return u[0] * 256 + u[1] end
function M.dport(u) return u[2] * 256 + u[3] end

setmetatable(M, { __call = template })

return M
