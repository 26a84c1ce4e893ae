-- The results structure and its pieces, inside the binary: the JSON codec
-- round-trips what results files hold, custom counters sum and refuse bad
-- names, surge.results collects / writes / reads back, and surge.plot (what
-- the REPL calls) draws a file written here.
local surge = require("surge")
local json = require("surge.results.json")

local T = {}

local raises = require("surge.vm.testrun").errors

function T.json_roundtrip()
  local v = { s = "quote \" back \\ nl \n tab \t ctl \1 é", n = { 0, -1, 2^53 - 1, 0.1, 1e-300, -2.5e17 },
              t = true, f = false, empty = json.array(), obj = {}, nested = { { a = { b = { "c" } } } } }
  local back = assert(json.decode(json.encode(v)))
  assert(back.s == v.s, back.s)
  for i, x in ipairs(v.n) do assert(back.n[i] == x, ("n[%d]: %s vs %s"):format(i, tostring(back.n[i]), tostring(x))) end
  assert(back.t == true and back.f == false)
  assert(#back.empty == 0 and json.encode(back.empty) == "[]")
  assert(json.encode(back.obj) == "{}")
  assert(back.nested[1].a.b[1] == "c")
  assert(json.encode(0 / 0) == "null" and json.encode(math.huge) == "null")
  assert(json.encode({ b = 1, a = 2 }) == '{"a":2,"b":1}', "keys sorted")
  assert(json.decode('"\\u00e9\\u0041"') == "éA")
  assert(json.decode("null") == json.null)
end

-- Issue 23 item 12d: bytes that are not UTF-8 never reach the file as they
-- are (JSON tools refuse them): each becomes U+FFFD, valid UTF-8 stays.
function T.json_is_always_utf8()
  local R = "\239\191\189"
  local cases = {
    { "plain", "plain" }, { "caf\195\169", "caf\195\169" }, { "\255\254", R .. R },
    { "a\192\175b", "a" .. R .. R .. "b" },                  -- overlong '/'
    { "\237\160\128", R .. R .. R },                       -- a surrogate
    { "\244\144\128\128", R .. R .. R .. R },             -- above U+10FFFF
    { "x\226\130", "x" .. R .. R },                         -- cut short
    { "\240\159\152\128!", "\240\159\152\128!" },     -- 4 bytes, valid
  }
  for _, c in ipairs(cases) do
    local got = json.utf8(c[1])
    assert(got == c[2], ("%q -> %q, expected %q"):format(c[1], got, c[2]))
    assert(json.decode(json.encode(c[1])) == c[2])
  end
  -- keys too, and two keys that differ only in bad bytes both stay
  local back = json.decode(json.encode({ ["n\255"] = 1, ["n\254"] = 2 }))
  local a, b = back["n" .. R], back["n" .. R .. "#2"]
  assert(a and b and a + b == 3, json.encode(back))
end

function T.json_errors_name_the_byte()
  local v, err = json.decode('{"a": [1, 2,, 3]}')
  assert(v == nil and err:find("at byte 13"), err)
  v, err = json.decode('{"a": 1} x')
  assert(v == nil and err:find("trailing text"), err)
  v, err = json.decode('"open')
  assert(v == nil and err:find("unterminated string"), err)
  local t = {}
  t.self = t
  raises("contains itself", json.encode, t)
end

function T.counters_sum_and_share_names()
  local a = surge.counter("t_results_a")
  a:add(5)
  a:add()
  assert(a:value() == 6, a:value())
  local again = surge.counter("t_results_a")
  assert(again.id == a.id)
  again:add(4)
  assert(a:value() == 10)
  local g = surge.gauge("t_results_g")
  g:set(2.5)
  assert(g:value() == 2.5)
  g:set(-1)
  assert(g:value() == -1)
  raises("is already a counter", surge.gauge, "t_results_a")
  raises("name .* must be 1..63", surge.counter, "")
  raises("name .* must be 1..63", surge.counter, "has space")
  raises("name .* must be 1..63", surge.counter, ("x"):rep(64))
end

-- The hot-path form (a counter bumped per burst, a gauge set) compiles to
-- a trace: no allocation, no fallback to the interpreter.
function T.counter_add_compiles()
  local jutil = require("jit.util")
  local c, g = surge.counter("t_results_jit"), surge.gauge("t_results_jit_g")
  local started, stopped, aborted = {}, 0, {}
  local function on_trace(what, tr, func, pc, _, oex)
    local info = jutil.funcinfo(func, pc)
    local here = info.source and info.source:match("test_results%.lua$")
    if what == "start" then started[tr] = here
    elseif what == "stop" and started[tr] then stopped = stopped + 1
    elseif what == "abort" and started[tr] then aborted[#aborted + 1] = tostring(oex) end
  end
  local function loop(n)
    for i = 1, n do
      c:add(32)
      g:set(i)
    end
  end
  jit.flush()
  jit.attach(on_trace, "trace")
  loop(100000)
  jit.attach(on_trace)
  assert(stopped >= 1 and #aborted == 0, ("traces: %d, aborts: %s"):format(stopped, table.concat(aborted, "; ")))
  assert(c:value() == 3200000, c:value())
  assert(g:value() == 100000)
end

function T.collect_write_read_back()
  surge.counter("t_results_c"):add(7)
  surge.results.add("t_demo", { rows = { { x = 1 } } })
  raises("must be a table", surge.results.add, "x", 1)
  local r = surge.results.collect()
  assert(r.schema == "surge-results" and r.schema_version == 1 and r.status == "running")
  assert(r.metadata.surge_version == surge.version)
  assert(r.metadata.tsc_hz == surge.tsc_hz())
  assert(r.metadata.dpdk_version:find("DPDK 22"), r.metadata.dpdk_version)
  local found
  for _, c in ipairs(r.counters) do if c.name == "t_results_c" then found = c end end
  assert(found and found.value == 7 and found.kind == "counter" and found.lcores == 1)
  assert(r.scenarios.t_demo.rows[1].x == 1)
  local path = os.tmpname() .. ".json"
  surge.results.write(path, r)
  local f = assert(io.open(path))
  local back = assert(json.decode(f:read("*a")))
  f:close()
  os.remove(path)
  assert(back.metadata.command_line[1]:find("surge"), "the command line is recorded")
  assert(back.scenarios.t_demo.rows[1].x == 1)
  local csv = surge.results.csv(r)
  assert(csv:match("^t,interval_s,port,tx_packets,"), csv)
  raises("expected a file name", surge.results.write, "")
end

-- events (surge plot's marks): a rate set from master is one, with its
-- queue and rate; past MAX_EVENTS they are counted in one "dropped" event,
-- never lost silently
function T.events_recorded_and_counted()
  local results = surge.results
  local p = surge.port(0, { txq = 1 })
  local before = #results.collect().events
  p:txq(0):set_rate("2mpps")
  local ev = results.collect().events
  assert(#ev == before + 1, #ev)
  local e = ev[#ev]
  assert(e.kind == "set_rate" and e.port == 0 and e.queue == 0 and e.text == "port 0 queue 0: rate 2mpps", e.text)
  assert(type(e.t) == "number" and e.t >= 0)
  p:txq(0):set_rate(nil)
  assert(results.collect().events[before + 2].text == "port 0 queue 0: rate unpaced")
  local max = results.MAX_EVENTS
  results.MAX_EVENTS = before + 3
  for _ = 1, 5 do results.event("set_rate", "x") end
  ev = results.collect().events
  results.MAX_EVENTS = max
  assert(#ev == before + 4, #ev)
  assert(ev[#ev].kind == "dropped" and ev[#ev].count == 4, ev[#ev].kind)
end

function T.latency_save_hdr_csv()
  local r = surge.latency.receiver{ offset = 44 }
  for i = 1, 1000 do r:add(i * 100, i) end       -- 100 ns .. 100 us, evenly
  local path = os.tmpname()
  local rows = r:save(path)
  local lines = {}
  for l in io.lines(path) do lines[#lines + 1] = l end
  os.remove(path)
  assert(lines[1] == "Value,Percentile,TotalCount,1/(1-Percentile)", lines[1])
  assert(#lines == rows + 1 and rows == #r:buckets(), #lines)
  local last = lines[#lines]
  assert(last == "100000,1.000000000000,1000,Infinity", last)
  local prev_v, prev_n = -1, 0
  for i = 2, #lines do
    local v, p, n = lines[i]:match("^(%d+),([%d.]+),(%d+),")
    v, p, n = tonumber(v), tonumber(p), tonumber(n)
    assert(v > prev_v and n > prev_n and math.abs(p - n / 1000) < 1e-9, lines[i])
    prev_v, prev_n = v, n
  end
  -- the median row: half the samples are at or below ~50 us (bucket width <= 3.1 %)
  for i = 2, #lines do
    local v, _, n = lines[i]:match("^(%d+),([%d.]+),(%d+),")
    if tonumber(n) >= 500 then assert(math.abs(tonumber(v) - 50000) <= 50000 * 0.032, lines[i]) break end
  end
end

function T.plot_from_lua()
  local r = { schema = "surge-results", schema_version = 1,
    series = { ports = { { t = 1, port = 0, tx_pps = 1e6, rx_pps = 5e5 }, { t = 2, port = 0, tx_pps = 2e6, rx_pps = 1e6 } } },
    latency = {}, scenarios = {} }
  local base = os.tmpname()
  local f = assert(io.open(base .. ".json", "w"))
  f:write(json.encode(r))
  f:close()
  if os.execute("command -v gnuplot >/dev/null 2>&1") == 0 then
    -- one file per chart, named after the output's stem
    local files, charts = surge.plot(base .. ".json")
    assert(#files == 1 and files[1] == base .. "-rate.svg" and #charts == 1, tostring(files[1]))
    assert(charts[1].name == "rate" and charts[1].file == files[1] and charts[1].points == 2)
    local svg = assert(io.open(files[1])):read("*a")
    assert(svg:find("<text>Offered and forwarded load (TX and RX per port)</text>", 1, true))
    assert(svg:find("<text>port 0 TX (offered)</text>", 1, true) and svg:find("<text>2 Mpps</text>", 1, true))
    os.remove(files[1])
  end
  raises("must end in .svg or .png", surge.plot, base .. ".json", base .. ".pdf")
  os.remove(base .. ".json")
  os.remove(base)
end

return T
