-- args.lua - options a script declares in configure(parser).
--
--   function configure(p)
--     p:option("--size", "frame size in bytes", 60, "number")
--     p:flag("--verbose", "print every packet")
--   end
--
-- `surge run script.lua --help` lists them; unknown or malformed options are
-- a one-line error naming the option.
local M = {}
local Parser = {}
Parser.__index = Parser

function M.new(script)
  return setmetatable({ script = script, list = {}, by = {}, text = nil }, Parser)
end

local function key(name)
  return (name:gsub("^%-%-?", ""):gsub("%-", "_"))
end

local function add(self, name, help, default, kind)
  if type(name) ~= "string" or not name:match("^%-%-?[%w][%w%-]*$") then
    error(("option name '%s' must look like --name"):format(tostring(name)), 3)
  end
  local o = { name = name, help = help or "", default = default, kind = kind, key = key(name) }
  self.list[#self.list + 1] = o
  self.by[name] = o
  return self
end

-- kind: "string" (default), "number", "integer"
function Parser:option(name, help, default, kind)
  kind = kind or (type(default) == "number" and "number") or "string"
  if kind ~= "string" and kind ~= "number" and kind ~= "integer" then
    error(("option %s: kind must be string, number or integer"):format(name), 2)
  end
  add(self, name, help, default, kind)
  return self
end

function Parser:flag(name, help)
  add(self, name, help, false, "flag")
  return self
end

function Parser:description(text)
  self.text = text
  return self
end

function Parser:help()
  local out = { ("usage: surge run [surge options] %s [options]"):format(self.script) }
  if self.text then out[#out + 1] = "\n" .. self.text end
  out[#out + 1] = "\noptions:"
  for _, o in ipairs(self.list) do
    local left = o.kind == "flag" and o.name or (o.name .. " " .. o.kind:upper())
    local def = (o.kind ~= "flag" and o.default ~= nil) and (" (default " .. tostring(o.default) .. ")") or ""
    out[#out + 1] = ("  %-24s %s%s"):format(left, o.help, def)
  end
  out[#out + 1] = ("  %-24s %s"):format("--help", "this text")
  return table.concat(out, "\n")
end

local function convert(self, o, v)
  if o.kind == "string" then return v end
  local n = tonumber(v)
  if n == nil or (o.kind == "integer" and n ~= math.floor(n)) then
    error(("%s: option %s: expected %s, got '%s'"):format(self.script, o.name,
      o.kind == "integer" and "an integer" or "a number", v), 0)
  end
  return n
end

-- Returns the options table, or nil when --help was asked for (printed).
function Parser:parse(argv)
  local r = {}
  for _, o in ipairs(self.list) do r[o.key] = o.default end
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "--help" or a == "-h" then
      print(self:help())
      return nil
    end
    local name, val = a:match("^(%-%-?[^=]+)=(.*)$")
    name = name or a
    local o = self.by[name]
    if not o then
      error(("%s: unknown option '%s' (see: surge run %s --help)"):format(self.script, a, self.script), 0)
    end
    if o.kind == "flag" then
      if val then error(("%s: option %s takes no value"):format(self.script, name), 0) end
      r[o.key] = true
    else
      if not val then
        i = i + 1
        val = argv[i]
        if val == nil then error(("%s: option %s needs a value"):format(self.script, name), 0) end
      end
      r[o.key] = convert(self, o, val)
    end
    i = i + 1
  end
  return r
end

return M
