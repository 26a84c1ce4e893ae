-- results/progress.lua - progress with an ETA for runs that know where they end.
--
--   surge.progress(done, total, "packets")   -- draw now (rate-limited)
--   surge.progress.watch("packets", total, function() return q:stats().packets end)
--                                           -- surge.wait() polls it for you
--
-- On a terminal one line on stderr is rewritten in place ("\r"); otherwise a
-- plain line is printed every few seconds. It ends with the 100 % line when
-- done reaches total. --quiet silences it; a total of 0 draws nothing. done
-- and total are counts: numbers in 0..2^53 (anything else is an error).
local ffi = require("ffi")
local check = require("surge.check")
local core = require("surge.core")

local C = core.C
pcall(ffi.cdef, "int isatty(int fd);")

local M = { tty = ffi.C.isatty(2) ~= 0, plain_every_s = 2, tty_every_s = 0.1 }
local cur = nil     -- the line being drawn: { label, total, t0, last, finished, fn }

local function now() return tonumber(C.surge_tsc()) / tonumber(C.surge_tsc_hz()) end

local function clock(s)
  s = math.max(0, math.floor(s + 0.5))
  if s >= 3600 then return ("%d:%02d:%02d"):format(s / 3600, s / 60 % 60, s % 60) end
  return ("%d:%02d"):format(s / 60, s % 60)
end

-- One more reader of each progress line, besides stderr: a client of the
-- control socket that asked for them (python/surge: a scenario's progress
-- callback). tap(fn) sets it and returns the one it replaces.
local tapped = nil
function M.tap(fn)
  local old = tapped
  tapped = fn
  return old
end

local function draw(p, done, t, final)
  local pct = math.min(100, done * 100 / p.total)
  local elapsed = t - p.t0
  local eta = done > 0 and done < p.total and elapsed * (p.total - done) / done or 0
  local text = ("%s %5.1f%% %d/%d  elapsed %s  ETA %s"):format(p.label, pct, done, p.total,
    clock(elapsed), done >= p.total and "0:00" or (done > 0 and clock(eta) or "?"))
  if M.tty then
    -- the cursor goes back to column 0, so a stats line printed on stdout
    -- meanwhile overwrites this line instead of running on after it
    io.stderr:write("\r\27[K", text, final and "\n" or "\r")
  else
    io.stderr:write("progress: ", text, "\n")
  end
  io.stderr:flush()
  if tapped then pcall(tapped, "progress: " .. text) end
  p.last = t
end

local function update(done, total, label, final)
  if C.surge_quiet() ~= 0 or type(total) ~= "number" or total <= 0 then return end
  done = tonumber(done) or 0
  if not cur or cur.label ~= label or cur.total ~= total or cur.finished then
    if cur and cur.finished and cur.label == label and cur.total == total then return end
    cur = { label = label or "progress", total = total, t0 = now(), last = -1e9 }
  end
  local t = now()
  local finished = done >= total
  if finished or final or t - cur.last >= (M.tty and M.tty_every_s or M.plain_every_s) then
    draw(cur, math.min(done, total), t, finished or final)
    cur.finished = finished or final
  end
end

-- Counts are numbers in 0..2^53 (packets, bytes, steps): no NaN, infinity
-- or negative count reaches the line.
local COUNT = "number 0..9007199254740992"

-- Registers fn() -> done for surge.wait()/surge.poll() to call.
function M.watch(label, total, fn)
  check.expect(label, "string?", "surge.progress.watch", "label")
  check.expect(total, COUNT, "surge.progress.watch", "total")
  check.expect(fn, "function", "surge.progress.watch", "fn")
  M.watching = { label = label, total = total, fn = fn }
end

-- Called by surge.wait(); final = the tasks are done: close the line.
function M.poll(final)
  local w = M.watching
  if not w then return end
  local ok, done = pcall(w.fn)
  if not ok then M.watching = nil return end
  done = tonumber(done)
  if done == nil or not (done >= 0 and done <= 2 ^ 53) then done = 0 end   -- a count fn() got wrong draws 0
  update(done, w.total, w.label, final)
  if final then M.watching = nil end
end

return setmetatable(M, { __call = function(_, done, total, label)
  check.expect(done, COUNT, "surge.progress", "done")
  check.expect(total, COUNT, "surge.progress", "total")
  check.expect(label, "string?", "surge.progress", "label")
  update(done, total, label, false)
end })
