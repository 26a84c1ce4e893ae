-- otg/schema.lua - the checker behind otg/model.lua: a JSON value against a
-- schema of plain tables, every problem collected with its JSON path
-- (`flows[0].rate.pps: ...`), defaults filled in as the OTG model gives them.
--
-- Schema nodes:
--   { t = "object", fields = { NAME = node }, required = { NAME, ... },
--     refused = { NAME = true } }         NAME is the model's, surge does not do it
--   { t = "choice", default = C, choices = { C = node | false }, fields = {...} }
--                                          an object with a `choice`; false: the
--                                          model's choice, not surge's
--   { t = "array", items = node, max = N }
--   { t = "string", max = N }  { t = "bool" }  { t = "enum", values = { ... } }
--   { t = "int", min = A, max = B }       int64s may come as decimal text (snappi sends them so)
--   { t = "any" }                          as it is: another module checks it (a flow's packet and size)
--   { t = "number", min = A, max = B }
--   any node: valid = fn(v) -> nil or why not, default = V (filled when
--   absent), only = V (the one value surge
--   honours: the model's default; another is refused by name)
local M = {}

local NOT_IMPL = "not implemented by surge"
M.NOT_IMPL = NOT_IMPL

local function is_array(v)
  return type(v) == "table" and getmetatable(v) ~= nil and getmetatable(v).__json == "array"
end

local function is_object(v)
  return type(v) == "table" and not is_array(v) and (getmetatable(v) == nil or getmetatable(v).__json == nil)
end

local function show(v)
  if type(v) == "string" then return ("'%s'"):format(#v > 40 and v:sub(1, 40) .. "..." or v) end
  if type(v) == "table" then return is_array(v) and "an array" or (is_object(v) and "an object" or "null") end
  return tostring(v)
end

local function join(path, k)
  if type(k) == "number" then return ("%s[%d]"):format(path, k) end
  if path == "" then return k end
  return path .. "." .. k
end

local check

local function int_of(v)
  if type(v) == "string" and v:match("^%-?%d+$") and #v <= 20 then v = tonumber(v) end
  if type(v) ~= "number" or v ~= math.floor(v) or v ~= v then return nil end
  return v
end

-- Returns the checked value (defaults filled), adding to errs.
function check(node, v, path, errs)
  local t = node.t
  if t == "object" or t == "choice" then
    if not is_object(v) then
      errs[#errs + 1] = ("%s: expected an object, got %s"):format(path, show(v))
      return nil
    end
    local out = {}
    local fields = node.fields or {}
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    local chosen
    if t == "choice" then
      chosen = v.choice
      if chosen == nil then chosen = node.default end
      if chosen == nil then
        errs[#errs + 1] = ("%s.choice: required"):format(path)
        return nil
      end
      if type(chosen) ~= "string" or node.choices[chosen] == nil then
        local names = {}
        for c in pairs(node.choices) do names[#names + 1] = c end
        table.sort(names)
        errs[#errs + 1] = ("%s.choice: %s is not one of %s"):format(path, show(chosen), table.concat(names, ", "))
        return nil
      end
      if node.choices[chosen] == false then
        errs[#errs + 1] = ("%s: %s"):format(join(path, chosen), NOT_IMPL)
        return nil
      end
      out.choice = chosen
    end
    for _, k in ipairs(keys) do
      local sub = join(path, k)
      if t == "choice" and k == "choice" then -- luacheck: ignore 542
      elseif t == "choice" and node.choices[k] ~= nil then
        if k == chosen and node.choices[k] ~= true then out[k] = check(node.choices[k], v[k], sub, errs)
        elseif k == chosen then out[k] = v[k] end
        -- a property of a choice not taken: the model's clients send none; ignored as the model says
      elseif fields[k] then
        out[k] = check(fields[k], v[k], sub, errs)
      elseif node.refused and node.refused[k] then
        errs[#errs + 1] = ("%s: %s"):format(sub, NOT_IMPL)
      else
        errs[#errs + 1] = ("%s: unknown field (not in the OTG 1.3.0 model)"):format(sub)
      end
    end
    for _, r in ipairs(node.required or {}) do
      if v[r] == nil then errs[#errs + 1] = ("%s: required"):format(join(path, r)) end
    end
    for k, f in pairs(fields) do
      if out[k] ~= nil or v[k] ~= nil then -- luacheck: ignore 542
      elseif (f.t == "choice" and f.default ~= nil) or (f.t == "object" and not f.required) then
        out[k] = check(f, {}, join(path, k), errs)    -- an absent object: its defaults
      elseif f.t ~= "choice" and f.default ~= nil then
        out[k] = f.default
      end
    end
    if t == "choice" and out[chosen] == nil and type(node.choices[chosen]) == "table" then
      local c = node.choices[chosen]
      if c.default ~= nil then out[chosen] = c.default
      elseif c.t == "object" or c.t == "choice" then out[chosen] = check(c, {}, join(path, chosen), errs) end
    end
    return out
  elseif t == "array" then
    if not is_array(v) and not (is_object(v) and next(v) == nil) then
      errs[#errs + 1] = ("%s: expected an array, got %s"):format(path, show(v))
      return nil
    end
    if node.max and #v > node.max then
      errs[#errs + 1] = ("%s: %d items, surge takes at most %d"):format(path, #v, node.max)
      return nil
    end
    local out = setmetatable({}, { __json = "array" })
    for i = 1, #v do out[i] = check(node.items, v[i], join(path, i - 1), errs) end
    return out
  end
  local out
  if t == "any" then return v end   -- checked by its own reader (otg/packet.lua: packet, size)
  if t == "string" then
    if type(v) ~= "string" then errs[#errs + 1] = ("%s: expected a string, got %s"):format(path, show(v)) return nil end
    if node.max and #v > node.max then
      errs[#errs + 1] = ("%s: longer than %d characters"):format(path, node.max) return nil
    end
    out = v
  elseif t == "bool" then
    if type(v) ~= "boolean" then errs[#errs + 1] = ("%s: expected true or false, got %s"):format(path, show(v)) return nil end
    out = v
  elseif t == "enum" then
    local ok = false
    for _, e in ipairs(node.values) do if v == e then ok = true end end
    if not ok then
      errs[#errs + 1] = ("%s: %s is not one of %s"):format(path, show(v), table.concat(node.values, ", "))
      return nil
    end
    out = v
  elseif t == "int" or t == "number" then
    local x = t == "int" and int_of(v) or (type(v) == "number" and v == v and v) or nil
    if x == nil then
      errs[#errs + 1] = ("%s: expected %s, got %s"):format(path, t == "int" and "an integer" or "a number", show(v))
      return nil
    end
    if (node.min and x < node.min) or (node.max and x > node.max) then
      errs[#errs + 1] = ("%s: %s outside %s..%s"):format(path, tostring(x), tostring(node.min or "-inf"),
        tostring(node.max or "inf"))
      return nil
    end
    out = x
  else
    error("otg.schema: bad node type " .. tostring(t))
  end
  if node.valid then
    local why = node.valid(out)
    if why then errs[#errs + 1] = ("%s: %s %s"):format(path, show(out), why) return nil end
  end
  if node.only ~= nil and out ~= node.only then
    errs[#errs + 1] = ("%s: %s: surge implements only %s (the model's default)"):format(path, show(out), show(node.only))
    return nil
  end
  return out
end

-- Checks v against node; returns the value with defaults, or nil and the
-- list of errors (each "PATH: why").
function M.check(node, v, path)
  local errs = {}
  local out = check(node, v, path or "", errs)
  if #errs > 0 then return nil, errs end
  return out
end

M.is_array, M.is_object = is_array, is_object

return M
