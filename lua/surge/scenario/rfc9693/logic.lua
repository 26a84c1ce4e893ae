-- scenario/rfc9693/logic.lua - the decisions of the rfc9693 scenario (RFC 9693,
-- benchmarking stateful DUTs), free of packets and ports: the rate search of
-- the setup and teardown tests, what makes a trial pass, the capacity
-- verdict and the plan of each trial. Each search takes a `trial` function,
-- so tests/lua/test_rfc9693.lua drives it with simulated DUTs whose limits
-- are known; scenario/rfc9693/tasks.lua drives it with connections through one.
local frames = require("surge.dut.frames")
local numbers = require("surge.scenario.kit.numbers")
local search = require("surge.scenario.kit.search")

local M = {}

-- The tests, in the order they run (the setup rate bounds the teardown
-- search: see M.teardown_top), as --tests names them.
M.TESTS = { "capacity", "setup-rate", "teardown-rate", "throughput" }
-- Their names in the result rows (docs/results.md): the tests' with "_".
M.ROW = { capacity = "capacity", ["setup-rate"] = "setup_rate", ["teardown-rate"] = "teardown_rate",
          throughput = "throughput" }
-- A client uses source port sport + i for its entry i: one client engine
-- holds at most 65536 - 1024 connections (docs/connections.md).
M.MAX_CONNECTIONS = 64512
-- surge_conn_new makes at most 64 engines in a run (SURGE_CONN_MAX): the
-- server, one client per trial.
M.MAX_ENGINES = 64

local num = numbers.checker("rfc9693", true)

-- The highest rate whose trial passes: a bisection between lo and hi
-- (connections/s) until the pass/fail bracket is narrower than `width`
-- (relative to the failing rate: 0.005 = 0.5 %) or max_trials ran.
-- trial(rate) -> pass [, extra]. The first trial is at hi: a DUT that
-- passes there needs no search (at_top: the figure is hi or more). lo is
-- tried when every rate above it failed down to the bracket's width.
-- Returns { rate (0: none passed), trials = { { rate, pass, extra } },
-- bracket = { pass, fail }, at_top, converged }.
function M.rate_search(o)
  local lo, hi = num(o.lo, "lo", 0), num(o.hi, "hi", 0)
  local width = num(o.width, "width", 0)
  local max_trials = num(o.max_trials or 20, "max_trials", 1)
  if hi <= lo then error(("rfc9693: hi %g must be above lo %g"):format(hi, lo), 2) end
  if width <= 0 or width >= 1 then error(("rfc9693: width %g must be in (0, 1)"):format(width), 2) end
  local trials = {}
  local function try(rate)
    local pass, extra = o.trial(rate)
    trials[#trials + 1] = { rate = rate, pass = pass and true or false, extra = extra }
    return pass
  end
  if try(hi) then
    return { rate = hi, trials = trials, bracket = { hi, nil }, at_top = true, converged = true }
  end
  local pass, fail = search.bisect{ lo = lo, fail = hi, try = try, more = function() return #trials < max_trials end,
    narrow = function(bottom, top) return (top - bottom) / top <= width end }
  local function narrow() return (fail - (pass or lo)) / fail <= width end
  if not pass and lo > 0 and #trials < max_trials and narrow() then
    if try(lo) then pass = lo else fail = lo end
  end
  return { rate = pass or 0, trials = trials, bracket = { pass or 0, fail }, at_top = false,
           converged = narrow() }
end

-- Connections a trial at `rate` for `seconds` opens: at least one.
function M.connections(rate, seconds)
  return frames.planned(rate, seconds)
end

-- How long a connection is held open (the client's think time between its
-- two requests) so that every other connection of the trial was decided
-- first: all n opened at `rate` (n / rate s), and the last one's SYN sent
-- again `retries` times, `rto` apart, before it gives up; plus `margin`
-- (the DUT's and surge's delays). Held that long, no connection closes
-- while one that the DUT refused could still get through in its place.
function M.hold(n, rate, rto, retries, margin)
  return n / rate + rto * (retries + 1) + (margin or 0.5)
end

-- The counters a trial's verdict reads: a client engine's (its own,
-- from 0) and the server's difference over the trial. Setup: every one of
-- the n connections was established on its first SYN (no segment sent
-- again) and none failed. Returns pass, and why not (one phrase).
function M.setup_pass(n, c)
  if c.attempted < n then return false, ("%d of %d opened"):format(c.attempted, n) end
  if c.established < n then return false, ("%d of %d established"):format(c.established, n) end
  local failed = c.failed_timeout + c.failed_rst + c.failed_bad
  if failed > 0 then return false, ("%d failed"):format(failed) end
  if c.retransmits > 0 then return false, ("%d segments sent again"):format(c.retransmits) end
  return true
end

-- Teardown: every connection also closed cleanly on both sides (the
-- server saw the close through: its completed count), with nothing sent
-- again on either side.
function M.teardown_pass(n, c, s)
  local ok, why = M.setup_pass(n, c)
  if not ok then return ok, why end
  if c.completed < n then return false, ("%d of %d completed"):format(c.completed, n) end
  if s.completed < n then return false, ("the server closed %d of %d cleanly"):format(s.completed, n) end
  if s.retransmits > 0 then return false, ("the server sent %d segments again"):format(s.retransmits) end
  return true
end

-- Capacity: n connections offered and held; the DUT's table holds what
-- got through. Returns { value = connections established, reached =
-- whether the DUT refused any (false: it held all n, the capacity is n or
-- more) }, or nil and why when the trial cannot tell (nothing got
-- through, or a connection failed other than by its SYN going unanswered).
function M.capacity(n, c)
  if c.established == 0 then return nil, "no connection was established" end
  if c.failed_rst > 0 or c.failed_bad > 0 then
    return nil, ("%d connections were reset and %d got a bad response: not a table limit"):format(c.failed_rst,
      c.failed_bad)
  end
  -- an established connection that timed out later was lost by the DUT
  -- while held: what it held at the end is less than what got through
  local lost = c.failed_timeout - (n - c.established)
  if lost > 0 then
    return nil, ("%d established connections timed out while held"):format(lost)
  end
  return { value = c.established, reached = c.established < n }
end

-- The top of the teardown search: a teardown trial opens its connections
-- at the rate it closes them, so it cannot close faster than the DUT
-- opens; with the setup rate measured (setup: its result) the search
-- starts there, else at max.
function M.teardown_top(max, setup)
  if setup and setup.rate and setup.rate > 0 and setup.rate < max then return setup.rate, true end
  return max, false
end

-- Client engines the plan needs at most, and whether that fits beside the
-- server: nil, or why not.
function M.check_engines(tests, max_trials)
  local n = 1
  for _, t in ipairs(tests) do
    n = n + ((t == "setup-rate" or t == "teardown-rate") and max_trials or 1)
  end
  if n > M.MAX_ENGINES then
    return ("%d trials planned (%d per search) and the server need %d connection engines; a run has %d"):format(
      n - 1, max_trials, n, M.MAX_ENGINES)
  end
  return nil
end

return M
