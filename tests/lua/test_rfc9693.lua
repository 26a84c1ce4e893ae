-- surge.scenario.rfc9693_logic (RFC 9693's decisions) against simulated
-- stateful DUTs with known limits: a setup-rate limiter (the iptables
-- hashlimit of the e2e test: R connections/s with a burst), a connection
-- table of N entries (connlimit), a DUT that passes at the top and one that
-- passes nothing; the trial verdicts on engine counters; the scenario's
-- options refused at the caller's line.
local logic = require("surge.scenario.rfc9693_logic")
local scn = require("surge.scenario.rfc9693")
local errors = require("surge.vm.testrun").errors
local at = require("surge.vm.testrun").at

local T = {}

-- A token bucket of `burst` new connections refilled at R/s, over a trial
-- of `seconds` at `rate`: every connection passes while r*T <= R*T + burst.
local function limiter(R, burst, seconds)
  return function(rate)
    local n = logic.connections(rate, seconds)
    return n <= R * seconds + burst
  end
end

local function within(v, truth, rel, what)
  if math.abs(v - truth) > truth * rel then
    error(("%s: %.2f is not within %g %% of %.2f"):format(what, v, rel * 100, truth), 2)
  end
end

function T.setup_rate_at_the_limiter_truth()
  for _, R in ipairs({ 1000, 3333, 25000 }) do
    local r = logic.rate_search{ lo = 10, hi = 60000, width = 0.005, max_trials = 30, trial = limiter(R, 10, 1) }
    assert(not r.at_top and r.converged, "converged below the top")
    -- passes at R, fails above R + burst / T: the bracket holds the truth
    within(r.rate, R, 0.02, ("setup rate of a %d/s limiter"):format(R))
    assert(r.rate <= R + 10 and r.bracket[2] > r.rate, "the bracket: pass below fail")
    assert(r.trials[1].rate == 60000 and not r.trials[1].pass, "the first trial at the top")
    for _, t in ipairs(r.trials) do assert(t.pass == limiter(R, 10, 1)(t.rate), "each trial's verdict kept") end
  end
end

function T.top_passes_nothing_passes_budget()
  local r = logic.rate_search{ lo = 10, hi = 500, width = 0.01, trial = function() return true end }
  assert(r.at_top and r.rate == 500 and #r.trials == 1, "a DUT that passes at the top needs one trial")
  r = logic.rate_search{ lo = 10, hi = 500, width = 0.01, max_trials = 30, trial = function() return false end }
  assert(r.rate == 0 and not r.at_top, "nothing passed: 0")
  assert(r.trials[#r.trials].rate == 10, "the bottom was tried last")
  r = logic.rate_search{ lo = 10, hi = 5000, width = 0.001, max_trials = 4, trial = limiter(1000, 0, 1) }
  assert(#r.trials == 4 and not r.converged, "the trial budget stops the search, not converged")
  errors("hi 5 must be above lo 10", logic.rate_search, { lo = 10, hi = 5, width = 0.1, trial = print })
  errors("width 1 must be in", logic.rate_search, { lo = 1, hi = 5, width = 1, trial = print })
end

-- The counters of a client engine after a trial of n connections through a
-- table of N entries: min(n, N) established, the rest timed out on their SYN.
local function table_trial(n, N)
  local est = math.min(n, N)
  return { attempted = n, established = est, completed = est, failed_timeout = n - est, failed_rst = 0,
           failed_bad = 0, retransmits = (n - est) * 2 }
end

function T.capacity_verdict()
  local v = logic.capacity(10000, table_trial(10000, 5000))
  assert(v.value == 5000 and v.reached, "a 5000-entry table: 5000")
  v = logic.capacity(400, table_trial(400, 5000))
  assert(v.value == 400 and not v.reached, "all 400 held: the capacity is 400 or more")
  local c = table_trial(1000, 500)
  c.failed_timeout = c.failed_timeout + 3
  local none, why = logic.capacity(1000, c)
  assert(none == nil and why == "3 established connections timed out while held", why)
  c = table_trial(1000, 500)
  c.failed_rst = 2
  none, why = logic.capacity(1000, c)
  assert(none == nil and why:find("reset", 1, true), "resets are no table limit")
  none, why = logic.capacity(10, table_trial(10, 0))
  assert(none == nil and why == "no connection was established", why)
  -- held long enough that the last refused one gave up first
  assert(math.abs(logic.hold(2000, 1000, 0.2, 2, 0.5) - (2 + 0.6 + 0.5)) < 1e-9, "hold")
end

function T.trial_verdicts()
  local ok = { attempted = 100, established = 100, completed = 100, failed_timeout = 0, failed_rst = 0,
               failed_bad = 0, retransmits = 0 }
  assert(logic.setup_pass(100, ok), "all established on the first SYN")
  local c = {}
  for k, v in pairs(ok) do c[k] = v end
  c.retransmits = 1
  local pass, why = logic.setup_pass(100, c)
  assert(not pass and why == "1 segments sent again", why)
  c.retransmits, c.established, c.failed_timeout = 0, 99, 1
  pass, why = logic.setup_pass(100, c)
  assert(not pass and why == "99 of 100 established", why)
  local s = { completed = 100, retransmits = 0 }
  assert(logic.teardown_pass(100, ok, s), "closed cleanly on both sides")
  pass, why = logic.teardown_pass(100, ok, { completed = 98, retransmits = 0 })
  assert(not pass and why == "the server closed 98 of 100 cleanly", why)
  pass, why = logic.teardown_pass(100, ok, { completed = 100, retransmits = 4 })
  assert(not pass and why == "the server sent 4 segments again", why)
  local top, bounded = logic.teardown_top(10000, { rate = 1002 })
  assert(top == 1002 and bounded, "teardown starts at the setup rate")
  top, bounded = logic.teardown_top(10000, nil)
  assert(top == 10000 and not bounded, "else at max")
end

function T.engines_budget()
  assert(logic.check_engines(logic.TESTS, 30) == nil, "30 per search fits 64 engines")
  assert(logic.check_engines({ "setup-rate", "teardown-rate" }, 32):find("need 65 connection engines", 1, true))
end

function T.options_refused_at_the_callers_line()
  errors(at("rfc9693: --tests: 'latency' is not a test (capacity, setup-rate, teardown-rate, throughput)", 1),
    function() scn.run{ tx = 0, rx = 1, tests = "capacity,latency" } end)
  errors(at("rfc9693: --width: 0 must be above 0 and below 1 (100 %)", 1), function()
    scn.run{ tx = 0, rx = 1, width = "0" } end)
  errors(at("rfc9693: --rx: the server needs a port of its own: give --rx, another port than --tx 0", 1),
    function() scn.run{ tx = 0 } end)
  errors(at("rfc9693: --min-rate: 500 connections/s is not below --max-rate 100", 1), function()
    scn.run{ tx = 0, rx = 1, tests = "setup-rate", min_rate = 500, max_rate = 100 } end)
  local msg = "rfc9693: --max-rate: 70000 connections/s for 1 s (--trial) is 70000 connections in a trial; one "
    .. "source address holds at most 64512"
  errors(at(msg, 1), function()
    scn.run{ tx = 0, rx = 1, max_rate = 70000 } end)
  errors(at("rfc9693: --vlan: the connection engine sends untagged frames only", 1), function()
    scn.run{ tx = 0, rx = 1, vlan = 7 } end)
end

-- The http scenario's options: refused at the caller's line as well.
function T.http_options_refused_at_the_callers_line()
  local http = require("surge.scenario.http")
  errors(at("http: --rates: '-5' is not a rate above 0 (connections/s)", 1), function()
    http.run{ rates = "100,-5" } end)
  errors(at("http: --server: 2001:db8::1 is not of the family of --src", 1), function()
    http.run{ server = "2001:db8::1" } end)
  errors(at("http: --rates: 0.1 connections/s for 1 s (--trial) is no connection: give a higher rate or a longer "
    .. "trial", 2), function()
    http.run{ rates = 0.1 } end)
end

return T
