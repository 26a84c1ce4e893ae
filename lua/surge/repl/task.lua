-- repl/task.lua - functions typed at the prompt, run as tasks.
--
-- A task runs in a fresh VM that loads the script, so a function typed at
-- the prompt has to travel: pack() turns it, and every other function typed
-- at the prompt (its helpers), into LuaJIT bytecode; load() rebuilds them in
-- the task's VM, where they see `surge`, the script's globals and each other.
-- Upvalues do not cross VMs: a function that uses a local of the chunk it
-- was typed in is refused with the name of that local (pass it as an
-- argument instead). Globals typed at the prompt that are not functions stay
-- in the master VM. Pools such a task makes are shared by default.
local surge = require("surge")
local pool = require("surge.pool")
local M = {}

local function upvalue(f)
  local name = debug.getupvalue(f, 1)
  return name
end

-- The prompt's functions as { name = ..., code = bytecode, helpers = { name = bytecode } }.
function M.pack(f, name, env)
  local up = upvalue(f)
  if up then
    error(("launch: %s uses '%s', a local from outside it; locals (upvalues) do not reach a task's VM: "
      .. "pass the value as an argument"):format(name == "?" and "the function" or name, up), 0)
  end
  local helpers = {}
  for k, v in pairs(env) do
    if type(k) == "string" and type(v) == "function" and v ~= f and not upvalue(v) then
      local info = debug.getinfo(v, "S")
      if info.source == "=prompt" then helpers[k] = string.dump(v) end
    end
  end
  return { name = name, code = string.dump(f), helpers = helpers }
end

function M.load(p)
  -- its pools are shared unless it says shared = false (see pool.lua)
  pool.share_by_default()
  local env = setmetatable({ surge = surge }, { __index = _G })
  for k, code in pairs(p.helpers) do env[k] = setfenv(assert(loadstring(code, "=prompt")), env) end
  return setfenv(assert(loadstring(p.code, "=prompt")), env)
end

return M
