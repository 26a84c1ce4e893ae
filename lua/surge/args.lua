-- args.lua - options a script declares in configure(parser).
--
--   function configure(p)
--     p:option("--size", "frame size in bytes", 60, "number")
--     p:flag("--verbose", "print every packet")
--   end
--
-- `surge run script.lua --help` lists them; unknown or malformed options are
-- a one-line error naming the option (an OptionError: surge exits 2, and
-- `surge run` reports it before EAL starts). A kind may carry a range in
-- surge.check's spec language: "integer 1..256", "number >0", "integer >=0".
-- Numbers are finite and integers exact (|n| < 2^53) unless the range says
-- otherwise.
local check = require "surge.check"

local M = {}
local Parser = {}
Parser.__index = Parser

local OptionError = { __tostring = function(e) return e.msg end }
M.OptionError = OptionError

local function fail(fmt, ...)
  error(setmetatable({ msg = fmt:format(...) }, OptionError), 0)
end

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

local INT_MAX = 2 ^ 53

-- kind: "string" (default), "number", "integer", the last two with an
-- optional range ("integer 1..256").
function Parser:option(name, help, default, kind)
  kind = kind or (type(default) == "number" and "number") or "string"
  local base, range = tostring(kind):match("^(%a+)%s*(.*)$")
  if (base ~= "string" and base ~= "number" and base ~= "integer") or (base == "string" and range ~= "") then
    error(("option %s: kind must be string, number or integer (with a range like \"integer 1..256\"), got %s")
      :format(tostring(name), check.show(kind)), 2)
  end
  local ok, spec = pcall(check.spec, base .. (range ~= "" and " " .. range or ""))
  if not ok then error(("option %s: kind %s: %s"):format(tostring(name), check.show(kind), spec), 2) end
  add(self, name, help, default, base)
  self.by[name].spec = spec
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
  if n == nil or math.abs(n) >= INT_MAX and o.kind == "integer" or not o.spec.test(n) then
    fail("%s: option %s: expected %s, got '%s'", self.script, o.name, o.spec.what, v)
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
      fail("%s: unknown option '%s' (see: surge run %s --help)", self.script, a, self.script)
    end
    if o.kind == "flag" then
      if val then fail("%s: option %s takes no value", self.script, name) end
      r[o.key] = true
    else
      if not val then
        i = i + 1
        val = argv[i]
        if val == nil then fail("%s: option %s needs a value", self.script, name) end
      end
      r[o.key] = convert(self, o, val)
    end
    i = i + 1
  end
  return r
end

return M
