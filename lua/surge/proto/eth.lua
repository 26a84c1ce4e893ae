-- eth.lua - Ethernet II header (14 bytes).
local ffi = require "ffi"
local M = { size = 14, TYPE_IP4 = 0x0800, TYPE_ARP = 0x0806, TYPE_VLAN = 0x8100, TYPE_IP6 = 0x86dd }

-- "02:00:00:00:00:01" -> 6-byte string; error names the bad text.
function M.mac(s, what)
  if type(s) ~= "string" then error(("%s: MAC address must be a string"):format(what), 3) end
  local b = { s:match("^(%x%x)[:-](%x%x)[:-](%x%x)[:-](%x%x)[:-](%x%x)[:-](%x%x)$") }
  if #b ~= 6 then error(("%s: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)"):format(what, s), 3) end
  for i = 1, 6 do b[i] = string.char(tonumber(b[i], 16)) end
  return table.concat(b)
end

-- Writes the header at p (uint8_t *).
function M.write(p, src, dst, ethertype)
  ffi.copy(p, dst, 6)
  ffi.copy(p + 6, src, 6)
  p[12] = math.floor(ethertype / 256)
  p[13] = ethertype % 256
end

return M
