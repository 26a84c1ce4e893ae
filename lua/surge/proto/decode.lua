-- decode.lua - a frame as readable text, one layer per part:
--   "eth 02:..:01 > 02:..:02 type 0x0800 | ip4 10.0.0.1 > 10.0.0.2 proto 17 ... csum ok | udp ..."
-- Checksums are verified. Unknown protocols end the chain with "data N bytes".
local ffi = require("ffi")
local check = require("surge.check")

local M = {}

local by_ethertype = { [0x0800] = "ip4", [0x86dd] = "ip6", [0x0806] = "arp", [0x8100] = "vlan",
                       [0x88a8] = "qinq", [0x8847] = "mpls", [0x6558] = "eth",
                       [0x8808] = "pause", [0x880b] = "ppp" }
local by_ipproto = { [1] = "icmp", [2] = "igmp", [6] = "tcp", [17] = "udp", [58] = "icmp6", [47] = "gre",
                     [4] = "ip4", [41] = "ip6" }
local by_udpport = { [4789] = "vxlan", [2152] = "gtpv1", [2123] = "gtpv2" }

local function next_kind(info)
  if not info then return nil end
  if info.kind then return info.kind end
  if info.ethertype then return by_ethertype[info.ethertype] end
  if info.ipproto then return by_ipproto[info.ipproto] end
  if info.udpport then return by_udpport[info.udpport] end
  return nil
end

-- data and len as decode and hex take them: a string (len up to its
-- length, all of it by default), a uint8_t[N] buffer (len up to N), or a
-- pointer with len. Returns the bytes as a const uint8_t * and len.
local function bytes(data, len, fn)
  if type(data) == "string" then
    check.expect(len, "integer? 0.." .. #data, fn, "len (at most the string's length)")
    return ffi.cast("const uint8_t *", data), len or #data
  end
  check.expect(data, "pointer", fn, "data (a string or a packet's bytes)")
  local size = ffi.sizeof(data)   -- an array's size; a pointer's is its own
  if ffi.istype("uint8_t *", data) or size == nil then
    check.expect(len, "integer 0..2147483647", fn, "len")
  else
    check.expect(len, "integer? 0.." .. size, fn, "len (at most the buffer's size)")
  end
  return ffi.cast("const uint8_t *", data), len or size
end

-- data: a string, or a uint8_t * with len. Returns one line of text.
function M.decode(data, len)
  local p
  p, len = bytes(data, len, "surge.proto.decode")
  local parts, off, kind, ctx = {}, 0, "eth", {}
  local ends = len     -- where the outermost IP packet ends: Ethernet padding after it
  while kind and off < len do
    local ok, mod = pcall(require, "surge.proto." .. kind)
    if not ok or not mod.decode then break end
    local text, info, hlen = mod.decode(p + off, len - off, ctx)
    parts[#parts + 1] = text
    if info and info.ip then
      if not ctx.ip and info.ip.payload and off + (hlen or 0) + info.ip.payload < len then
        ends = math.max(off + (hlen or 0) + info.ip.payload, 0)
      end
      ctx.ip = info.ip
    end
    off = off + (hlen or len)
    kind = next_kind(info)
  end
  if off < ends then parts[#parts + 1] = ("data %d bytes"):format(ends - off) end
  if ends < len and off <= ends then parts[#parts + 1] = ("padding %d bytes"):format(len - ends) end
  return table.concat(parts, " | ")
end

-- Hex dump, 16 bytes a line.
function M.hex(data, len)
  local p
  p, len = bytes(data, len, "surge.proto.hex")
  local out = {}
  for row = 0, len - 1, 16 do
    local b = {}
    for i = row, math.min(row + 15, len - 1) do b[#b + 1] = ("%02x"):format(p[i]) end
    out[#out + 1] = ("%04x  %s"):format(row, table.concat(b, " "))
  end
  return table.concat(out, "\n")
end

return M
