-- vm/trace.lua - error reports that show the script's frames, not surge's.
--
-- A traceback made only of surge's own frames (a syntax error, a bad option)
-- says nothing the message doesn't: then the report is the message alone.
-- Errors raised with something other than a string (error(nil), error{...})
-- are described and given the position of the frame that raised them.
local check = require "surge.check"

local M = {}

-- LuaJIT shortens a chunk name longer than 60 characters to "...<its end>"
-- in error positions and tracebacks. The script's own name is put back
-- whole, so an error names the file as the user gave it.
local function script_name()
  local s = package.loaded["surge.script"]
  local name = type(s) == "table" and s.name or nil
  return type(name) == "string" and name:gsub("^@", "") or nil
end

function M.full(text)
  local name = script_name()
  if name == nil or #name < 57 then return text end
  return (text:gsub("%.%.%.([^\n:]+):", function(tail)
    if #tail < #name and name:sub(-#tail) == tail then return name .. ":" end
  end))
end

local function ours(line)
  return line:find("/lua/surge/", 1, true) or line:find("%[C%]") or line:find("^%s*%(tail call%)")
      or line:find("^%s*%.%.%.") or line:find("^%s*surge%.")
end

-- "file:line: " of the first script frame below the message handler (the
-- one that raised), or "" when there is none.
local function position()
  for level = 3, 200 do
    local info = debug.getinfo(level, "Sl")
    if info == nil then break end
    if info.what ~= "C" and not check.is_surge_source(info.source) and info.currentline > 0 then
      return M.full(("%s:%d: "):format(info.short_src, info.currentline))
    end
  end
  return ""
end

local function preview(t)
  local parts, n = {}, 0
  for k, v in pairs(t) do
    n = n + 1
    if n > 4 then parts[#parts + 1] = "..."; break end
    parts[#parts + 1] = ("%s = %s"):format(type(k) == "string" and k or "[" .. check.show(k) .. "]", check.show(v))
  end
  return "{ " .. table.concat(parts, ", ") .. (n > 0 and " }" or "}")
end

-- The text of any error value. Call it from the message handler itself (the
-- position is looked up from there).
function M.message(e)
  if type(e) == "string" then return M.full(e) end
  if type(e) == "number" then return tostring(e) end
  local mt = getmetatable(e)
  local broken   -- a __tostring that fails or gives no string: say so, not "error in error handling"
  if type(e) == "table" and type(mt) == "table" and mt.__tostring then
    local ok, text = pcall(tostring, e)
    if ok and type(text) == "string" then return text end
    broken = ok and ("its __tostring gave " .. check.show(text)) or ("its __tostring failed: " .. (type(text) == "string" and text or check.show(text)))
  end
  local what = e == nil and "error raised with no message (nil)"
    or broken and ("error raised with a table (%s): %s"):format(broken, preview(e))
    or type(e) == "table" and "error raised with a table: " .. preview(e)
    or "error raised with " .. check.show(e)
  return position() .. what
end

-- Returns msg, followed by the traceback lines that are the script's own,
-- from the frame that raised down (surge's and C frames are left out).
function M.report(msg)
  msg = M.full(tostring(msg))
  local tb = M.full(debug.traceback("", 1))
  local keep = {}
  for line in tb:gmatch("[^\n]+") do
    if line:find("^%s") and not ours(line) then keep[#keep + 1] = line end
  end
  if #keep == 0 then return msg end
  return msg .. "\nstack traceback:\n" .. table.concat(keep, "\n")
end

return M
