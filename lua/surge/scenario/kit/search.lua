-- search.lua - the search logic of RFC 2544 tests, free of packets and
-- ports: each takes a `trial` function, so the tests drive it with a
-- simulated DUT whose loss curve is known (tests/lua/test_scenario_search.lua).
local numbers = require("surge.scenario.kit.numbers")
local M = {}

local num = numbers.checker("search", true)

-- The one bisection every search halves its bracket with (RFC 2544's
-- throughput and back-to-back here, rfc9693's rate searches, rfc2889's
-- largest value): between pass (the highest value that passed; nil: none
-- yet, lo is the bottom) and fail (the lowest that failed), a trial at the
-- middle while more() and not narrow(bottom, fail); o.try(v) runs and
-- records one, true when it passed. integer: the middle rounded down;
-- integer or strict: stop when the middle is not strictly inside (pass, or
-- o.floor when none passed; fail). Returns pass, fail.
function M.bisect(o)
  local pass, fail = o.pass, o.fail
  while o.more() and not o.narrow(pass or o.lo, fail) do
    local mid = ((pass or o.lo) + fail) / 2
    if o.integer then mid = math.floor(mid) end
    if (o.integer or o.strict) and (mid <= (pass or o.floor or o.lo) or mid >= fail) then break end
    if o.try(mid) then pass = mid else fail = mid end
  end
  return pass, fail
end

-- Throughput (RFC 2544 26.1): the highest offered rate whose trial loses no
-- more than `tolerance` percent. o: lo, hi (rates), resolution (stop when
-- the pass/fail bracket is narrower than this, same unit), max_trials,
-- tolerance (%), trial(rate) -> loss_pct [, extra]. The first trial is at
-- hi (a DUT that passes at the top needs no search).
-- Returns { rate = best passing rate (0: none passed), trials = { { rate,
-- loss_pct, pass, extra } }, bracket = { pass, fail }, converged }.
function M.throughput(o)
  local lo, hi = num(o.lo or 0, "lo"), num(o.hi, "hi")
  local res = num(o.resolution, "resolution")
  local tol = num(o.tolerance or 0, "tolerance")
  local max_trials = num(o.max_trials or 20, "max_trials", 1)
  if hi <= lo then error(("search: hi %g must be above lo %g"):format(hi, lo), 2) end
  local trials = {}
  local function try(rate)
    local loss, extra = o.trial(rate)
    local pass = loss <= tol
    trials[#trials + 1] = { rate = rate, loss_pct = loss, pass = pass, extra = extra }
    return pass
  end
  if try(hi) then
    return { rate = hi, trials = trials, bracket = { hi, nil }, converged = true }
  end
  local low = lo
  local pass, fail = M.bisect{ lo = low, fail = hi, try = try, more = function() return #trials < max_trials end,
    narrow = function(bottom, top) return top - bottom <= res end }
  return { rate = pass or 0, trials = trials, bracket = { pass or low, fail },
           converged = fail - (pass or low) <= res }
end

-- Frame loss rate (RFC 2544 26.3): trials from `hi` down in steps of
-- `step_pct` percent of hi, stopping after two successive trials without
-- loss (or at the lowest step). Returns { { pct, rate, loss_pct, extra } }.
function M.loss_curve(o)
  local hi = num(o.hi, "hi")
  local step = num(o.step_pct or 10, "step_pct", 1)
  local lowest = num(o.lowest_pct or step, "lowest_pct", 0)
  local out, clean = {}, 0
  local pct = 100
  while pct >= lowest - 1e-9 do
    local loss, extra = o.trial(hi * pct / 100)
    out[#out + 1] = { pct = pct, rate = hi * pct / 100, loss_pct = loss, extra = extra }
    clean = loss == 0 and clean + 1 or 0
    if clean >= 2 then break end
    pct = pct - step
  end
  return out
end

-- Back-to-back (RFC 2544 26.4): the longest burst (frames sent as fast as
-- possible) that arrives whole. o: lo, hi (frames), resolution (frames),
-- max_trials, trial(frames) -> lost frames. Returns { frames = longest
-- passing length (0: none), trials = { { frames, lost, pass } } }.
function M.back_to_back(o)
  local hi = math.floor(num(o.hi, "hi", 1))
  local lo = math.floor(num(o.lo or 1, "lo", 1))
  local res = math.max(1, num(o.resolution or 1, "resolution"))
  local max_trials = num(o.max_trials or 20, "max_trials", 1)
  local trials = {}
  local function try(n)
    local lost = o.trial(n)
    trials[#trials + 1] = { frames = n, lost = lost, pass = lost == 0 }
    return lost == 0
  end
  if try(hi) then return { frames = hi, trials = trials } end
  local pass, fail = M.bisect{ lo = lo, fail = hi, try = try, integer = true, floor = 0,
    more = function() return #trials < max_trials end, narrow = function(bottom, top) return top - bottom <= res end }
  if not pass and lo < fail and #trials < max_trials and try(lo) then pass = lo end
  return { frames = pass or 0, trials = trials }
end

return M
