-- class.lua - strict handle types: a misspelt field raises at the user's line.
--
--   local Port = class.new("port", { "id" })   -- type name, its fields
--   function Port:stats() ... end               -- methods as usual
--   setmetatable({ id = 0 }, Port)              -- a handle
--
-- A handle is a table (or, for bursts, cdata) whose metatable is its class:
-- a plain Lua `t.nosuch` would read nil and fail later, far away
-- (`b.lenght[i]`: "attempt to index a nil value" lines below the typo).
-- Here a read goes: the handle's own fields (raw, no metamethod), then the
-- class table (methods, still a plain table lookup the JIT folds), and only
-- when both miss, the class's own metatable: `miss` raises "port has no
-- field 'nosuch'" at the first frame outside surge. Known fields and
-- methods never reach a function, so the check costs nothing where the
-- code is right. Fields named in the list may be absent (an optional one
-- reads nil) and may be added later; a write of any other new key raises
-- the same way. Keys starting with "__" (metamethods, __handle) read nil
-- when absent: surge's own code asks a metatable for them.
local check = require("surge.check")

local M = {}

local function name_of(k)
  if type(k) == "string" then return ("'%s'"):format(k) end
  return check.show(k)
end

-- Raises "WHAT has no field 'K'" at the user's line (bursts call it too).
function M.unknown(what, k)
  check.raise(("%s has no field %s"):format(what, name_of(k)))
end

local function meta(k)
  return type(k) == "string" and k:sub(1, 2) == "__"
end

-- A class for handles named `what`, with the fields listed (a list of
-- names); `cls` an existing table to make the class (else a new one).
function M.new(what, fields, cls)
  cls = cls or {}
  local known = {}
  for _, f in ipairs(fields or {}) do known[f] = true end
  cls.__index = cls
  cls.__strict = what
  cls.__newindex = function(t, k, v)
    -- a declared field, or a method replaced on one handle (flow:apply)
    if known[k] or rawget(cls, k) ~= nil then rawset(t, k, v) return end
    M.unknown(what, k)
  end
  setmetatable(cls, { __index = function(_, k)
    if known[k] or meta(k) then return nil end
    M.unknown(what, k)
  end })
  return cls
end

-- v[k] for code that asks what a value is (the prompt showing a value,
-- `surge show` reading what show(args) returned): on a strict handle a
-- field it lacks reads nil there instead of raising; any other value is
-- indexed as usual (its own __index may raise: that is its error).
function M.get(v, k)
  local mt = getmetatable(v)
  if type(v) == "table" and type(mt) == "table" and rawget(mt, "__strict") then
    local x = rawget(v, k)
    if x == nil then x = rawget(mt, k) end
    return x
  end
  return v[k]
end

return M
