-- API misuse found by a hostile tester: each case is one error at this
-- file's line (the first frame outside surge), naming the function and the
-- parameter; never a segfault (which would kill this test), a value wrapped
-- into the packet, or a position inside lua/surge/ or generated code.
local ffi = require("ffi")
local surge = require("surge")
local errors = require("surge.vm.testrun").errors

local T = {}

local at = require("surge.vm.testrun").at

local function frame(t)
  local buf = ffi.new("uint8_t[?]", t.size)
  ffi.copy(buf, t.bytes, t.size)
  return buf
end

function T.flow_next_and_restore()
  local f = surge.flow{ template = surge.proto.udp{}, fields = { ["udp.sport"] = { range = { 1, 5 } } } }
  errors(at("flow:next: p: expected a pointer, got 42"), function() f:next(42) end)
  errors(at("flow:next: p: expected a pointer, got nil"), function() f:next(nil) end)
  errors(at("flow:next: p: expected a pointer, got a NULL unsigned char *"), function() f:next(ffi.cast("uint8_t *", nil)) end)
  errors(at("flow:restore: state: expected a table, got nil"), function() f:restore(nil) end)
  errors(at('flow:restore: state[1]: expected an integer in 0..4, got "x"'), function() f:restore({ "x" }) end)
  errors(at("flow:restore: state[1]: expected an integer in 0..4, got 5"), function() f:restore({ 5 }) end)
  errors(at("flow:restore: state: expected the 1 values flow:state() gave, got 2"), function() f:restore({ 1, 2 }) end)
  local buf = frame(f.template)
  f:restore({ 3 })
  f:next(buf)
  assert(surge.proto.udp.sport(buf + f.template.l4) == 4, "restore() moved to the 4th flow")
end

function T.size_next_and_options()
  local sz = surge.size.new({ uniform = { 60, 1514 } })
  sz:template(surge.proto.udp{})
  errors(at("size:next: p: expected a pointer, got 42"), function() sz:next(42) end)
  errors(at("size:next: p: expected a pointer, got nil"), function() sz:next(nil) end)
  errors(at("size:next: expected size as self, got nil (call it with ':')"), function() sz.next(nil) end)
  errors(at("surge.size: pool: expected a pool (surge.pool{...}), got 42"), function() surge.size.new(60, { pool = 42 }) end)
  local L = sz:next(frame(sz:template()))
  assert(L >= 60 and L <= 1514)
end

function T.setters_refuse_bad_pointers()
  local udp = surge.proto.udp
  errors(at("surge.proto.udp.set_sport: p: expected a pointer, got nil"), function() udp.set_sport(nil, 5) end)
  errors(at("surge.proto.udp.set_sport: p: expected a pointer, got 42"), function() udp.set_sport(42, 5) end)
  errors(at("surge.proto.tcp.set_seq: p: expected a pointer, got a NULL unsigned char *", 1),
    function() surge.proto.tcp.set_seq(ffi.cast("uint8_t *", nil), 5) end)
  -- any other cdata would have byte offsets added to it: a number as an
  -- address (42LL), a double, an int array (4-byte steps)
  errors(at("surge.proto.udp.set_sport: p: expected a pointer, got cdata<int64_t>"), function() udp.set_sport(42LL, 5) end)
  errors(at("surge.proto.udp.set_sport: p: expected a pointer, got cdata<double>", 1),
    function() udp.set_sport(ffi.new("double", 7), 5) end)
  errors(at("surge.proto.udp.set_sport: p: expected a pointer, got cdata<int [16]>", 1),
    function() udp.set_sport(ffi.new("int[16]"), 5) end)
  local f = surge.flow{ template = surge.proto.udp{}, fields = { ["udp.sport"] = { range = { 1, 5 } } } }
  errors(at("flow:next: p: expected a pointer, got cdata<int64_t>"), function() f:next(42LL) end)
  errors(at("flow:next: expected a flow as self, got cdata<unsigned char [64]> (call it with ':')", 1),
    function() f.next(ffi.new("uint8_t[64]")) end)
  errors(at("flow:next: p: expected a pointer, got cdata<struct surge_burst>"), function() f:next(ffi.new("struct surge_burst")) end)
  -- byte buffers of every kind are packets: uint8_t *, char *, uint8_t[?], uint8_t[N]
  local t = surge.proto.udp{}
  local fixed = ffi.new("uint8_t[64]")
  ffi.copy(fixed, t.bytes, t.size)
  for _, p in ipairs({ frame(t), fixed, ffi.cast("uint8_t *", fixed), ffi.cast("char *", fixed) }) do
    f:reset()
    f:next(p)   -- the first flow: sport 1, written at the UDP header
    assert(ffi.cast("uint8_t *", p)[t.l4 + 1] == 1, tostring(ffi.typeof(p)))
  end
  local hdr = ffi.new("uint8_t[8]")   -- a UDP header alone, as a fixed array
  udp.set_sport(hdr, 0x1234)
  assert(hdr[0] == 0x12 and hdr[1] == 0x34)
