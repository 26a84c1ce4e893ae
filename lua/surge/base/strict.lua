-- base/strict.lua - no accidental globals in scripts.
--
-- A script's top level may define globals (master, tx, configure, ...);
-- anywhere else, assigning an undeclared global or reading one is an error
-- with the caller's file:line, the classic strict.lua rule.
local M = {}

local function what(level)
  local info = debug.getinfo(level, "S")
  return info and info.what or "C"
end

function M.enable(G)
  G = G or _G
  local declared = {}
  local mt = getmetatable(G) or {}
  mt.__newindex = function(t, k, v)
    if not declared[k] then
      local w = what(3)
      if w ~= "main" and w ~= "C" then
        error(("assignment to undeclared global '%s' (use local)"):format(tostring(k)), 2)
      end
      declared[k] = true
    end
    rawset(t, k, v)
  end
  mt.__index = function(_, k)
    if not declared[k] and what(3) ~= "C" then
      error(("undefined global '%s'"):format(tostring(k)), 2)
    end
    return nil
  end
  setmetatable(G, mt)
end

return M
