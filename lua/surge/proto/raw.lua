-- raw.lua - a layer of given bytes (OTG's custom header, or anything surge
-- has no module for), copied into the frame as they are.
--
--   surge.proto.stack{ L.eth{ type = 0x88b5 }, L.raw{ bytes = "\1\2\3\4" } }
--   L.raw{ hex = "01:02 03 04" }      -- the same; spaces and colons ignored
local ffi = require("ffi")
local stack = require("surge.proto.stack")

local M = {}

local allowed = { bytes = 1, hex = 1 }

-- "0a:0b 0c" -> "\10\11\12", or nil when it is not whole hex bytes
function M.unhex(h)
  if type(h) ~= "string" or h:find("[^%x: ]") then return nil end
  local d = h:gsub("[: ]", "")
  if #d == 0 or #d % 2 ~= 0 then return nil end
  return (d:gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end))
end

local function write(self, p)
  ffi.copy(p, self.bytes, #self.bytes)
end

function M.layer(o)
  o = o or {}
  stack.check_keys("raw", o, allowed, 2)
  local b = o.bytes
  if o.hex ~= nil then
    if b ~= nil then error("surge.proto.raw: give bytes or hex, not both", 2) end
    b = M.unhex(o.hex)
    if not b then error(("surge.proto.raw: hex = %q is not whole hex bytes"):format(tostring(o.hex)), 2) end
  end
  if type(b) ~= "string" or #b == 0 then error("surge.proto.raw: bytes = a non-empty string", 2) end
  return { name = "raw", len = #b, write = write, bytes = b }
end

function M.decode(p, len)
  return ("raw %d bytes"):format(len), nil, len
end

return M
