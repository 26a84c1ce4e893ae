-- base/trace.lua - error reports that show the script's frames, not surge's.
--
-- A traceback made only of surge's own frames (a syntax error, a bad option)
-- says nothing the message doesn't: then the report is the message alone.
-- Errors raised with something other than a string (error(nil), error{...})
-- are described and given the position of the frame that raised them.
local check = require("surge.check")

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

local function ours(info)
  return info.what == "C" or check.is_surge_source(info.source)
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

-- The name the script gave fn: a global ("tx", "master"), else a field of
-- a module it loaded ("mylib.step"); nil for an anonymous function.
local function script_name_of(fn)
  for k, v in pairs(_G) do
    if v == fn and type(k) == "string" then return k end
  end
  for mod, t in pairs(package.loaded) do
    if type(t) == "table" and t ~= _G and type(mod) == "string" then
      for k, v in pairs(t) do
        if v == fn and type(k) == "string" then return mod .. "." .. k end
      end
    end
  end
  return nil
end

-- "in function 'NAME'" for a frame. LuaJIT names a frame by how its caller
-- called it: the variable or field it was called through. That is the
-- script's own name when the caller is the script's code; when the caller
-- is surge's (the task or master wrapper calls the task function through a
-- local `f`, a callback is called through an option's name) or C (pcall),
-- the name the script itself gave the function is looked up instead.
local function frame_name(info, caller)
  if info.what == "main" then return "main chunk" end
  local name = info.name
  if caller == nil or ours(caller) or info.namewhat == "" then name = script_name_of(info.func) end
  if name then return ("function '%s'"):format(name) end
  return ("function <%s:%d>"):format(info.short_src, info.linedefined)
end

local HEAD, TAIL = 10, 11   -- a deep stack (runaway recursion) shows its ends, as LuaJIT's own

-- Returns msg, followed by the traceback lines of the script's own frames,
-- from the frame that raised down (surge's and C frames are left out),
-- each with its function's name, the task function and master included.
function M.report(msg)
  msg = M.full(tostring(msg))
  local keep, level = {}, 2
  local info = debug.getinfo(level, "nSlf")
  while info do
    local caller = debug.getinfo(level + 1, "nSlf")
    if not ours(info) then
      local at = info.currentline > 0 and ("%s:%d:"):format(info.short_src, info.currentline)
        or info.short_src .. ":"
      keep[#keep + 1] = M.full(("\t%s in %s"):format(at, frame_name(info, caller)))
    end
    level, info = level + 1, caller
  end
  if #keep == 0 then return msg end
  if #keep > HEAD + TAIL + 1 then
    local n = #keep
    keep = { unpack(keep, 1, HEAD), "\t...", unpack(keep, n - TAIL + 1, n) }
  end
  return msg .. "\nstack traceback:\n" .. table.concat(keep, "\n")
end

return M
