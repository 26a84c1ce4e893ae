-- serial.lua - pass plain data between LuaJIT VMs as Lua source text.
--
-- Tasks run in separate VMs, so arguments and results cross as text:
-- numbers, strings, booleans, nested tables, and surge handles (ports,
-- queues, pools), which travel as ids and are rebuilt on the other side.
local M = {}

local fmt, concat = string.format, table.concat

local function encode(v, out, seen, path)
  local t = type(v)
  if t == "nil" then out[#out + 1] = "nil"
  elseif t == "boolean" then out[#out + 1] = tostring(v)
  elseif t == "number" then
    if v ~= v then out[#out + 1] = "0/0"
    elseif v == math.huge then out[#out + 1] = "1/0"
    elseif v == -math.huge then out[#out + 1] = "-1/0"
    elseif v == math.floor(v) and math.abs(v) < 2^53 then out[#out + 1] = fmt("%d", v)
    else out[#out + 1] = fmt("%.17g", v) end
  elseif t == "string" then out[#out + 1] = fmt("%q", v)
  elseif t == "table" then
    local mt = getmetatable(v)
    if mt and mt.__handle then
      out[#out + 1] = mt.__handle(v)
      return
    end
    if seen[v] then error(("cannot pass %s: it contains a cycle"):format(path), 0) end
    seen[v] = true
    out[#out + 1] = "{"
    local n = #v
    for i = 1, n do
      encode(v[i], out, seen, path .. "[" .. i .. "]")
      out[#out + 1] = ","
    end
    for k, x in pairs(v) do
      local kt = type(k)
      if not (kt == "number" and k >= 1 and k <= n and k == math.floor(k)) then
        if kt ~= "string" and kt ~= "number" and kt ~= "boolean" then
          error(("cannot pass %s: table keys must be strings, numbers or booleans"):format(path), 0)
        end
        out[#out + 1] = "["
        encode(k, out, seen, path)
        out[#out + 1] = "]="
        encode(x, out, seen, path .. "." .. tostring(k))
        out[#out + 1] = ","
      end
    end
    out[#out + 1] = "}"
    seen[v] = nil
  else
    error(("cannot pass %s to or from a task: it is a %s (only numbers, strings, booleans, "
      .. "tables and surge handles cross between lcores)"):format(path, t), 0)
  end
end

-- Encodes a list of n values as a chunk returning them.
function M.encode(list, n)
  local out = { "return {n=", fmt("%d", n), "," }
  for i = 1, n do
    encode(list[i], out, {}, "argument " .. i)
    out[#out + 1] = ","
  end
  out[#out + 1] = "}"
  return concat(out)
end

-- Decodes text made by encode; `env` maps handle constructors to functions.
function M.decode(text, env)
  local chunk, err = loadstring(text, "=task data")
  if not chunk then error("corrupt task data: " .. err, 0) end
  setfenv(chunk, env or {})
  return chunk()
end

return M
