-- scenario/kit/rates.lua - rates: the one L1 formula (a frame of `size`
-- bytes with FCS takes size + 20 bytes of the wire: preamble, start
-- delimiter, inter-frame gap), a rate as users write it, and the checks a
-- planned rate and trial time must pass before any traffic.
local dut = require("surge.dut")
local numbers = require("surge.scenario.kit.numbers")
local options = require("surge.scenario.kit.options")
local as_given = numbers.given

local M = {}

-- Bits of the wire one frame of `size` bytes (with FCS) takes: dut's
-- formula (the session's line rate uses it too; dut is below the kit).
M.l1 = dut.l1_bits

-- Frames/s of `size` bytes that `bps` bits/s of the wire carry (L1).
function M.l1_pps(bps, size) return bps / M.l1(size) end

-- The latency probes of a trial at `rate` pps with `probes` a second: a
-- probe every this many frames, 1 at least, and at most the 2^32 - 1 a
-- marker counts (--probes 1e-6 asked for a probe every 1e10 frames, and
-- the marker refused it in the middle of the run).
function M.probe_every(rate, probes)
  return math.min(4294967295, math.max(1, math.floor(rate / probes)))
end

-- A rate in frames/s for frames of `size` bytes (with FCS): "100kpps",
-- "1.5mpps", 250000, "1gbit" (L1), "40%" (of line rate). option: the option
-- it came from ("--rate"). Refused (options.refuse): anything else, a rate of 0
-- (not a load; allowed where zero_ok says, a search's bottom), and more than
-- line rate (100 %) where the port reports its speed (line_pps > 0).
function M.pps(text, size, line_pps, option, zero_ok)
  option = option or "rate"
  local rate
  if type(text) == "number" then
    if text == text and text >= 0 and text < math.huge then rate = text end
  elseif type(text) == "string" then
    local v, unit = text:lower():match("^%s*([%d%.]+)%s*([%a%%]*)%s*$")
    v = numbers.finite(v)
    local mult = { [""] = 1, pps = 1, kpps = 1e3, mpps = 1e6 }
    local bits = { bit = 1, kbit = 1e3, mbit = 1e6, gbit = 1e9 }
    if v and mult[unit] then rate = v * mult[unit]
    elseif v and bits[unit] then rate = M.l1_pps(v * bits[unit], size)
    elseif v and unit == "%" then
      if not line_pps or line_pps == 0 then
        options.refuse(option, "'%s': the port reports no link speed; give pps (e.g. 1mpps)", text)
      end
      rate = line_pps * v / 100
    end
  end
  if rate == nil then options.refuse(option, "%s is not a rate (1mpps, 250kpps, 1gbit, 50%%)", as_given(text)) end
  if rate == 0 and not zero_ok then options.refuse(option, "%s is not a load: give a rate above 0", as_given(text)) end
  if line_pps and line_pps > 0 and rate > line_pps * (1 + 1e-9) then
    options.refuse(option, "%s is more than 100 %% of line rate (%.0f pps for %g-byte frames)", as_given(text), line_pps,
      size)
  end
  return rate
end

-- A trial at `rate` pps for `seconds` s must send at least one frame: with
-- fewer, the paced sender sends none (or overruns the trial waiting for its
-- first slot), and a trial that sends nothing measures nothing (its loss
-- reads 0 %). Every rate and trial time a scenario plans is checked here,
-- before any traffic; rate_from, trial_from: the options they come from,
-- for the one line that names them ("0.5 pps (--rate) for 0.1 s (--trial)").
function M.check_frames(rate, seconds, rate_from, trial_from)
  local n = rate * seconds
  if n < 1 - 1e-9 then
    options.refuse(nil, "%.4g pps (%s) for %.4g s (%s) is %.3g frames: a trial must send 1 or more "
      .. "(give a higher rate or a longer trial)", rate, rate_from, seconds, trial_from, n)
  end
end

return M
