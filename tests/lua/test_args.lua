-- Script options declared in configure(): defaults, conversion, errors.
local args = require "surge.args"

local T = {}

local function parser()
  local p = args.new("flood.lua")
  p:option("--size", "frame size", 60, "integer")
  p:option("--rate", "rate", 1.5, "number")
  p:option("--dst", "destination", "10.0.0.2")
  p:flag("--verbose", "chatty")
  return p
end

function T.defaults()
  local o = parser():parse({})
  assert(o.size == 60 and o.rate == 1.5 and o.dst == "10.0.0.2" and o.verbose == false)
end

function T.values_both_forms()
  local o = parser():parse({ "--size", "128", "--rate=2.25", "--dst=1.2.3.4", "--verbose" })
  assert(o.size == 128 and o.rate == 2.25 and o.dst == "1.2.3.4" and o.verbose == true)
end

local function fails(argv, pattern)
  local ok, err = pcall(function() return parser():parse(argv) end)
  assert(not ok, "expected an error for " .. table.concat(argv, " "))
  assert(err:match(pattern), ("error '%s' does not match '%s'"):format(err, pattern))
  assert(not err:match("\n"), "error must be one line: " .. err)
end

function T.errors_name_the_option()
  fails({ "--bogus" }, "^flood.lua: unknown option '%-%-bogus'")
  fails({ "--size", "abc" }, "option %-%-size: expected an integer, got 'abc'")
  fails({ "--size", "1.5" }, "option %-%-size: expected an integer")
  fails({ "--rate", "x" }, "option %-%-rate: expected a number")
  fails({ "--size" }, "option %-%-size needs a value")
  fails({ "--verbose=yes" }, "option %-%-verbose takes no value")
end

function T.help_lists_options()
  local p = parser()
  local text = p:help()
  assert(text:match("%-%-size INTEGER%s+frame size %(default 60%)"), text)
  assert(text:match("%-%-verbose%s+chatty"), text)
  local out = {}
  local real = print
  print = function(s) out[#out + 1] = s end -- luacheck: ignore
  local r = p:parse({ "--help" })
  print = real -- luacheck: ignore
  assert(r == nil and out[1] == text)
end

function T.bad_declarations()
  local p = args.new("x.lua")
  assert(not pcall(p.option, p, "size", "no dashes"))
  assert(not pcall(p.option, p, "--n", "bad kind", 1, "float"))
end

return T