end

-- Readers, decode and the checksum helpers check their pointer and length
-- as the setters do (a NULL read segfaulted; decode read past its buffer).
function T.readers_decode_and_checksums_refuse_bad_bytes()
  local P, NULL = surge.proto, ffi.cast("uint8_t *", nil)
  local null = "p: expected a pointer, got a NULL unsigned char *"
  errors(at("surge.proto.udp.sport: " .. null), function() P.udp.sport(NULL) end)
  errors(at("surge.proto.ip4.src: " .. null), function() P.ip4.src(NULL) end)
  errors(at("surge.proto.tcp.seq: " .. null), function() P.tcp.seq(NULL) end)
  errors(at("surge.proto.vxlan.vni: " .. null), function() P.vxlan.vni(NULL) end)
  errors(at("surge.proto.eth.mac_text: " .. null), function() P.eth.mac_text(NULL) end)
  errors(at("surge.proto.checksum.sum: " .. null), function() P.checksum.sum(NULL, 100) end)
  errors(at("surge.proto.checksum.update16: c: expected a pointer, got a NULL unsigned char *", 1),
    function() P.checksum.update16(NULL, 1, 2, true) end)
  errors(at("surge.proto.decode: data (a string or a packet's bytes): expected a pointer, got a NULL unsigned char *", 1),
    function() P.decode(NULL, 64) end)
  errors(at("surge.proto.decode: len (at most the string's length): expected an integer in 0..3, got 1000000000", 1),
    function() P.decode("abc", 1e9) end)
  errors(at("surge.proto.decode: len (at most the buffer's size): expected an integer in 0..4, got 100000", 1),
    function() P.decode(ffi.new("uint8_t[4]"), 100000) end)
  errors(at("surge.proto.decode: len: expected an integer in 0..2147483647, got nil", 1),
    function() P.decode(ffi.cast("uint8_t *", ffi.new("uint8_t[4]"))) end)
  -- a struct whose __add returns a byte pointer is not a byte buffer
  local buf = ffi.new("uint8_t[64]")
  ffi.cdef("struct hm_test { int x; };")
  local S = ffi.metatype("struct hm_test", { __add = function() return ffi.cast("uint8_t *", buf) end })
  errors(at("surge.proto.udp.set_sport: p: expected a pointer, got cdata<struct hm_test>", 1),
    function() P.udp.set_sport(S(), 1) end)
  -- what is right still reads
  local t = P.udp{}
  local f = ffi.new("uint8_t[?]", t.size)
  ffi.copy(f, t.bytes, t.size)
  assert(P.udp.sport(f + t.l4) == 1024 and P.decode(f, t.size) == P.decode(t.bytes))
  assert(P.checksum.sum(f + t.l3, 20) == 0xffff)
end

function T.flow_specs_refuse_holes_and_bad_seeds()
  local t = surge.proto.udp{}
  errors(at("surge.flow: udp.sport: list has a hole (a nil value) before its end", 1),
    function() surge.flow{ template = t, fields = { ["udp.sport"] = { list = { 1, nil, 3 } } } } end)
  errors(at("surge.flow: udp.sport: seed = -1 must be an integer in 0..4294967295", 1),
    function() surge.flow{ template = t, fields = { ["udp.sport"] = { random = { 1, 9 }, seed = -1 } } } end)
  errors(at("surge.flow: udp.sport: seed = 9.007199254741e+15 must be an integer in 0..4294967295", 1),
    function() surge.flow{ template = t, fields = { ["udp.sport"] = { random = { 1, 9 }, seed = 2 ^ 53 } } } end)
end

