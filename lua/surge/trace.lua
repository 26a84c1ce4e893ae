-- trace.lua - error reports that show the script's frames, not surge's.
--
-- A traceback made only of surge's own frames (a syntax error, a bad option)
-- says nothing the message doesn't: then the report is the message alone.
local M = {}

local function ours(line)
  return line:find("/lua/surge/", 1, true) or line:find("%[C%]") or line:find("^%s*%(tail call%)")
      or line:find("^%s*%.%.%.")
end

-- Returns msg, followed by the traceback lines that are the script's own.
function M.report(msg, level)
  msg = tostring(msg)
  local tb = debug.traceback("", (level or 1) + 1)
  local keep = {}
  for line in tb:gmatch("[^\n]+") do
    if line:find("^%s") and not ours(line) then keep[#keep + 1] = line end
  end
  if #keep == 0 then return msg end
  return msg .. "\nstack traceback:\n" .. table.concat(keep, "\n")
end

return M
