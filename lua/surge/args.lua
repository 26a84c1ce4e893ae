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
-- otherwise. Declarations are checked too, as OptionErrors at the user's
-- configure line: a name is --name, declared once and not --help; a range
-- is well formed and not empty; a default fits its kind and range.
local check = require("surge.check")

local M = {}
-- text: the usage text configure's p:text() set
local Parser = require("surge.class").new("option parser", { "script", "word", "list", "by", "keys", "text" })

local OptionError = { __tostring = function(e) return e.msg end }
M.OptionError = OptionError

local function fail(fmt, ...)
  error(setmetatable({ msg = fmt:format(...) }, OptionError), 0)
end

-- A mistake in a declaration (p:option, p:flag) is an OptionError too, so
-- `surge run` refuses it before EAL starts, at the user's configure line:
-- check.raise finds that line, the OptionError carries it.
local function refuse(fmt, ...)
  local _, msg = pcall(check.raise, fmt:format(...))
  error(setmetatable({ msg = msg }, OptionError), 0)
end

-- script: the name errors start with. scenario: true for a scenario's
-- parser, whose errors read "flood: --flows: ..." like its other errors
-- ("x.lua: option --n: ..." for a script's).
function M.new(script, scenario)
  return setmetatable({ script = script, word = scenario and "" or "option ", list = {}, by = {}, keys = {},
                        checks = {}, text = nil }, Parser)
end

local function key(name)
  return (name:sub(3):gsub("%-", "_"))
end

local INT_MAX = 2 ^ 53

-- Does v fit option o? The one test for a command-line value (converted),
-- a default and a value a scenario gets from Lua.
local function fits(o, v)
  if o.kind == "flag" then return type(v) == "boolean" end
  if o.kind == "string" then return type(v) == "string" end
  return o.spec.test(v) and (o.kind ~= "integer" or math.abs(v) < INT_MAX)
end

local function add(self, name, help, default, kind, spec)
  if type(name) ~= "string" or not name:match("^%-%-[%w][%w%-]*$") then
    refuse("option name %s must look like --name (two dashes, then letters, digits and dashes)", check.show(name))
  end
  if name == "--help" then refuse("option --help is surge's own: it prints the options") end
  if self.keys[key(name)] then refuse("option %s is declared twice", name) end
  local o = { name = name, help = help or "", default = default, kind = kind, key = key(name), spec = spec }
  -- a default is a value like any other (nil: the option is absent unless given)
  if default ~= nil and not fits(o, default) then
    refuse("option %s: default: expected %s, got %s", name, spec and spec.what or "a " .. kind, check.show(default))
  end
  self.list[#self.list + 1] = o
  self.by[name] = o
  self.keys[o.key] = o
  return self
end

-- The bounds of a range, to refuse one no value can meet ("integer 5..1").
local function empty(base, range)
  local a, b = range:match("^(%-?[%w.]+)%.%.(%-?[%w.]+)$")
  local lo, hi = tonumber(a), tonumber(b)
  if not (lo and hi) then return false end
  if base == "integer" then lo, hi = math.ceil(lo), math.floor(hi) end
  return lo > hi
end

-- kind: "string" (default), "number", "integer", the last two with an
-- optional range ("integer 1..256").
function Parser:option(name, help, default, kind)
  kind = kind or (type(default) == "number" and "number") or "string"
  local base, range = tostring(kind):match("^(%a+)%s*(.*)$")
  if (base ~= "string" and base ~= "number" and base ~= "integer") or (base == "string" and range ~= "") then
    refuse("option %s: kind must be string, number or integer (with a range like \"integer 1..256\"), got %s",
      tostring(name), check.show(kind))
  end
  local ok, spec = pcall(check.spec, base .. (range ~= "" and " " .. range or ""))
  if not ok then   -- check.lua's message, without its position inside surge
    refuse("option %s: kind %s: %s", tostring(name), check.show(kind),
      (tostring(spec):gsub("^[^\n]-:%d+: ", ""):gsub("^surge%.check: ", "")))
  end
  if empty(base, range) then refuse("option %s: kind %s: the range is empty", tostring(name), check.show(kind)) end
  if base == "string" then spec = nil end
  return add(self, name, help, default, base, spec)
end

function Parser:flag(name, help)
  return add(self, name, help, false, "flag")
end

-- A check of the parsed options together (addresses of one family, ...)
-- that needs nothing but their values, so it runs in parse(): before EAL
-- for `surge run`. fn(opts) returns nil, or one line that names the
-- options at fault as typed ("--src: '1.2.3' is not an IPv4 address");
-- parse() refuses it as it refuses a malformed value (an OptionError
-- after the script's or scenario's name: exit 2).
function Parser:check(fn)
  self.checks[#self.checks + 1] = fn
  return self
end

function Parser:description(text)
  self.text = text
  return self
end

-- The surge command the help is for (`surge show X --help` is not a run).
local COMMANDS = { run = true, show = true, repl = true }
local function command()
  local ok, ffi = pcall(require, "ffi")
  if not ok or not pcall(function() return ffi.C.surge_cmdline end) then return "run" end
  for i = 1, 8 do
    local a = ffi.C.surge_cmdline(i)
    if a == nil then break end
    local w = ffi.string(a)
    if COMMANDS[w] then return w end
  end
  return "run"
end

function Parser:help()
  local out = { ("usage: surge %s [surge options] %s [options]"):format(command(), self.script) }
  if self.text then out[#out + 1] = "\n" .. self.text end
  out[#out + 1] = "\noptions:"
  for _, o in ipairs(self.list) do
    local left = o.kind == "flag" and o.name or (o.name .. " " .. o.kind:upper())
    -- no default (nil) and the empty string alike show none: "" is how an
    -- option says "not given", and its help says what that does
    local def = (o.kind ~= "flag" and o.default ~= nil and o.default ~= "")
      and (" (default " .. tostring(o.default) .. ")") or ""
    out[#out + 1] = ("  %-24s %s%s"):format(left, o.help, def)
  end
  out[#out + 1] = ("  %-24s %s"):format("--help", "this text")
  return table.concat(out, "\n")
end

local function convert(self, o, v)
  if o.kind == "string" then return v end
  local n = tonumber(v)
  if n == nil or not fits(o, n) then
    fail("%s: %s%s: expected %s, got '%s'", self.script, self.word, o.name, o.spec.what, v)
  end
  return n
end

-- Checks value v given from Lua for the option whose key is k (a scenario's
-- run{ trial = 2 }: keys as in parsed options); raises at the caller's line.
-- String options take what their user accepts there (a port, a number of
-- pps) and check it where they use it.
function Parser:value(k, v)
  local o = self.keys[k]
  if not o then
    local keys = {}
    for _, x in ipairs(self.list) do keys[#keys + 1] = x.key end
    check.raise(("%s: unknown option '%s' (%s)"):format(self.script, tostring(k), table.concat(keys, ", ")))
  end
  if o.kind ~= "string" and not fits(o, v) then
    check.raise(("%s: %s%s: expected %s, got %s"):format(self.script, self.word, o.name,
      o.spec and o.spec.what or "a boolean", check.show(v)))
  end
  return v
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
      if val then fail("%s: %s%s takes no value", self.script, self.word, name) end
      r[o.key] = true
    else
      if not val then
        i = i + 1
        val = argv[i]
        if val == nil then fail("%s: %s%s needs a value", self.script, self.word, name) end
      end
      r[o.key] = convert(self, o, val)
    end
    i = i + 1
  end
  for _, fn in ipairs(self.checks) do
    local why = fn(r)
    if why then fail("%s: %s", self.script, why) end
  end
  return r
end

return M
