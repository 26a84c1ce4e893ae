-- arp.lua - ARP for IPv4 over Ethernet (RFC 826): 28 bytes after the
-- Ethernet header (ethertype 0x0806), and a ready-made frame.
--
--   surge.proto.arp{ op = "request", sha = "02:00:00:00:00:01", spa = "10.0.0.1",
--                    tpa = "10.0.0.2" }     -- broadcast who-has, padded to 60 bytes
--   surge.proto.arp{ op = "reply", sha = ..., spa = ..., tha = ..., tpa = ... }
--   surge.proto.stack{ L.eth{ dst = "ff:ff:ff:ff:ff:ff" }, L.arp{ op = 1, tpa = "10.0.0.9" } }
--
-- op: 1 or "request", 2 or "reply" (any 0..65535 as a number). ARP has no checksum.
local ffi = require("ffi")
local eth = require("surge.proto.eth")
local ip4 = require("surge.proto.ip4")
local stack = require("surge.proto.stack")
local vlan = require("surge.proto.vlan")
local check = require("surge.check")

local M = { size = 28, REQUEST = 1, REPLY = 2 }

M.fields = { op = { off = 6, bytes = 2 }, sha = { off = 8, bytes = 6 }, spa = { off = 14, bytes = 4 },
             tha = { off = 18, bytes = 6 }, tpa = { off = 24, bytes = 4 },
             htype = { off = 0, bytes = 2 }, ptype = { off = 2, bytes = 2 }, hlen = { off = 4, bytes = 1 },
             plen = { off = 5, bytes = 1 } }

local ops = { request = 1, reply = 2 }
local op_names = { [1] = "request", [2] = "reply", [3] = "rarp-request", [4] = "rarp-reply" }

-- "request" -> 1, "reply" -> 2, a number 0..65535 passes.
function M.op(v, what, level)
  level = (level or 2) + 1
  if type(v) == "string" and ops[v] then return ops[v] end
  if type(v) == "number" then
    local op = stack.int("arp", "op", v, 0, 65535, level)
    return op
  end
  error(("%s = %s: use \"request\", \"reply\" or a number 0..65535"):format(what,
    type(v) == "string" and ("'" .. v .. "'") or tostring(v)), level)
end

-- Writes the ARP packet at p: sha/tha 6-byte strings, spa/tpa numbers.
function M.write(p, op, sha, spa, tha, tpa)
  stack.put16(p, 1)             -- hardware type: Ethernet
  stack.put16(p + 2, 0x0800)    -- protocol type: IPv4
  p[4], p[5] = 6, 4             -- address lengths
  stack.put16(p + 6, op)
  ffi.copy(p + 8, sha, 6)
  stack.put32(p + 14, spa)
  ffi.copy(p + 18, tha, 6)
  stack.put32(p + 24, tpa)
end

local allowed = { op = 1, sha = 1, spa = 1, tha = 1, tpa = 1 }

local function write(self, p)
  M.write(p, self.op, self.sha, self.spa, self.tha, self.tpa)
end

-- Defaults: a request from 02:00:00:00:00:01 / 10.0.0.1 for 10.0.0.2 (tha zero).
function M.layer(o)
  o = o or {}
  stack.check_keys("arp", o, allowed, 2)
  return { name = "arp", len = 28, ethertype = 0x0806, write = write,
           op = M.op(o.op or 1, "surge.proto.arp: op", 2),
           sha = eth.mac(o.sha or "02:00:00:00:00:01", "surge.proto.arp: sha", 2),
           spa = ip4.addr(o.spa or "10.0.0.1", "surge.proto.arp: spa", 2),
           tha = eth.mac(o.tha or "00:00:00:00:00:00", "surge.proto.arp: tha", 2),
           tpa = ip4.addr(o.tpa or "10.0.0.2", "surge.proto.arp: tpa", 2) }
end

local flat_allowed = { op = 1, sha = 1, spa = 1, tha = 1, tpa = 1, src_mac = 1, dst_mac = 1, vlan = 1,
                       size = 1, payload = 1 }

local function build(o)
  stack.check_keys("arp", o, flat_allowed, 1)
  local op = M.op(o.op or 1, "surge.proto.arp: op")
  for _, k in ipairs({ "src_mac", "dst_mac" }) do
    if o[k] ~= nil then eth.mac(o[k], "surge.proto.arp: " .. k) end
  end
  local sha = o.sha or o.src_mac or "02:00:00:00:00:01"
  local tha = o.tha or (op == 2 and (o.dst_mac or "02:00:00:00:00:02")) or "00:00:00:00:00:00"
  local layers = { eth.layer{ src = o.src_mac or sha,
                              dst = o.dst_mac or (op == 1 and "ff:ff:ff:ff:ff:ff" or tha) } }
  if o.vlan ~= nil then
    local v = o.vlan
    if type(v) == "number" then v = { id = v } end
    if type(v) ~= "table" then error("surge.proto.arp: vlan must be a VLAN id or { id = ..., pcp = ... }", 0) end
    layers[#layers + 1] = vlan.layer(v)
  end
  layers[#layers + 1] = M.layer{ op = op, sha = sha, spa = o.spa, tha = tha, tpa = o.tpa }
  layers.size, layers.payload = o.size, o.payload
  return stack.build(layers)
end

-- surge.proto.arp{...}: Ethernet [/VLAN]/ARP. src_mac defaults to sha (and
-- sha to src_mac); a request goes to ff:ff:ff:ff:ff:ff with tha zero, a
-- reply to tha (default 02:00:00:00:00:02, or dst_mac when given).
local function frame(_, o)
  check.expect(o, "table?", "surge.proto.arp", "fields")
  local ok, t = pcall(build, o or {})
  if not ok then check.raise((tostring(t):gsub("^[^\n:]+:%d+: ", ""))) end
  return t
end
setmetatable(M, { __call = frame })

-- Hot-loop setters on a (uint8_t * to the ARP packet); ARP has no checksum.
function M.set_spa(a, v) stack.put32(a + 14, v) end
function M.set_tpa(a, v) stack.put32(a + 24, v) end
stack.setters(M, "arp", { set_spa = { "a", "integer 0..4294967295" }, set_tpa = { "a", "integer 0..4294967295" } })
function M.spa(a) return stack.get32(a + 14) end
function M.tpa(a) return stack.get32(a + 24) end

function M.decode(p, len)
  if len < 8 then return "arp (truncated)", nil, len end
  local htype, ptype, op = stack.get16(p), stack.get16(p + 2), stack.get16(p + 6)
  local name = op_names[op] or ("op " .. op)
  if htype ~= 1 or ptype ~= 0x0800 or p[4] ~= 6 or p[5] ~= 4 or len < 28 then
    return ("arp %s htype %d ptype 0x%04x hlen %d plen %d"):format(name, htype, ptype, p[4], p[5]), nil,
      math.min(len, 8 + 2 * (p[4] + p[5]))
  end
  return ("arp %s sha %s spa %s tha %s tpa %s"):format(name, eth.mac_text(p + 8),
    ip4.addr_text(stack.get32(p + 14)), eth.mac_text(p + 18), ip4.addr_text(stack.get32(p + 24))), nil, 28
end

stack.readers(M, "arp", { "spa", "tpa" })

return M
