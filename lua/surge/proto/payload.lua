-- payload.lua - what fills a frame after its headers.
--
--   nil / "zeros"   zero bytes
--   "inc"           0, 1, 2, ... 255, 0, 1, ...
--   "random"        pseudo-random bytes (fixed seed: the same template every run)
--   { random = SEED } random with this seed
--   any other string: repeated to fill the space
local ffi = require("ffi")
local bit = require("bit")

local M = {}

function M.fill(p, len, spec, level)
  level = (level or 1) + 1
  if len <= 0 then return end
  if spec == nil or spec == "zeros" then
    ffi.fill(p, len, 0)
  elseif spec == "inc" then
    for i = 0, len - 1 do p[i] = i % 256 end
  elseif spec == "random" or (type(spec) == "table" and spec.random) then
    local x = type(spec) == "table" and spec.random or 0x2545f491
    for i = 0, len - 1 do
      x = bit.bxor(x, bit.lshift(x, 13)); x = bit.bxor(x, bit.rshift(x, 17)); x = bit.bxor(x, bit.lshift(x, 5))
      p[i] = bit.band(x, 0xff)
    end
  elseif type(spec) == "string" and #spec > 0 then
    for i = 0, len - 1 do p[i] = spec:byte(i % #spec + 1) end
  else
    error(("payload = %s: use nil, \"zeros\", \"inc\", \"random\", { random = SEED } or a string"):format(
      tostring(spec)), level)
  end
end

return M
