-- base/frames.lua - turn what a script's show(args) returns into frames to print.
--
-- show(args) may return a frame string, a template ({ bytes = ... }), a flow
-- (anything with a :frames(n) method returning a list of strings), or a
-- list of these (each contributes its frames in turn).
local get = require("surge.class").get   -- asks what v is: a handle's missing field is nil
local M = {}

local function what(v)
  if type(v) ~= "table" then return "a " .. type(v) end
  return next(v) == nil and "an empty list (no packets to show)" or "a table that is no frame, template, flow or list"
end

local function add(out, v, count, where)
  if #out >= count then return end
  if type(v) == "string" then
    out[#out + 1] = v
  elseif type(v) == "table" and type(get(v, "frames")) == "function" then
    for _, f in ipairs(v:frames(count - #out)) do out[#out + 1] = f end
  elseif type(v) == "table" and type(get(v, "bytes")) == "string" then
    out[#out + 1] = v.bytes
  elseif type(v) == "table" and #v > 0 then
    for _, x in ipairs(v) do add(out, x, count, where) end
  else
    error(("%sshow(args) returned %s: return a frame, a template, a flow or a list of them"):format(where or "",
      what(v)), 0)
  end
end

-- where: "FILE:LINE: " of the function that gave v (its return statement's
-- line is gone once it returned), nil at the prompt (its line is added there)
function M.frames(v, count, where)
  local out = {}
  add(out, v, count or 4, where)
  return out
end

return M
