-- surge.scenario.y1564_logic (ITU-T Y.1564's services, steps, availability
-- and verdicts) without packets, the scenario's option checks (what
-- `surge run y1564` refuses before EAL), a receiver that tells services
-- apart by UDP destination port, and the scenario from Lua through the
-- net_ring loopback (port 0 of `surge test`): services by DSCP, UDP port and
-- VLAN all come back, each class sends its share exactly, and a loopback,
-- which polices nothing, fails the overshoot step.
local ffi = require("ffi")
local logic = require("surge.scenario.y1564_logic")
local scn = require("surge.scenario.y1564")
local scenario = require("surge.scenario")
local errors = require("surge.vm.testrun").errors

local T = {}

local function refuse(fmt, ...) error(fmt:format(...), 0) end
local function items(v, parse)
  return scenario.items(v, "--services", { parse = parse })
end
local function services(v) return logic.services(v, items, refuse) end

function T.services_from_text_and_tables()
  local s = services("voice:dscp=46:cir=2mbit:eir=0:flr=0.1%:ftd=10ms:fdv=500us:avail=99.9%,"
    .. "data:port=5001:cir=5m:eir=2.5mbit:ebs=4kb, video:vlan=20:cir=1500000")
  assert(#s == 3, "three services")
  local v = s[1]
  assert(v.name == "voice" and v.dscp == 46 and v.cir_bps == 2e6 and v.eir_bps == 0, "voice")
  assert(math.abs(v.flr - 0.001) < 1e-12 and v.ftd_us == 10000 and v.fdv_us == 500 and v.avail_pct == 99.9,
    "voice's criteria")
  assert(s[2].port == 5001 and s[2].cir_bps == 5e6 and s[2].eir_bps == 2.5e6 and s[2].ebs == 4000 and s[2].cbs == 0,
    "data")
  assert(s[3].vlan == 20 and s[3].cir_bps == 1.5e6 and s[3].flr == 0 and s[3].ftd_us == nil and s[3].avail_pct == nil,
    "video: defaults (FLR 0, delays and availability not judged)")
  assert(logic.match_text(s[2]) == "port 5001" and logic.match_text({}) == "its own flow", "match text")
  -- the same from Lua: a list of tables
  local t = services({ { name = "voice", dscp = 46, cir = "2mbit", flr = 0.001, ftd = 10000 },
                       { name = "data", port = 5001, cir = 5e6, eir = "1mbit" } })
  assert(t[1].dscp == 46 and t[1].cir_bps == 2e6 and t[1].ftd_us == 10000 and t[2].eir_bps == 1e6, "tables")
end

function T.services_refused()
  for _, c in ipairs({
    { "a:dscp=1:cir=1mbit:color=red", "service 'a': unknown key 'color'" },
    { "a:cir=1mbit,a:dscp=2:cir=1mbit", "service 'a' given twice" },
    { "a:dscp=46:cir=1mbit,b:dscp=46:cir=2mbit", "services 'a' and 'b' both match dscp 46" },
    { "a:cir=1mbit,b:cir=2mbit", "services 'a' and 'b' both match its own flow" },
    { "a:dscp=1:cir=1mbit:eir=-1mbit", "service 'a': eir=%-1mbit is negative" },
    { "a:dscp=1:cir=0", "service 'a': cir=0: give a rate above 0" },
    { "a:dscp=1", "service 'a' has no cir" },
    { "a:dscp=64:cir=1mbit", "service 'a': dscp=64 is not an integer in 0..63" },
    { "a:vlan=0:cir=1mbit", "service 'a': vlan=0 is not an integer in 1..4095" },
    { "a:port=70000:cir=1mbit", "service 'a': port=70000 is not an integer in 1..65535" },
    { "a:cir=fast", "service 'a': cir=fast is not a bit rate" },
    { "a:cir=1mbit:flr=1", "service 'a': flr=1 is not a loss ratio in 0..1" },
    { "a:cir=1mbit:ftd=0", "service 'a': ftd=0 is not a delay above 0" },
    { "a:cir=1mbit:avail=101%", "service 'a': avail=101%% is not a percentage" },
    { "a:cir=1mbit:ebs=-1", "service 'a': ebs=%-1 is not a burst size" },
    { "a:cir=1mbit:cir=2mbit", "service 'a': key 'cir' given twice" },
    { "a:cir", "service 'a': 'cir' is not KEY=VALUE" },
    { "a b:cir=1mbit", "'a b:cir=1mbit' is not NAME:KEY=VALUE" },
    { "", "no service given" },
  }) do
    errors("^" .. c[2], services, c[1])
  end
  errors("^service 'x': unknown key 'colour'", services, { { name = "x", cir = 1e6, colour = 1 } })
end

function T.steps()
  local s = services("a:dscp=1:cir=4mbit:eir=2mbit")[1]
  local st = logic.steps(s, 0.25)
  local want = { { "25%", "cir", 1e6 }, { "50%", "cir", 2e6 }, { "75%", "cir", 3e6 }, { "100%", "cir", 4e6 },
                 { "cir+eir", "eir", 6e6 }, { "overshoot", "policing", 7e6 } }
  assert(#st == #want, "six steps")
  for i, w in ipairs(want) do
    assert(st[i].step == w[1] and st[i].kind == w[2] and math.abs(st[i].rate_bps - w[3]) < 1e-6,
      ("step %d: %s %s %g"):format(i, st[i].step, st[i].kind, st[i].rate_bps))
  end
  -- no EIR: no CIR+EIR step; the overshoot is Y.1564's 125 % of CIR
  local z = logic.steps(services("b:dscp=1:cir=4mbit")[1], 0.25)
  assert(#z == 5 and z[5].step == "overshoot" and z[5].rate_bps == 5e6, "EIR 0")
end

function T.availability()
  assert(logic.availability({ 100, 100, 100, 100 }, { 100, 40, 99, 0 }, 0.5) == 50, "two of four intervals up")
  assert(logic.availability({ 100, 0 }, { 100, 0 }, 0.5) == 100, "an interval that sent nothing is not counted")
  assert(logic.availability({}, {}, 0.5) == nil, "nothing sent: none")
  assert(logic.availability({ 10 }, { 12 }, 0) == 100, "copies are no loss, nor a gain")
end

function T.verdicts()
  local s = services("a:dscp=1:cir=4mbit:eir=1mbit:flr=0.1%:ftd=1ms:fdv=200us:avail=99%")[1]
  local good = { ir_bps = 4e6, flr_pct = 0.1, ftd_us = { mean = 900 }, fdv_us = 150, avail_pct = 100, seconds = 1 }
  assert(logic.verdict(s, "cir", good, 0.03), "within every criterion")
  local function fails(kind, over, pattern)
    local m = {}
    for k, v in pairs(good) do m[k] = v end
    for k, v in pairs(over) do m[k] = v end
    local pass, why = logic.verdict(s, kind, m, 0.03)
    assert(not pass and table.concat(why, "; "):match(pattern), ("%s: %s"):format(pattern, table.concat(why, "; ")))
  end
  fails("cir", { flr_pct = 0.2 }, "^FLR 0.2 %% > 0.1 %%$")
  fails("perf", { ftd_us = { mean = 1500 } }, "^FTD 1500 us > 1000 us$")
  fails("cir", { ftd_us = false, fdv_us = false }, "FTD not measured.*FDV not measured")
  fails("cir", { fdv_us = 300 }, "^FDV 300 us > 200 us$")
  fails("perf", { avail_pct = 98 }, "^availability 98 %% < 99 %%$")
  -- above CIR: only the delivered IR counts, between CIR and CIR + EIR
  assert(logic.verdict(s, "policing", { ir_bps = 5.1e6, flr_pct = 30, seconds = 1 }, 0.03), "policed to CIR+EIR")
  -- in figures for people, never an exponent (issue 31 item 17)
  fails("policing", { ir_bps = 6e6, flr_pct = 0 }, "^IR 6 Mbit/s above CIR%+EIR 5 Mbit/s %(not policed%)$")
  fails("eir", { ir_bps = 3e6 }, "^IR 3 Mbit/s below CIR 4 Mbit/s$")
  local tiny = services("t:dscp=1:cir=4mbit:flr=0.0001%")[1]
  local _, why = logic.verdict(tiny, "cir", { ir_bps = 4e6, flr_pct = 0.00012, seconds = 1 }, 0.03)
  assert(table.concat(why, "; ") == "FLR 0.00012 % > 0.0001 %", table.concat(why, "; "))
  -- a policer's bursts: CBS + EBS bytes over the step on top
  local b = services("b:dscp=1:cir=4mbit:eir=1mbit:cbs=10kb:ebs=15kb")[1]
  assert(logic.verdict(b, "policing", { ir_bps = 5.3e6, flr_pct = 10, seconds = 1 }, 0.03), "25 kB = 0.2 Mbit/s over 1 s")
  assert(not logic.verdict(b, "policing", { ir_bps = 5.3e6, flr_pct = 10, seconds = 10 }, 0.03), "not over 10 s")
end

-- What `surge run y1564` checks before EAL (M.plan: the parser's check).
function T.plan_refuses()
  local function plan(over)
    local o = { services = "a:dscp=1:cir=1mbit:eir=1mbit", tests = "config,performance", overshoot = "25%",
                tolerance = "3%", unavailable_flr = "50%", line_rate = "", size = 512 }
    for k, v in pairs(over) do o[k] = v end
    return scn.plan(o)
  end
  local p = plan{}
  assert(p.overshoot == 0.25 and p.tolerance == 0.03 and p.unavailable == 0.5 and p.tests.config and p.tests.performance,
    "the defaults")
  errors("%-%-tests: unknown test 'policing'", plan, { tests = "config,policing" })
  errors("%-%-overshoot: %-1 is not a ratio", plan, { overshoot = "-1" })
  errors("%-%-line%-rate: fast is not a bit rate", plan, { line_rate = "fast" })
  -- a CIR above line rate: 10 Mbit/s of L1 carry 10e6 x 512 / 532 = 9.62 Mbit/s of 512-byte frames
  errors("%-%-services: service 'a': cir 40 Mbit/s is above line rate %(9%.624 Mbit/s of 512%-byte "
    .. "frames, %-%-line%-rate%)", plan, { services = "a:dscp=1:cir=40mbit", line_rate = "10mbit" })
  errors("its overshoot step .* is above line rate", plan, { services = "a:dscp=1:cir=8mbit", line_rate = "10mbit" })
  errors("the services' CIRs add up to 12 Mbit/s, above line rate", plan,
    { services = "a:dscp=1:cir=6mbit,b:dscp=2:cir=6mbit", line_rate = "10mbit", tests = "performance" })
  assert(plan{ services = "a:dscp=1:cir=6mbit,b:dscp=2:cir=6mbit", line_rate = "10mbit", tests = "config" },
    "each alone fits: the configuration test sends one at a time")
end

-- A receiver with a range of flows at another UDP destination port counts
-- a frame only at its own flow's port.
function T.receiver_by_destination_port()
  local counters = require("surge.dut.counters")
  local rx = counters.receiver{ flows = 4, sport0 = 1000, dport = 3842,
                                dports = { { first = 2, flows = 2, dport = 5001 } } }
  local v = { proto = 17, l4 = 0, len = 10 }
  local p = ffi.new("uint8_t[10]")
  local function frame(flow, dport)
    local sp = 1000 + flow
    p[0], p[1], p[2], p[3] = math.floor(sp / 256), sp % 256, math.floor(dport / 256), dport % 256
    p[8], p[9] = 0, 0
    return rx:count(p, v)
  end
  assert(frame(0, 3842) and frame(1, 3842), "flows 0, 1: the default port")
  assert(frame(2, 5001) and frame(3, 5001), "flows 2, 3: port 5001")
  assert(not frame(0, 5001) and not frame(3, 3842), "another flow's port: not test traffic of that flow")
  assert(rx.total == 4, "four counted")
end

-- Availability counts a frame in the interval it was sent in: its place in
-- its flow from the 16-bit sequence number, unwrapped against the highest
-- one seen.
function T.sequence_unwrapped()
  local unwrap = require("surge.dut.trial").unwrap
  assert(unwrap(-1, 0) == 0 and unwrap(-1, 5) == 5, "the first frames of a flow")
  assert(unwrap(65535, 0) == 65536 and unwrap(65530, 3) == 65539, "past the wrap: ahead")
  assert(unwrap(65536, 65535) == 65535, "a late frame from before the wrap: behind")
  assert(unwrap(3 * 65536 + 10, 7) == 3 * 65536 + 7 and unwrap(3 * 65536 + 10, 30000) == 3 * 65536 + 30000,
    "the third wrap")
  assert(unwrap(200000, 200000 % 65536) == 200000, "the same frame again")
end

-- A trial's classes each send their share of the planned frames exactly:
-- unpaced, every round is a whole burst (8) of one class, so without the
-- per-class quota 20 frames at 1:1 went 12 and 8; 3:1 of 41 is 31 and 10
-- (largest remainder: 30.75 -> 31).
function T.trial_class_shares_exact()
  local s = require("surge.dut").session{ tx = 0 }
  for _, c in ipairs({ { 20, 1, 1, 10, 10 }, { 41, 3, 1, 31, 10 } }) do
    local t = s:trial{ count = c[1], settle = 0.05, classes = { { size = 128, share = c[2] }, { size = 128, dport = 5001,
      share = c[3] } } }
    assert(t.classes[1].sent == c[4] and t.classes[2].sent == c[5] and t.sent == c[1],
      ("%d frames at %d:%d went %d and %d"):format(c[1], c[2], c[3], t.classes[1].sent, t.classes[2].sent))
    assert(t.classes[1].received == c[4] and t.classes[2].received == c[5], "all back, the second at its own port")
  end
end

-- The scenario from Lua on the ring loopback: every service's frames come
-- back (DSCP, UDP port and VLAN), each class of the performance test sends
-- exactly its planned frames, the intervals add up, and the loopback, which
-- polices nothing, fails the overshoot step; the results have the rows.
function T.scenario_from_lua()
  local r = scn.run{ tx = 0, size = 256, step = 0.2, duration = 0.4, settle = 0.05, interval = 0.1,
    services = { { name = "voice", dscp = 46, cir = "1mbit", flr = 0 },
                 { name = "data", port = 5001, cir = "2mbit", eir = "1mbit" },
                 { name = "video", vlan = 20, cir = "1mbit" } } }
  assert(r.scenario == "y1564" and r.size == 256, "the results")
  assert(#r.rows == 5 + 6 + 5 + 3, "a row per step and service, and per service in the performance test")
  local perf = {}
  for _, row in ipairs(r.rows) do
    assert(row.received == row.sent and row.sent > 0, ("%s %s: all back (%d of %d)"):format(row.service, row.step,
      row.received, row.sent))
    assert(row.flr_pct == 0 and row.ftd_us and row.ftd_us.min <= row.ftd_us.mean and row.fdv_us >= 0,
      row.service .. " " .. row.step .. ": FLR, FTD, FDV")
    assert(row.avail_pct == 100, "available")
    if row.kind == "policing" then
      assert(row.pass == false and row.why:match("not policed"), row.service .. ": a loopback polices nothing")
    else
      assert(row.pass == true, row.service .. " " .. row.step .. " passes: " .. row.why)
    end
    if row.step == "performance" then perf[row.service] = row end
  end
  -- 256-byte frames: 1 Mbit/s is 488.28 frames/s, 0.4 s: 195.3; 2 Mbit/s 390.6
  -- (unless the busy machine held surge's sender past the trial's catch-up:
  -- then the rows say so, and the counts are surge's)
  if not perf.voice.sender_limited then
    assert(perf.voice.sent + perf.data.sent + perf.video.sent == 781, "the planned total")
    assert(perf.voice.sent == 195 and perf.video.sent == 195 and perf.data.sent == 391, "each service its share")
  end
  assert(r.pass == false, "not every step passed")
  assert(scn.report(r):find("voice +overshoot .* FAIL"), "the report")
  errors("y1564: %-%-interval: 1e%-05 s cuts a 5 s trial into 500000 intervals, more than 100000", function()
    scn.run{ tx = 0, interval = 1e-5 } end)
  errors("y1564: %-%-services: service 'x': unknown key 'colour'", function()
    scn.run{ tx = 0, services = { { name = "x", cir = 1e6, colour = 1 } } } end)
end

return T
