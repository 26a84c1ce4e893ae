-- surge.dut.frames - how many frames a trial at a rate for a time intends:
-- the one count every sender of a scenario plans (surge.dut.trial,
-- surge.dut.l2's streams, surge.dut.mcast's timeline, the connection
-- scenarios) and every loss is counted against (mlr.trial_loss). Two
-- roundings of one product in two places once scored a lossy trial as
-- lossless: MLRsearch counted floor(load x duration) frames intended while
-- the trial sent round(load x duration), so one lost frame vanished.
local M = {}

-- Frames of a trial at `rate` per second for `seconds`: rate x seconds
-- rounded to the nearest whole frame (frame j is due at j / rate, the
-- last one before the end), at least `least` (default 1: a trial sends a
-- frame; 0 where an empty window is allowed).
function M.planned(rate, seconds, least)
  return math.max(least or 1, math.floor(rate * seconds + 0.5))
end

return M
