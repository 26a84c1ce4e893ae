-- addrs.lua - a set of addresses of one family, written as one address,
-- a range "10.1.0.2-10.1.0.65" (IPv6: "2001:db8::2-2001:db8::41", the two
-- ends differing in their last 32 bits only), or a list of those
-- ({ "10.1.0.2", "10.1.0.9-10.1.0.12" }). One parser for every option that
-- takes several addresses (surge.conn.client's src, surge.dut.neigh's ip4 and
-- ip6), so they read the same text the same way.
--
--   local list, v6 = addrs.list("10.1.0.2-10.1.0.5", "surge.conn.client: src", 4096)
--   --> { 0x0a010002, 0x0a010003, 0x0a010004, 0x0a010005 }, false
--   (IPv6: 16-byte strings)
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")
local check = require("surge.check")

local M = {}

local function low32(b)
  return ((b:byte(13) * 256 + b:byte(14)) * 256 + b:byte(15)) * 256 + b:byte(16)
end

local function with_low32(b, v)
  return b:sub(1, 12) .. string.char(math.floor(v / 16777216) % 256, math.floor(v / 65536) % 256,
    math.floor(v / 256) % 256, v % 256)
end

-- One address's text parsed (ip4.addr's number, ip6.addr's bytes); its
-- error raised at the user's line whatever the depth of the call (a tail
-- call leaves no frame for a fixed level to count)
local function parse(text, v6, what)
  local ok, v = pcall(v6 and ip6.addr or ip4.addr, text, what, 1)
  if not ok then check.raise((tostring(v):gsub("^[^:]*:%d+: ", ""))) end
  return v
end

-- A station's address: not unspecified, multicast or (IPv4) broadcast
-- (v: ip4.addr's number, or the IPv6 prefix (12 bytes) and its last 32 bits)
local function station(v, prefix, what, text)
  local bad
  if prefix then
    bad = prefix:byte(1) == 0xff and "a multicast address" or prefix == ("\0"):rep(12) and v == 0 and "unspecified"
  else
    bad = v == 0 and "unspecified" or v == 0xffffffff and "the broadcast address" or v >= 0xe0000000 and v < 0xf0000000
      and "a multicast address"
  end
  if bad then
    check.raise(("%s: '%s': %s is %s, no station's address"):format(what, text,
      prefix and ip6.addr_text(with_low32(prefix .. "\0\0\0\0", v)) or ip4.addr_text(v), bad))
  end
end

-- One item ("A" or "A-B") appended to out; returns its family (true: IPv6).
local function item(out, text, what, max)
  check.expect(text, "string", what, "address")
  local a, b = text:match("^%s*([^%s]-)%s*%-%s*([^%s]+)%s*$")
  a = a or text
  local v6 = a:find(":", 1, true) ~= nil
  local lo = parse(a, v6, what)
  local hi = lo
  if b then
    if (b:find(":", 1, true) ~= nil) ~= v6 then
      check.raise(("%s: '%s': the two ends are not of one family"):format(what, text))
    end
    hi = parse(b, v6, what)
    if v6 and hi:sub(1, 12) ~= lo:sub(1, 12) then
      check.raise(("%s: '%s': an IPv6 range may differ in its last 32 bits only"):format(what, text))
    end
  end
  local l, h = v6 and low32(lo) or lo, v6 and low32(hi) or hi
  if h < l then check.raise(("%s: '%s': the range ends before it starts"):format(what, text)) end
  if #out + (h - l + 1) > max then
    check.raise(("%s: '%s': more than %d addresses"):format(what, text, max))
  end
  local prefix = v6 and lo:sub(1, 12) or nil
  for v = l, h do
    if v == l or v == h or not v6 and v == 0xe0000000 then station(v, prefix, what, text) end
    out[#out + 1] = v6 and with_low32(lo, v) or v
  end
  return v6
end

-- spec: a string (one address or a range) or a list of them. Returns the
-- addresses in the order given (IPv4: numbers, host order; IPv6: 16-byte
-- strings) and true for IPv6; raises, naming `what`, on a bad address, a
-- mixed family, a repeated address or more than `max`.
function M.list(spec, what, max)
  local out, v6 = {}, nil
  max = max or 65536
  local items = type(spec) == "table" and spec or { spec }
  if #items == 0 then check.raise(("%s: an empty list of addresses"):format(what)) end
  -- a list, nothing else: a hole or a key would be an address skipped unsaid
  for k in pairs(items) do
    if type(k) ~= "number" or k < 1 or k > #items or k ~= math.floor(k) then
      check.raise(("%s: expected a list of addresses (keys 1..%d), got the key %s"):format(what, #items, check.show(k)))
    end
  end
  for k = 1, #items do
    if items[k] == nil then check.raise(("%s: expected a list of addresses, got a hole at [%d]"):format(what, k)) end
  end
  for _, text in ipairs(items) do
    local six = item(out, text, what, max)
    if v6 ~= nil and six ~= v6 then
      check.raise(("%s: '%s' is not of the family of the addresses before it"):format(what, text))
    end
    v6 = six
  end
  local seen = {}
  for _, a in ipairs(out) do
    if seen[a] then
      check.raise(("%s: %s is given twice"):format(what, v6 and ip6.addr_text(a) or ip4.addr_text(a)))
    end
    seen[a] = true
  end
  return out, v6
end

-- The list as text, one address at each end of a range: "10.1.0.2-10.1.0.65 (64 addresses)".
function M.text(list, v6)
  local t = v6 and ip6.addr_text or ip4.addr_text
  if #list == 1 then return t(list[1]) end
  return ("%s-%s (%d addresses)"):format(t(list[1]), t(list[#list]), #list)
end

-- Packs the list into bytes, network order (4 or 16 per address).
function M.pack(list, v6)
  if v6 then return table.concat(list) end
  local b = {}
  for i, a in ipairs(list) do
    b[i] = string.char(math.floor(a / 16777216) % 256, math.floor(a / 65536) % 256, math.floor(a / 256) % 256, a % 256)
  end
  return table.concat(b)
end

return M
