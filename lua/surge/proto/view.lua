-- view.lua - received-packet views: where a frame's headers are, and field
-- access by protocol field name, for hot loops over received bursts.
--
--   local view = require("surge.proto.view")
--   local v = view.new()                          -- one per loop, reused
--   local sport = view.field("udp.sport")         -- made once, outside the loop
--   for i = 0, burst.n - 1 do
--     if view.parse(v, burst.data[i], burst.len[i]) and v.proto == 17 then
--       local s = sport(v, burst.data[i])         -- nil when the frame has no UDP header
--     end
--   end
--
-- parse() skips any number of 802.1Q / 802.1ad tags (v.vlan is the outer VLAN
-- id, -1 when untagged) and fills v.ethertype, v.l3, v.proto (IP protocol /
-- IPv6 next header, -1 when not IP) and v.l4 (offsets from the frame's first
-- byte). Fields come from the protocol modules' own `fields` tables (the ones
-- flows vary), so no offset is written by hand. Nothing here allocates.
local bit = require("bit")

local band, rshift = bit.band, bit.rshift
local M = {}

local ETH_VLAN, ETH_QINQ, ETH_IP4, ETH_IP6, ETH_ARP = 0x8100, 0x88a8, 0x0800, 0x86dd, 0x0806
M.ETH_IP4, M.ETH_IP6, M.ETH_ARP = ETH_IP4, ETH_IP6, ETH_ARP

function M.new()
  return { len = 0, ethertype = -1, vlan = -1, tci = -1, l3 = -1, proto = -1, l4 = -1, l3_len = 0 }
end

-- Fills v from the frame at p (len bytes); false when it is shorter than an
-- Ethernet header.
function M.parse(v, p, len)
  v.len, v.vlan, v.tci, v.l3, v.proto, v.l4 = len, -1, -1, -1, -1, -1
  if len < 14 then v.ethertype = -1 return false end
  local off = 12
  local et = p[12] * 256 + p[13]
  while (et == ETH_VLAN or et == ETH_QINQ) and off + 6 <= len do
    if v.tci < 0 then
      v.tci = off + 2
      v.vlan = band(p[off + 2] * 256 + p[off + 3], 0x0fff)
    end
    off = off + 4
    et = p[off] * 256 + p[off + 1]
  end
  local l3 = off + 2
  v.ethertype, v.l3 = et, l3
  if et == ETH_IP4 and len >= l3 + 20 then
    local ihl = band(p[l3], 0x0f) * 4
    v.proto, v.l3_len = p[l3 + 9], ihl
    if ihl >= 20 and len >= l3 + ihl then v.l4 = l3 + ihl end
  elseif et == ETH_IP6 and len >= l3 + 40 then
    v.proto, v.l3_len, v.l4 = p[l3 + 6], 40, l3 + 40
  end
  return true
end

-- Which view offset each protocol's header starts at, and what must be true
-- of the frame for the header to be there.
local where = {
  eth = { base = "zero" }, vlan = { base = "tci" }, qinq = { base = "tci" },
  arp = { base = "l3", ethertype = ETH_ARP }, ip4 = { base = "l3", ethertype = ETH_IP4 },
  ip6 = { base = "l3", ethertype = ETH_IP6 },
  udp = { base = "l4", proto = 17 }, tcp = { base = "l4", proto = 6 },
  icmp = { base = "l4", proto = 1 }, icmp6 = { base = "l4", proto = 58 },
}

-- field("udp.sport") -> function(v, p): the field's value as a number (MACs as
-- a 48-bit number), or nil when the parsed frame does not hold that header.
function M.field(name, level)
  level = (level or 1) + 1
  local proto, fname = tostring(name):match("^(%w+)%.([%w_]+)$")
  local w = proto and where[proto]
  if not w then
    error(("view.field: '%s': give PROTOCOL.FIELD with a protocol of eth, vlan, arp, ip4, ip6, udp, "
      .. "tcp, icmp, icmp6"):format(tostring(name)), level)
  end
  local mod = require("surge.proto." .. proto)
  local f = mod.fields and mod.fields[fname]
  if not f then
    local known = {}
    for k in pairs(mod.fields or {}) do known[#known + 1] = k end
    table.sort(known)
    error(("view.field: %s has no field '%s' (%s)"):format(proto, fname, table.concat(known, ", ")), level)
  end
  local off, bytes, mask = f.off, f.bytes, f.mask
  local shift = 0
  if mask then while band(rshift(mask, shift), 1) == 0 do shift = shift + 1 end end
  local base, need_et, need_proto = w.base, w.ethertype, w.proto
  return function(v, p)
    local at
    if base == "zero" then at = 0
    elseif base == "tci" then at = v.tci
    elseif base == "l3" then at = (need_et == v.ethertype) and v.l3 or -1
    else at = (need_proto == v.proto) and v.l4 or -1 end
    if at < 0 or at + off + bytes > v.len then return nil end
    local x = 0
    for k = 0, bytes - 1 do x = x * 256 + p[at + off + k] end
    if mask then x = rshift(band(x, mask), shift) end
    return x
  end
end

return M
