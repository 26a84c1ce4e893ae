-- rate.lua - rate specs for paced queues.
--
--   q:set_rate("1mpps")                       -- constant
--   q:set_rate("10gbit")                      -- L1 (wire) bit rate; "10gbit-l2" for frames+FCS
--   q:set_rate("40%")                         -- of the port's link speed, at L1
--   q:set_rate{ rate = "1mpps", pattern = "poisson", seed = 7 }
--   q:set_rate{ rate = "1mpps", pattern = "onoff", on = 1000, off = 0.01 }  -- 1000 pkts, 10 ms off
--   q:set_rate{ rate = "100kpps", pattern = "ramp", to = "1mpps", over = 5 }
--   q:set_rate{ gap = function() return 1000 end }   -- ns before each packet, from Lua
--   q:set_rate{ rate = "1gbit", hw = true }   -- the NIC's queue rate limiter, if it has one
--   q:set_rate{ rate = "1mpps", catchup = "skip" }  -- behind schedule: drop it, keep the gaps
--   q:set_rate{ rate = "1mpps", catchup = "burst", max_late_us = 1000 }  -- send late ones at once (default)
--   q:set_rate(nil) or q:set_rate(0)          -- unpaced
local ffi = require("ffi")
local core = require("surge.core")
local check = require("surge.check")

local C = core.C
local M = {}

local patterns = { constant = C.SURGE_PACE_CONSTANT, poisson = C.SURGE_PACE_POISSON,
                   onoff = C.SURGE_PACE_ONOFF, ramp = C.SURGE_PACE_RAMP }
local keys = { rate = 1, pattern = 1, seed = 1, on = 1, off = 1, to = 1, over = 1, gap = 1, hw = 1,
               catchup = 1, max_late_us = 1 }
local catchups = { burst = C.SURGE_CATCHUP_BURST, skip = C.SURGE_CATCHUP_SKIP }
M.catchup_names = { [0] = "burst", "skip" }

local function set_catchup(r, spec, fn)
  if spec.catchup ~= nil then
    local c = catchups[spec.catchup]
    if not c then check.raise(("%s: catchup '%s' unknown (burst, skip)"):format(fn, tostring(spec.catchup))) end
    r.catchup = c
  end
  local ml = spec.max_late_us
  if ml ~= nil then
    if type(ml) ~= "number" or ml < 0 or ml > 1e7 or ml ~= math.floor(ml) then
      check.raise(("%s: max_late_us = %s: microseconds, 0..10000000"):format(fn, tostring(ml)))
    end
    r.max_late_us = ml
  end
  return r
end

-- (fn: "rate", or "OWNER: rate" for a rate that is an option of OWNER)
local function parse_value(text, what, fn)
  local r = ffi.new("struct surge_rate")
  local owner = fn:match("^(.*): rate$")
  if type(text) == "number" then
    check.expect(text, "number >=0", fn, what)
    text = ("%.17gpps"):format(text)
  end
  if type(text) ~= "string" then
    check.raise(("%s%s must be a string like \"1mpps\", got %s"):format(owner and owner .. ": " or "", what,
      check.show(text)))
  end
  if C.surge_rate_parse(text, r) < 0 then check.raise((owner and owner .. ": " or "") .. core.last_error()) end
  return r
end

-- A built spec as a short text for the results' events ("2mpps", "%g pps",
-- "poisson 1mpps", "unpaced"): what the caller gave, not re-derived.
function M.describe(spec)
  if spec == nil or spec == 0 or spec == false then return "unpaced" end
  if type(spec) ~= "table" then spec = { rate = spec } end
  local function one(v) return type(v) == "number" and ("%.6g pps"):format(v) or tostring(v) end
  if spec.gap ~= nil and spec.rate == nil then return "gap function" end
  local text = one(spec.rate)
  if spec.pattern == "ramp" and spec.to ~= nil then text = ("%s to %s"):format(text, one(spec.to)) end
  if spec.pattern and spec.pattern ~= "constant" then text = spec.pattern .. " " .. text end
  return text
end

