-- Handles are strict (issue 23 item 1): reading or writing a field a handle
-- type does not have raises "TYPE has no field 'NAME'" at this file's line,
-- for every handle type (lua/surge/class.lua), while the fields and methods
-- they do have keep working. Run with --vdev net_ring0 --vdev net_null0,no-rx=1.
local surge = require("surge")
local testrun = require("surge.vm.testrun")
local errors, at = testrun.errors, testrun.at

local T = {}

local null
local function null_port()
  null = null or surge.port("net_null0", { txq = 1, rxq = 1 })
  return null
end

local PCAP = os.getenv("TMPDIR") and os.getenv("TMPDIR") .. "/surge_test_handles.pcap" or "/tmp/surge_test_handles.pcap"

-- every handle type: its name in the message, a way to make one, and a
-- field it has (read back to show known fields are untouched)
local function handles()
  local pool = surge.pool{ size = 63, template = surge.proto.udp{} }
  local w = surge.pcap.writer(PCAP)
  local b = pool:burst(4)
  b:alloc()
  w:write(b)
  w:close()
  b:free()
  local counters = require("surge.dut.counters")
  return {
    { "port", null_port(), "id" },
    { "txq", null_port():txq(0), "port" },
    { "rxq", null_port():rxq(0), "port" },
    { "pool", pool, "id" },
    { "burst", pool:burst(2), "cap" },
    { "writer", surge.pcap.writer(PCAP .. "2"), "path" },
    { "reader", surge.pcap.reader(PCAP), "path" },
    { "flow", surge.flow{ template = surge.proto.udp{}, fields = { ["udp.sport"] = { range = { 1, 5 } } } }, "template" },
    { "size", surge.size("imix"), "n" },
    { "marker", surge.latency.marker{ offset = 42 }, "offset" },
    { "receiver", surge.latency.receiver{ offset = 42 }, "offset" },
    { "counter", surge.counter("handles_c"), "name" },
    { "gauge", surge.gauge("handles_g"), "name" },
    { "dut tagger", counters.tagger{ l4 = 34 }, "flows" },
    { "dut receiver", counters.receiver{ dport = 9 }, "flows" },
    { "option parser", require("surge.args").new("x.lua"), "script" },
  }
end

function T.unknown_fields_raise_at_the_callers_line()
  for _, h in ipairs(handles()) do
    local what, obj, field = h[1], h[2], h[3]
    assert(obj[field] ~= nil, what .. "." .. field .. " reads")
    errors(at(what .. " has no field 'nosuch'"), function() return obj.nosuch end)
    errors(at(what .. " has no field 'lenght'"), function() obj.lenght = 1 end)
    -- (a burst is a pointer: b[7] is the FFI's pointer arithmetic, not a field)
    if what ~= "burst" then errors(at(what .. " has no field 7"), function() return obj[7] end) end
  end
end

-- the misspelling is caught where it is made, not one index later
function T.misspelt_burst_field_names_itself()
  local b = surge.pool{ size = 63 }:burst(2)
  b:alloc()
  errors(at("burst has no field 'lenght'"), function() return b.lenght[0] end)
  assert(b.len[0] == 60 and b.n == 2 and b.cap == 2)   -- struct fields, read-only fields
  b.len[1] = 64
  assert(b:bytes(1):len() == 64)                     -- methods
  b:free()
end

-- fields a handle may lack still read nil, or their false default; fields
-- surge sets later can be set; methods resolve before the miss
function T.optional_fields_and_methods_keep_working()
  local q = null_port():txq(0)
  assert(q.gap == false)
  q:set_rate{ gap = function() return 1000 end }
  assert(type(q.gap) == "function")
  q:set_rate("1mpps")
  assert(q.gap == false)
  local r = surge.latency.receiver{ offset = 42 }
  assert(r.fn == false)
  r:each(function() end)
  assert(type(r.fn) == "function" and r.buf)
  r:each(nil)
  assert(r.fn == false and r:scan(surge.pool{ size = 63 }:burst(1)) == 0)
  local c = surge.counter("handles_opt")
  c:add(3)
  assert(c:value() == 3)
  -- a metatable's own keys (surge asks for __handle, __serial, ...) are not fields
  assert(getmetatable(c).__serial == nil and getmetatable(q).__handle(q) == ("txq(%d,0)"):format(q.port))
  -- the class tables (methods) are not handles: adding a method still works
  local Port = getmetatable(null_port())
  assert(rawget(Port, "stats"))
end

-- surge asking what a value is (the prompt showing it, `surge show` reading
-- what show(args) returned) is not the script misspelling a field
function T.showing_a_handle_does_not_raise()
  local show, frames = require("surge.repl.show").format, require("surge.base.frames").frames
  local f = surge.flow{ template = surge.proto.udp{}, fields = { ["udp.sport"] = { range = { 1, 3 } } } }
  assert(show(f):find("udp.sport", 1, true), show(f))
  assert(type(show(surge.size("imix"))) == "string")
  assert(type(show(surge.latency.receiver{ offset = 42 })) == "string")
  local sz = surge.size("imix")
  sz:template(surge.proto.udp{})
  assert(#frames(f, 2) == 2 and #frames(sz, 3) == 3)
  -- a value's own raising __index is still its error
  errors("idx", show, setmetatable({}, { __index = function() error("idx") end }))
end

return T
