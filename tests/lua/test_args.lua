-- Script options declared in configure(): defaults, conversion, errors.
local args = require("surge.args")

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
  -- the exact lines: a default shown; none (nil) and the empty string show no "(default ...)"
  p:option("--count", "packets to send", nil, "integer >=0")
  p:option("--pcap", "file to write (empty: none)", "")
  text = p:help()
  local lines = {}
  for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
  local function line(name)
    for _, l in ipairs(lines) do if l:find("  " .. name .. " ", 1, true) == 1 then return l end end
  end
  assert(line("--size") == "  --size INTEGER           frame size (default 60)", line("--size"))
  assert(line("--dst") == "  --dst STRING             destination (default 10.0.0.2)", line("--dst"))
  assert(line("--count") == "  --count INTEGER          packets to send", line("--count"))
  assert(line("--pcap") == "  --pcap STRING            file to write (empty: none)", line("--pcap"))
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

-- A mistake in configure() is an OptionError (surge exits 2 before EAL
-- starts), one line at the declaring line, with no path inside surge.
local THIS = debug.getinfo(1, "S").short_src
local THIS_PAT = THIS:gsub("%p", "%%%0")   -- the path as a pattern (it may hold "-")
local function refused(decl, pattern)
  local p = args.new("x.lua")
  local ok, e = pcall(decl, p)
  assert(not ok, "declaration accepted: " .. pattern)
  assert(getmetatable(e) == args.OptionError, "an OptionError (surge exits 2): " .. tostring(e))
  e = tostring(e)
  assert(not e:find("\n") and not e:find("/lua/surge/", 1, true), "one line, no surge path: " .. e)
  assert(e:find(THIS_PAT .. ":%d+: ") == 1, "at the declaring line (this file's): " .. e)
  assert(e:match(pattern), ("error '%s' does not match '%s'"):format(e, pattern))
  return e
end

function T.defaults_must_fit_their_kind()
  local cases = {
    { 500, "integer 1..100", "option %-%-n: default: expected an integer in 1%.%.100, got 500$" },
    { "abc", "integer", "default: expected an integer, got \"abc\"$" },
    { "5", "number", "default: expected a number, got \"5\"$" },
    { 0 / 0, "number", "default: expected a number, got nan$" },
    { math.huge, "number", "default: expected a number, got inf$" },
    { 2 ^ 60, "integer", "default: expected an integer, got 1152921504606846976$" },
    { 1.5, "integer >=0", "default: expected an integer >= 0, got 1.5$" },
    { 0, "number >0", "default: expected a number > 0, got 0$" },
    { {}, "string", "default: expected a string, got a table$" },
    { 5, "string", "default: expected a string, got 5$" },
    { true, nil, "default: expected a string, got true$" },
  }
  for _, c in ipairs(cases) do
    refused(function(p) p:option("--n", "x", c[1], c[2]) end, c[3])
  end
  -- nil: absent unless given; an inferred kind takes its default's type
  local p = args.new("x.lua")
  p:option("--a", "a", nil, "integer 1..3")
  p:option("--b", "b", 2.5)
  p:option("--c", "c", 100, "integer 1..100")
  local o = p:parse({})
  assert(o.a == nil and o.b == 2.5 and o.c == 100)
  assert(p:parse({ "--a", "3" }).a == 3)
end

function T.declaration_mistakes_are_refused()
  -- the exact position: the line of the p:option call
  local p = args.new("x.lua")
  local line = debug.getinfo(1, "l").currentline + 1
  local ok, e = pcall(function() p:option("--n", "x", 5, "integer >=abc") end)
  assert(not ok and tostring(e) == ("%s:%d: option --n: kind \"integer >=abc\": bad bound in spec 'integer >=abc'")
    :format(THIS, line), tostring(e))
  refused(function(p) p:option("--n", "x", 5, "integer 1..x") end, "kind \"integer 1%.%.x\": bad bound")
  refused(function(p) p:option("--n", "x", 5, "integer 5..1") end, "option %-%-n: kind \"integer 5%.%.1\": the range is empty$")
  refused(function(p) p:option("--n", "x", 1, "number 2..1") end, "the range is empty$")
  refused(function(p) p:option("--n", "x", 1, "integer 1.2..1.8") end, "the range is empty$")
  refused(function(p) p:option("--n", "x", 5, "float") end, "option %-%-n: kind must be string, number or integer")
  refused(function(p) p:option("--n", "x", "a", "string 1..2") end, "kind must be")
  refused(function(p) p:option("--n", "x", 5) p:option("--n", "y", 6) end, "option %-%-n is declared twice$")
  refused(function(p) p:flag("--n", "x") p:option("--n", "y", 6) end, "option %-%-n is declared twice$")
  refused(function(p) p:option("--n", "x", 6) p:flag("--n", "x") end, "option %-%-n is declared twice$")
  refused(function(p) p:option("-n", "x", 5) end, "option name \"%-n\" must look like %-%-name")
  refused(function(p) p:flag("-v", "x") end, "option name \"%-v\" must look like %-%-name")
  refused(function(p) p:option("n", "x", 5) end, "must look like %-%-name")
  refused(function(p) p:option(42, "x", 5) end, "option name 42 must look like %-%-name")
  refused(function(p) p:option("--help", "x", 5) end, "option %-%-help is surge's own")
  refused(function(p) p:flag("--help", "x") end, "option %-%-help is surge's own")
end

-- A scenario's parser: errors read "NAME: --opt: ...", and values given
-- from Lua (run{ trial = -1 }) meet the same kinds, at the caller's line.
function T.scenario_values()
  local p = args.new("flood", true)
  p:option("--flows", "f", 1024, "integer 1..60000")
  p:option("--trial", "t", 2, "number >0")
  p:option("--rate", "r", "")
  p:flag("--rewrite", "w")
  local ok, e = pcall(p.parse, p, { "--flows", "0" })
  assert(not ok and tostring(e) == "flood: --flows: expected an integer in 1..60000, got '0'", tostring(e))
  ok, e = pcall(p.parse, p, { "--trial" })
  assert(not ok and tostring(e) == "flood: --trial needs a value", tostring(e))
  assert(p:value("flows", 5) == 5 and p:value("rate", 5000) == 5000 and p:value("rewrite", true) == true)
  local line = debug.getinfo(1, "l").currentline
  for _, c in ipairs({ { "trial", -1, "flood: %-%-trial: expected a number > 0, got %-1$" },
                       { "trial", "2", "flood: %-%-trial: expected a number > 0, got \"2\"$" },
                       { "flows", 2 ^ 60, "flood: %-%-flows: expected an integer in 1%.%.60000" },
                       { "rewrite", "yes", "flood: %-%-rewrite: expected a boolean, got \"yes\"$" },
                       { "bogus", 1, "flood: unknown option 'bogus' %(flows, trial, rate, rewrite%)$" } }) do
    ok, e = pcall(function() return p:value(c[1], c[2]) end)
    assert(not ok and type(e) == "string" and e:find(THIS .. ":" .. (line + 6) .. ": ", 1, true) == 1, tostring(e))
    assert(e:match(c[3]), e)
  end
end

return T
