-- surge.check: the spec language, value descriptions, errors at the caller's
-- line, and the burst fields Lua may only read.
local ffi = require("ffi")
local surge = require("surge")
local check = require("surge.check")

local T = {}

local THIS = debug.getinfo(1, "S").short_src
local THIS_PAT = THIS:gsub("%p", "%%%0")   -- the path as a pattern (it may hold "-")

-- Returns the error of fn(...), which must fail.
local function err(fn, ...)
  local ok, e = pcall(fn, ...)
  assert(not ok, "expected an error")
  return tostring(e)
end

function T.specs_accept_and_refuse()
  -- spec, accepted, refused (nil is checked apart: a list cannot hold it)
  local cases = {
    { "integer 0..65535", { 0, 65535, 7 }, { -1, 65536, 1.5, 0 / 0, 1 / 0, "1", true } },
    { "integer? 1..256", { 1, 256 }, { 0, 257, "x" } },
    { "number >=0", { 0, 1.5, 1e300 }, { -1e-9, 0 / 0, 1 / 0 } },
    { "number >0", { 1e-300 }, { 0, -1 } },
    { "number 0..inf", { 0, 1 / 0 }, { -1, 0 / 0 } },
    { "number", { -1e300, 0 }, { 0 / 0, 1 / 0, -1 / 0 } },
    { "string|table", { "", {} }, { 1, print } },
    { "function?", { print }, { "print" } },
    { "boolean", { true, false }, { 0 } },
    { "burst", {}, { {}, "b", ffi.new("int[1]"), ffi.cast("struct surge_burst *", nil) } },
  }
  for _, c in ipairs(cases) do
    local spec = check.spec(c[1])
    for _, v in ipairs(c[2]) do assert(spec.test(v), c[1] .. " refused " .. tostring(v)) end
    for _, v in ipairs(c[3]) do assert(not spec.test(v), c[1] .. " accepted " .. tostring(v)) end
    assert(spec.test(nil) == (c[1]:find("?", 1, true) ~= nil), c[1] .. ": nil")
  end
  assert(check.spec("integer? 1..256").test(nil))
  assert(check.spec("integer 1..256").what == "an integer in 1..256")
  assert(check.spec("number >=0").what == "a number >= 0")
  assert(check.spec("integer|string 0..9").what == "an integer in 0..9 or a string")
  for _, bad in ipairs({ "float", "integer 1..x", "integer ~5", "" }) do
    assert(not pcall(check.spec, bad), "bad spec accepted: " .. bad)
  end
end

function T.values_are_described()
  assert(check.show(nil) == "nil" and check.show(0 / 0) == "nan" and check.show(1 / 0) == "inf")
  assert(check.show(2 ^ 40) == "1099511627776" and check.show(1.5) == "1.5")
  assert(check.show("x") == '"x"' and check.show(("y"):rep(100)):match('^"y+"%.%.%.$'))
  assert(check.show({}) == "a table" and check.show(print) == "a function")
  assert(check.show(ffi.cast("struct surge_burst *", nil)):match("^a NULL struct surge_burst"))
end

-- However deep inside surge a check fails, the error names this file's line.
function T.errors_point_at_the_caller()
  local line = debug.getinfo(1, "l").currentline + 1
  local e = err(function() surge.pool{ size = -1 } end)
  assert(e:find(THIS .. ":" .. line .. ": surge.pool: size: expected an integer in 0..16777216, got -1", 1, true), e)
  line = debug.getinfo(1, "l").currentline + 1
  e = err(function() surge.pool{}:burst(300) end)
  assert(e:find(THIS .. ":" .. line .. ": pool:burst: n:", 1, true), e)
end

