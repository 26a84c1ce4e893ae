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
  assert(getmetatable(err) == args.OptionError, "an OptionError (surge exits 2)")
  err = tostring(err)
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

-- Numbers that C or a loop counter would wrap, clamp or never reach.
function T.integers_are_finite_and_exact()
  for _, v in ipairs({ "inf", "-inf", "nan", "1e20", "9007199254740993", "0x1p60", "1e309" }) do
    fails({ "--size", v }, "option %-%-size: expected an integer, got '" .. v:gsub("%-", "%%-") .. "'")
  end
  for _, v in ipairs({ "inf", "nan", "1e309", "-1e400" }) do
    fails({ "--rate", v }, "option %-%-rate: expected a number, got")
  end
  local o = parser():parse({ "--size", "0x10", "--rate", "1e300" })
  assert(o.size == 16 and o.rate == 1e300)
end

-- A kind may carry a range in surge.check's spec language.
function T.ranged_kinds()
  local p = args.new("r.lua")
  p:option("--burst", "b", 32, "integer 1..256")
  p:option("--count", "c", 0, "integer >=0")
  p:option("--gap", "g", 1, "number >0")
  local o = p:parse({ "--burst", "256", "--count", "0", "--gap", "0.5" })
  assert(o.burst == 256 and o.count == 0 and o.gap == 0.5)
  local function bad(argv, pat)
    local ok, e = pcall(p.parse, p, argv)
    assert(not ok and tostring(e):match(pat), tostring(e))
  end
  bad({ "--burst", "0" }, "option %-%-burst: expected an integer in 1%.%.256, got '0'")
  bad({ "--burst", "257" }, "expected an integer in 1%.%.256")
  bad({ "--count", "-1" }, "option %-%-count: expected an integer >= 0, got '%-1'")
  bad({ "--count", "1e20" }, "option %-%-count: expected an integer >= 0, got '1e20'")
  bad({ "--gap", "0" }, "option %-%-gap: expected a number > 0, got '0'")
  bad({ "--gap", "inf" }, "option %-%-gap: expected a number > 0")
  assert(not pcall(p.option, p, "--x", "bad range", 1, "integer 1..x"))
  assert(not pcall(p.option, p, "--y", "no range on strings", "a", "string 1..2"))
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