-- Values are range-checked, never wrapped: the packet keeps its bytes.
function T.setters_refuse_values_outside_the_field()
  local t = surge.proto.udp{}
  local buf = frame(t)
  local u, ip = buf + t.l4, buf + t.l3
  local P = surge.proto
  local port = "surge.proto.udp.set_sport: v: expected an integer in 0..65535, got "
  errors(at(port .. "70000"), function() P.udp.set_sport(u, 70000) end)
  errors(at(port .. "-1"), function() P.udp.set_sport(u, -1) end)
  errors(at(port .. "nan"), function() P.udp.set_sport(u, 0 / 0) end)
  errors(at(port .. "1.5"), function() P.udp.set_sport(u, 1.5) end)
  errors(at(port .. '"5"'), function() P.udp.set_sport(u, "5") end)
  errors(at(port .. "nil"), function() P.udp.set_sport(u) end)
  local addr = "surge.proto.ip4.set_src: a: expected an integer in 0..4294967295, got "
  errors(at(addr .. "1099511627776"), function() P.ip4.set_src(ip, 2 ^ 40) end)
  errors(at(addr .. '"10.0.0.9"'), function() P.ip4.set_src(ip, "10.0.0.9") end)
  errors(at("surge.proto.ip4.set_ttl: v: expected an integer in 0..255, got 256"), function() P.ip4.set_ttl(ip, 256) end)
  errors(at("surge.proto.tcp.set_flags: f: expected an integer in 0..255, got 256"), function() P.tcp.set_flags(u, 256) end)
  errors(at("surge.proto.icmp6.set_seq: v: expected an integer in 0..65535, got -3"), function() P.icmp6.set_seq(u, -3) end)
  errors(at("surge.proto.vlan.set_id: id: expected an integer in 0..4095, got 4096"), function() P.vlan.set_id(u, 4096) end)
  errors(at("surge.proto.qinq.set_id: id: expected an integer in 0..4095, got inf"), function() P.qinq.set_id(u, 1 / 0) end)
  errors(at("surge.proto.vxlan.set_vni: vni: expected an integer in 0..16777215, got 16777216", 1),
    function() P.vxlan.set_vni(u + 8, 2 ^ 24) end)
  errors(at("surge.proto.mpls.set_label: v: expected an integer in 0..1048575, got 1048576", 1),
    function() P.mpls.set_label(u, 2 ^ 20) end)
  errors(at("surge.proto.ip6.set_flow: v: expected an integer in 0..1048575, got -1"), function() P.ip6.set_flow(u, -1) end)
  errors(at("surge.proto.arp.set_tpa: a: expected an integer in 0..4294967295, got 4294967296", 1),
    function() P.arp.set_tpa(u, 2 ^ 32) end)
  errors(at("surge.proto.gre.set_key: v: expected an integer in 0..4294967295, got -1"), function() P.gre.set_key(u, -1) end)
  assert(ffi.string(buf, t.size) == t.bytes, "a refused value changed the packet")
  -- the limits themselves are accepted
  P.udp.set_sport(u, 65535); P.udp.set_sport(u, 0); P.ip4.set_src(ip, 2 ^ 32 - 1); P.tcp.set_seq(u, 2 ^ 32 - 1)
  assert(P.udp.sport(u) == 0 and P.ip4.src(ip) == 2 ^ 32 - 1)
end

function T.counters_and_gauges()
  local c = surge.counter("misuse_c")
  local n = "counter:add: n: expected an integer in 0..9007199254740992, got "
  errors(at(n .. "-1"), function() c:add(-1) end)
  errors(at(n .. "nan"), function() c:add(0 / 0) end)
  errors(at(n .. "inf"), function() c:add(math.huge) end)
  errors(at(n .. "1.8446744073709552e+19"), function() c:add(2 ^ 64) end)
  errors(at(n .. "1.5"), function() c:add(1.5) end)
  errors(at(n .. '"3"'), function() c:add("3") end)
  errors(at("counter:add: expected counter as self, got 5 (call it with ':')"), function() c.add(5) end)
  c:add(); c:add(2 ^ 53)
  assert(c:value() == 2 ^ 53 + 1, "the counter holds what was added: " .. tostring(c:value()))
  local g = surge.gauge("misuse_g")
  errors(at("gauge:set: v: expected a number, got nan"), function() g:set(0 / 0) end)
  errors(at("gauge:set: v: expected a number, got inf"), function() g:set(math.huge) end)
  errors(at("gauge:set: v: expected a number, got nil"), function() g:set() end)
  errors(at('gauge:set: v: expected a number, got "x"'), function() g:set("x") end)
  errors(at("gauge:set: expected gauge as self, got 3 (call it with ':')"), function() g.set(3) end)
  g:set(-2.5)
  assert(g:value() == -2.5)