-- A constructor handed straight to pcall (no Lua frame of the user's between)
-- still names the line of that pcall: every API error goes through
-- check.raise, which skips surge's frames and C's.
function T.pcall_of_a_constructor_names_the_line()
  local cases = {
    { surge.pool, 42, "surge.pool: opts: expected a table, got 42" },
    { surge.flow, 5, "surge.flow: give a table" },
    { surge.flow.new, {}, "surge.flow: template = T missing" },
    { surge.size, "17", "surge.size: spec 17: give a size" },
    { surge.proto.arp, { op = "bogus" }, "surge.proto.arp: op = 'bogus'" },
    { require("surge.dut").session, { colour = 1 }, "surge.dut.session: unknown option 'colour'" },
  }
  for i, c in ipairs(cases) do
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, e = pcall(c[1], c[2])
    assert(not ok, "case " .. i .. " did not fail")
    e = tostring(e)
    assert(e:find(THIS .. ":" .. line .. ": " .. c[3], 1, true), "case " .. i .. ": " .. e)
  end
end

function T.burst_fields_read_only()
  local b = surge.pool{ size = 63, template = surge.proto.udp{}, shared = true }:burst(4)
  assert(b:alloc() == 4 and b.n == 4 and b.cap == 4 and b.pool >= 0 and b.mbuf[0] ~= nil)
  for _, f in ipairs({ "n", "cap", "pool", "mbuf", "data" }) do
    local e = err(function() b[f] = 1 end)
    assert(e:match("burst%." .. f .. " is read%-only"), e)
  end
  assert(err(function() b.mbuf[0] = nil end):match("constant"))
  -- the bytes behind data[i] are writable, the pointer is not: no script
  -- points a send or a read somewhere else
  local p0 = b.data[0]
  assert(err(function() b.data[0] = b.data[0] + 2 ^ 31 end):match("constant"))
  assert(b.data[0] == p0)
  -- len[] is the script's: whatever reads the frame checks it against the
  -- mbuf first (bytes here; send and pcap writers in their own tests)
  b.len[1] = 65535
  assert(err(b.bytes, b, 1):find(THIS_PAT .. ":%d+: packet 1 of the burst has length 65535, outside 14%.%.%d+"))
  b.len[1] = 13
  assert(err(b.bytes, b, 1):match("packet 1 of the burst has length 13, outside 14"))
  b.len[1] = 60
  assert(err(function() b.colour = 1 end):match("burst has no field 'colour'"))
  assert(b.n == 4 and b.cap == 4, "nothing changed")
  b.len[0], b.data[0][0], b.tsc, b.gap_ns[0] = 60, 0xff, 1, 5   -- these stay writable
  assert(err(b.alloc, b, 5):match("burst:alloc: n %(at most the burst's capacity%): expected an integer in 0%.%.4, got 5"))
  assert(b:alloc(4) == 4)
  assert(err(b.bytes, b, 4):match("burst:bytes: i"))
  assert(err(b.alloc):match("burst:alloc: expected a burst, got nil"))
  b:free()
end

function T.options_refuse_unknown_keys()
  local e = err(check.options, { colour = 1 }, { size = 1, cache = 1 }, "surge.pool")
  assert(e:match("surge.pool: unknown option 'colour' %(cache, size%)"), e)
  assert(next(check.options(nil, {}, "x")) == nil)
  assert(err(check.options, 5, {}, "f"):match("f: opts: expected a table, got 5"))
end

-- check.handle: a handle argument by its class, in expect's form; and
-- check.burst naming the parameter where a function takes two bursts.
function T.handle_and_named_burst()
  local Q = require("surge.port").TxQueue
  local q = surge.port(1):txq(0)
  assert(check.handle(q, Q, "f", "q", "a tx queue") == q)
  local line = debug.getinfo(1, "l").currentline + 1
  local e = err(function() check.handle(surge.port(1):rxq(0), Q, "f", "q", "a tx queue (port:txq(i))") end)
  assert(e == THIS .. ":" .. line .. ": f: q: expected a tx queue (port:txq(i)), got rxq(1,0)", e)
  local bad = { "x", 5, {}, setmetatable({}, { __index = Q }), ffi.new("int[1]") }
  for i = 0, #bad do   -- bad[0]: nil
    assert(err(check.handle, bad[i], Q, "f", "q", "a tx queue"):find("f: q: expected a tx queue, got ", 1, true))
  end
  line = debug.getinfo(1, "l").currentline + 1
  e = err(function() check.burst("x", "g", "rx") end)
  assert(e == THIS .. ":" .. line .. ': g: rx: expected a burst, got "x"', e)
  assert(err(check.burst, nil, "g"):find("g: expected a burst, got nil", 1, true))
end

return T
