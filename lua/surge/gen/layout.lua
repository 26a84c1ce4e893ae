-- gen/layout.lua - where a template's layers and checksums lie: the
-- analysis the generators of surge.flow and surge.size start from.
local M = {}

local FRAME_END = math.huge
local aliases = { qinq = "vlan" }   -- modules whose fields are another's

local function module_of(name)
  local ok, mod = pcall(require, "surge.proto." .. name)
  if not ok or type(mod) ~= "table" then return nil end
  if mod.fields == nil and aliases[name] then
    local ok2, alt = pcall(require, "surge.proto." .. aliases[name])
    if ok2 and type(alt) == "table" and alt.fields then
      return setmetatable({ fields = alt.fields }, { __index = mod })
    end
  end
  return mod
end

local function has_pseudo(mod)
  if not mod or not mod.fields then return false end
  for _, f in pairs(mod.fields) do if f.pseudo then return true end end
  return false
end

-- plan(t): { layers = { {name, off, len, mod} }, checksums = { ... }, hdr = header bytes }
-- A checksum: { at = offset of its 16-bit field, zero_none, kind = "header"|"l4",
--   ranges = { { from, to, base } }: bytes it covers (to exclusive, FRAME_END for
--   the end of the frame), base: where its 16-bit words start (parity),
--   pseudo_len = true when the pseudo header holds the L4 length (frame end - l4off),
--   l4off }
function M.plan(t, who)
  who = who or "surge.flow"
  if type(t) ~= "table" or type(t.bytes) ~= "string" or type(t.layers) ~= "table" then
    error(who .. ": template must come from surge.proto (a table with bytes and layers)", 0)
  end
  local layers, checksums, hdr = {}, {}, 0
  for i, l in ipairs(t.layers) do
    layers[i] = { name = l.name, off = l.off, len = l.len, mod = module_of(l.name) }
    hdr = math.max(hdr, l.off + l.len)
  end
  for i, l in ipairs(layers) do
    local mod = l.mod
    if mod and mod.header_checksum then
      checksums[#checksums + 1] = { at = l.off + mod.header_checksum, zero_none = false, kind = "header",
                                    name = l.name, ranges = { { l.off, l.off + l.len, l.off } } }
    end
    if mod and mod.checksum then
      local c = { at = l.off + mod.checksum, zero_none = mod.checksum_zero_none and true or false,
                  kind = "l4", name = l.name, l4off = l.off, ranges = { { l.off, FRAME_END, l.off } } }
      local ip = layers[i - 1]
      -- the pseudo header of the IP layer right before (not for ICMPv4, which has none)
      if ip and has_pseudo(ip.mod) and mod.pseudo_header ~= false and l.name ~= "icmp" then
        for _, f in pairs(ip.mod.fields) do
          if f.pseudo then c.ranges[#c.ranges + 1] = { ip.off + f.off, ip.off + f.off + f.bytes, ip.off } end
        end
        c.pseudo_len = true
      end
      checksums[#checksums + 1] = c
    end
  end
  -- innermost (highest offset) first: an outer checksum may cover an inner one's field
  table.sort(checksums, function(a, b) return a.at > b.at end)
  return { layers = layers, checksums = checksums, hdr = hdr, size = t.size, bytes = t.bytes }
end

-- Parity (0: the first byte is a high byte) of bytes [off, off+n) in a
-- checksum's words, or nil when the checksum does not cover them.
function M.covers(c, off, n)
  if off == c.at then return nil end
  for _, r in ipairs(c.ranges) do
    if off >= r[1] and off + n <= r[2] then return (off - r[3]) % 2 end
  end
  return nil
end

return M