-- Returns a struct surge_rate (and the Lua gap function, if any) for spec.
-- owner: the function whose option the rate is ("surge.conn.client"), named
-- in its errors ("surge.conn.client: rate: ..."); nil: a queue's rate.
function M.build(spec, level, owner)
  local fn = owner and owner .. ": rate" or "rate"
  if spec == nil or spec == 0 or spec == false then return ffi.new("struct surge_rate") end
  if type(spec) ~= "table" then spec = { rate = spec } end
  check.options(spec, keys, fn)
  check.expect(spec.hw, "boolean?", fn, "hw")
  if spec.gap ~= nil then
    check.expect(spec.gap, "function", fn, "gap (a function returning nanoseconds)")
    local r = ffi.new("struct surge_rate")
    r.pattern = C.SURGE_PACE_GAPS
    r.unit = C.SURGE_RATE_PPS
    return set_catchup(r, spec, fn), spec.gap
  end
  local pattern = spec.pattern or "constant"
  local p = patterns[pattern]
  if not p then check.raise(("%s: unknown pattern '%s' (constant, poisson, onoff, ramp)"):format(fn, tostring(pattern))) end
  local r
  if spec.rate == nil and pattern == "onoff" then
    r = ffi.new("struct surge_rate")
    r.unit = C.SURGE_RATE_PPS                  -- on periods at full speed
  else
    r = parse_value(spec.rate, "rate", fn)
  end
  r.pattern = p
  r.hw = spec.hw and 1 or 0
  if pattern == "poisson" then
    r.seed = check.expect(spec.seed, "integer? 0..9007199254740992", fn, "seed") or 0
  elseif pattern == "onoff" then
    r.on_pkts = check.expect(spec.on, "integer 1..4294967295", fn, "on (packets per on period)")
    r.off_s = check.expect(spec.off, "number 0..31536000", fn, "off (seconds of silence)")
  elseif pattern == "ramp" then
    local to = parse_value(spec.to, "rate: ramp's to", fn)
    if to.unit ~= r.unit then check.raise(fn .. ": ramp's rate and to must use the same unit") end
    check.expect(spec.over, "number >0", fn, "over (seconds)")
    r.ramp_to, r.ramp_s = to.value, spec.over
  end
  return set_catchup(r, spec, fn)
end

-- The frames per second of a constant rate (a q:set_rate text or number)
-- for frames of `len` bytes without FCS (the pacer's count: L1 adds 24,
-- L2 4), on a link of link_bps (for "%"); nil for a rate that is not
-- constant or a % without a link speed. A run of D seconds at it is
-- round(pps * D) frames: what a script that sends for a time should count.
function M.pps(spec, len, link_bps)
  local r = parse_value(spec, "rate", "rate")
  local v = r.value
  if r.pattern ~= C.SURGE_PACE_CONSTANT then return nil end
  if r.unit == C.SURGE_RATE_PPS then return v end
  if r.unit == C.SURGE_RATE_LINK_PCT then
    if not link_bps or link_bps <= 0 then return nil end
    v = v / 100 * link_bps
  end
  return v / ((len + (r.unit == C.SURGE_RATE_L2_BPS and 4 or 24)) * 8)
end

-- A frame rate for people: "500 pps", "14.88 kpps", "1.488 Mpps", four
-- significant digits at most and never an exponent. Every scenario line
-- and table that shows a rate in words goes through this one function.
function M.format_pps(pps)
  if type(pps) ~= "number" or pps ~= pps or math.abs(pps) == math.huge then return tostring(pps) end
  local r = tonumber(("%.4g"):format(pps))   -- rounded first: 999.96 kpps is 1 Mpps
  local v, unit = r, "pps"
  if math.abs(r) >= 1e6 then v, unit = r / 1e6, "Mpps" elseif math.abs(r) >= 1e3 then v, unit = r / 1e3, "kpps" end
  local a = math.abs(v)
  local digits = a < 1 and 3 or math.max(0, 3 - math.floor(math.log10(a) + 1e-9))
  local text = ("%." .. digits .. "f"):format(v)
  if text:find(".", 1, true) then text = text:gsub("0+$", ""):gsub("%.$", "") end
  return text .. " " .. unit
end

return M