end

function T.progress_counts()
  local count = "expected a number in 0..9007199254740992, got "
  errors(at("surge.progress: total: " .. count .. "inf"), function() surge.progress(5, math.huge) end)
  errors(at("surge.progress: done: " .. count .. "1.0000000000000001e+300"), function() surge.progress(1e300, 1e300) end)
  errors(at("surge.progress: done: " .. count .. "-1"), function() surge.progress(-1, 10) end)
  errors(at("surge.progress: done: " .. count .. "nan"), function() surge.progress(0 / 0, 10) end)
  errors(at('surge.progress: done: ' .. count .. '"a"'), function() surge.progress("a", "b") end)
  errors(at("surge.progress: label: expected a string, got 5"), function() surge.progress(1, 10, 5) end)
  errors(at("surge.progress.watch: total: " .. count .. "-1"), function() surge.progress.watch("x", -1, print) end)
end

function T.latency_format()
  errors(at("surge.latency.format: summary.probes: expected an integer >= 0, got nil", 1),
    function() surge.latency.format({}) end)
  local s = { probes = 1, lost = 0, duplicated = 0, reordered = 0, min_ns = 1000, mean_ns = 1000, p50_ns = 1000,
              p90_ns = 1000, p99_ns = 1000, p999_ns = 1000, max_ns = 0 / 0 }
  errors(at("surge.latency.format: summary.max_ns: expected a number, got nan"), function() surge.latency.format(s) end)
  s.max_ns = 1000
  assert(surge.latency.format(s):match("^probes 1 lost 0"))
end

function T.results_add_and_write()
  local R = surge.results
  errors(at("surge.results.write: res: expected a table, got 42"), function() R.write("/tmp/surge-misuse.csv", 42) end)
  local t = { a = 1 }
  t.self = t
  errors(at("surge.results.add: cyc.self: it contains itself (a cycle)"), function() R.add("cyc", t) end)
  errors(at("surge.results.write: res.a.self: it contains itself (a cycle)", 1),
    function() R.write("/tmp/surge-misuse.json", { a = t }) end)
  errors(at("surge.results.add: fn.x.y: a function cannot go in a results file"), function() R.add("fn", { x = { y = print } }) end)
  errors(at("surge.results.add: co[1]: a thread cannot go in a results file", 1),
    function() R.add("co", { coroutine.create(print) }) end)
  errors(at("surge.results.add: cd.list[2]: a cdata cannot go in a results file", 1),
    function() R.add("cd", { list = { 1, ffi.new("int[1]") } }) end)
  errors(at("surge.results.add: k: key a table: keys must be strings or numbers"), function() R.add("k", { [{}] = 1 }) end)
  local shared = { 1, 2 }
  R.add("misuse_ok", { a = shared, b = shared, ["odd key"] = true })   -- a table twice is not a cycle
end

function T.files_and_plot()
  errors(at('surge.pcap.writer: path: expected a file name, got ""'), function() surge.pcap.writer("") end)
  errors(at('surge.pcap.reader: path: expected a file name, got ""'), function() surge.pcap.reader("") end)
  local loop = "surge.pcap: loop (passes, or true for forever): expected an integer in 1..4294967295, got "
  errors(at(loop .. "0"), function() surge.pcap.reader("/nonexistent.pcap", { loop = 0 }) end)
  errors(at(loop .. "-1"), function() surge.pcap.reader("/nonexistent.pcap", { loop = -1 }) end)
  errors(at("surge plot: give a results file (surge run --output FILE.json)"), function() surge.plot(42) end)
  errors(at("surge plot: -o 5: the output must be a file name ending in .svg or .png", 1),
    function() surge.plot("r.json", 5) end)
end

function T.pool_templates()
  errors(at("surge.pool: template of 3 bytes: a frame holds at least the 14-byte Ethernet header", 1),
    function() surge.pool{ template = "abc" } end)
  errors(at("surge.pool: template of 3 bytes: a frame holds at least the 14-byte Ethernet header", 1),
    function() surge.pool{ template = { bytes = "abc" } } end)
  errors(at("surge.pool: template.size = 999, but template.bytes holds 60 bytes", 1),
    function() surge.pool{ template = { bytes = ("x"):rep(60), size = 999 } } end)
  errors(at("surge.pool: cache: expected an integer in 0..512, got 1048576"), function() surge.pool{ cache = 2 ^ 20 } end)
end

return T
