-- Scenario options a scenario reads itself, found by a hostile tester: every
-- list option goes through scenario.items (an empty item or a repeated one
-- is refused naming the option; load-latency's rates may repeat), and every
-- rate and trial time through scenario.check_frames (a trial must send a
-- frame). From Lua each is one error at the caller's line. Also surge.plot
-- given a directory: one line saying so, at the caller's line.
local surge = require("surge")
local scenario = require("surge.scenario")
local errors = require("surge.vm.testrun").errors

local T = {}

local at = require("surge.vm.testrun").at

-- A user scenario's name in the messages, as scenario.defaults sets it.
local function mine()
  scenario.defaults("mine", { description = "a test", options = function() end })
end

local function same(a, b, what)
  assert(#a == #b, ("%s: %d items, expected %d"):format(what, #a, #b))
  for i = 1, #b do assert(a[i] == b[i], ("%s: item %d is %s, expected %s"):format(what, i, tostring(a[i]), tostring(b[i]))) end
end

function T.items_split_on_commas()
  mine()
  same(scenario.items("64, 128 ,imix", "--x"), { "64", "128", "imix" }, "spaces around items")
  same(scenario.items("", "--x"), {}, "no text: no item")
  same(scenario.items(" , ", "--x"), {}, "only commas: no item (the caller says none was given)")
  same(scenario.items(64, "--x"), { 64 }, "a number")
  same(scenario.items({ 1, "b" }, "--x"), { 1, "b" }, "a list from Lua")
  same(scenario.items("a,a", "--x"), { "a", "a" }, "repeats allowed without unique")
  same(scenario.items("1,2", "--x", { parse = tonumber }), { 1, 2 }, "parsed")
end

function T.items_refuse_empty_items()
  mine()
  errors(at("mine: --sizes: empty item in '64,,128'"), function() scenario.items("64,,128", "--sizes") end)
  errors(at("mine: --sizes: empty item in '64,'"), function() scenario.items("64,", "--sizes") end)
  errors(at("mine: --sizes: empty item in ',64'"), function() scenario.items(",64", "--sizes") end)
  errors(at("mine: --sizes: empty item in '64, ,128'"), function() scenario.items("64, ,128", "--sizes") end)
  errors(at("mine: --x: expected a list, got true"), function() scenario.items(true, "--x", { expected = "a list" }) end)
end

function T.items_refuse_repeats_when_unique()
  mine()
  local m = "mine: --x: name 'a' given twice in 'a,b,a'"
  errors(at(m), function() scenario.items("a,b,a", "--x", { unique = true, what = "name" }) end)
  -- the parsed value counts: 64 and 064 are one size; a key function
  errors(at("mine: --sizes: size 64 given twice in '64,064'"), function() scenario.sizes("64,064") end)
  errors(at("mine: --sizes: size 64 given twice"), function() scenario.sizes({ 64, 64 }) end)
  local key = function(v) return v:match("^[^:]*") end
  errors(at("mine: --c: 'ef' given twice in 'ef:1,ef:2'"), function() scenario.items("ef:1,ef:2", "--c", { unique = key }) end)
  errors(at("mine: --sizes: no frame sizes given"), function() scenario.sizes(",") end)
  same(scenario.sizes("64, 1518"), { 64, 1518 }, "sizes")
end

function T.check_frames_needs_one_frame()
  mine()
  local m = "mine: 0.5 pps (--rate) for 0.1 s (--trial) is 0.05 frames: a trial must send 1 or more "
    .. "(give a higher rate or a longer trial)"
  errors(at(m), function() scenario.check_frames(0.5, 0.1, "--rate", "--trial") end)
  scenario.check_frames(10, 0.1, "--rate", "--trial")       -- exactly one frame
  scenario.check_frames(1e6, 2, "--rate", "--trial")
end

-- The built-in scenarios from Lua: refused before any traffic, at the call.
local function run(name, opts) return require("surge.scenario." .. name).run(opts) end
local TAIL = " a trial must send 1 or more (give a higher rate or a longer trial)"

function T.scenarios_refuse_empty_and_repeated_items()
  local m
  m = "rfc2544: --tests: empty item in 'throughput,,latency'"
  errors(at(m), function() run("rfc2544", { tests = "throughput,,latency" }) end)
  m = "rfc2544: --tests: test 'throughput' given twice in 'throughput,throughput'"
  errors(at(m), function() run("rfc2544", { tests = "throughput,throughput" }) end)
  m = "rfc2544: --sizes: empty item in '64,,128'"
  errors(at(m), function() run("rfc2544", { sizes = "64,,128" }) end)
  m = "rfc2544: --sizes: size 128 given twice in '64,128,128'"
  errors(at(m), function() run("rfc2544", { sizes = "64,128,128" }) end)
  m = "flood: --sizes: size 64 given twice in '64,64'"
  errors(at(m), function() run("flood", { sizes = "64,64" }) end)
  m = "load-latency: --rates: empty item in '10kpps,,20kpps'"
  errors(at(m), function() run("load_latency", { rates = "10kpps,,20kpps" }) end)
  m = "qos: --classes: empty item in 'ef:46:1kpps,,be:0:2kpps'"
  errors(at(m), function() run("qos", { classes = "ef:46:1kpps,,be:0:2kpps" }) end)
  m = "qos: --classes: class 'ef' given twice in 'ef:46:1kpps,ef:0:2kpps'"
  errors(at(m), function() run("qos", { classes = "ef:46:1kpps,ef:0:2kpps" }) end)
end

function T.scenarios_refuse_trials_without_a_frame()
  local m
  m = "flood: 0.5 pps (--rate) for 0.1 s (--trial) is 0.05 frames:" .. TAIL
  errors(at(m), function() run("flood", { rate = "0.5pps", trial = 0.1 }) end)
  m = "flood: 0.8333 pps (the 1518-byte frames' share of --rate) for 0.5 s (--trial) is 0.417 frames:" .. TAIL
  errors(at(m), function() run("flood", { sizes = "imix", rate = "10pps", trial = 0.5 }) end)
  m = "qos: 1 pps (class 'ef' of --classes) for 0.5 s (--trial) is 0.5 frames:" .. TAIL
  errors(at(m), function() run("qos", { classes = "ef:46:1pps,be:0:2kpps", trial = 0.5 }) end)
  m = "load-latency: 0.5 pps (--rates) for 1 s (--trial) is 0.5 frames:" .. TAIL
  errors(at(m), function() run("load_latency", { rates = "10kpps,0.5pps" }) end)
  m = "rfc2544: 7.813 pps (64 bytes, the lowest rate the throughput search can try from --max-rate, "
    .. "--min-rate, --resolution and --max-trials) for 0.1 s (--trial) is 0.781 frames:" .. TAIL
  errors(at(m), function() run("rfc2544", { sizes = "64", max_rate = "1kpps", trial = 0.1 }) end)
  m = "rfc2544: 10 pps (64 bytes, the frame loss test's last step, --loss-step of --max-rate) for 0.05 s "
    .. "(--trial) is 0.5 frames:" .. TAIL
  errors(at(m), function() run("rfc2544", { sizes = "64", max_rate = "100pps", trial = 0.05, tests = "loss" }) end)
  m = "rfc2544: 5 pps (64 bytes, --max-rate) for 0.1 s (--latency-trial) is 0.5 frames:" .. TAIL
  errors(at(m), function() run("rfc2544", { sizes = "64", max_rate = "5pps", tests = "latency", latency_trial = 0.1 }) end)
end

-- A rate given twice is a point of its own (up and back down: does latency
-- recover?): both run, in order (port 0 is net_ring0, a loopback).
function T.load_latency_rates_may_repeat()
  local r = run("load_latency", { tx = 0, rates = "10kpps,20kpps,10kpps", trial = 0.05, settle = 0.05 })
  assert(#r.points == 3, "three points, got " .. #r.points)
  same({ r.points[1].rate_pps, r.points[2].rate_pps, r.points[3].rate_pps }, { 10000, 20000, 10000 }, "rates")
  for _, p in ipairs(r.points) do assert(p.sent > 0 and p.received > 0, "each point measured") end
end

-- surge.plot on a directory (io.open opens one; its read fails): one line
-- at the caller's line, like a missing file.
function T.plot_a_directory()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir " .. dir) == 0)
  errors(at(("surge plot: cannot read '%s': Is a directory"):format(dir)), function() surge.plot(dir) end)
  local m = ("surge plot: cannot read '%s/none.json': No such file or directory"):format(dir)
  errors(at(m), function() surge.plot(dir .. "/none.json") end)
  os.execute("rmdir " .. dir)
end

return T
