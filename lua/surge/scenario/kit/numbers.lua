-- scenario/kit/numbers.lua - numbers as users give them and as people read
-- them: the one check that option text is a finite number, the one ratio
-- parser ("0.005", "0.5%"), the one validator of a logic module's numeric
-- argument, and figures for messages (num, bits, given).
local check = require("surge.check")

local M = {}

-- A number given as text (or a number), when it is one and finite: nil for
-- anything else. "1e400" reads as inf and "nan" as nan in tonumber, and
-- a rate, a size or a time of either is no value (an infinite CIR was
-- taken for one). Every option text a scenario reads as a number goes
-- through here.
function M.finite(v)
  local n = type(v) == "number" and v or type(v) == "string" and tonumber(v) or nil
  if n == nil or n ~= n or n == math.huge or n == -math.huge then return nil end
  return n
end

-- A value as the user gave it, for messages: text quoted as on the command line.
function M.given(v)
  return type(v) == "string" and "'" .. v .. "'" or check.show(v)
end

-- A ratio: a finite number (0.005), or text "0.005" or "0.5%" (a number
-- then a percent sign, spaces around ignored). Returns the ratio (0.005 for
-- both), or nil when v is none; the caller refuses in its own words with
-- the range it takes. Every ratio option of every scenario reads here.
function M.ratio(v)
  if type(v) == "number" then return M.finite(v) end
  if type(v) ~= "string" then return nil end
  local n, pct = v:match("^%s*([-+]?[%d%.]+[eE]?[-+]?%d*)%s*(%%?)%s*$")
  n = M.finite(n)
  if not n then return nil end
  return pct == "%" and n / 100 or n
end

-- The argument check of a logic module (searches, plans), the one wording
-- of them all: check(v, what, lo, inf_ok) returns v when it is a number,
-- not NaN, at least lo (default 0) and finite (or inf_ok, per call or for
-- the module), else raises "who: what = v must be a number >= lo" at the
-- line that called the module's function (check is called by that function).
function M.checker(who, inf_ok)
  return function(v, what, lo, inf)
    lo = lo or 0
    if type(v) ~= "number" or v ~= v or v < lo or (v == math.huge and not (inf or inf_ok)) then
      error(("%s: %s = %s must be a number >= %s"):format(who, what, tostring(v), tostring(lo)), 3)
    end
    return v
  end
end

-- A figure for people: four significant digits at most and never an
-- exponent ("0.0001", "9624000", "1500"), as surge.rate.format_pps does
-- for rates: a failure line read "IR 6e+06 bit/s above CIR+EIR 5e+06".
function M.num(v)
  if type(v) ~= "number" or v ~= v or math.abs(v) == math.huge then return tostring(v) end
  if v == 0 then return "0" end
  local r = tonumber(("%.4g"):format(v))   -- rounded first: 9999.6 is 10000
  local digits = math.max(0, 3 - math.floor(math.log10(math.abs(r)) + 1e-9))
  local text = ("%." .. digits .. "f"):format(r)
  if text:find(".", 1, true) then text = text:gsub("0+$", ""):gsub("%.$", "") end
  return text
end

-- A bit rate for people: "6 Mbit/s", "962.4 Mbit/s", "500 bit/s" (M.num's digits).
function M.bits(bps)
  if type(bps) ~= "number" or bps ~= bps or math.abs(bps) == math.huge then return tostring(bps) .. " bit/s" end
  local r = tonumber(("%.4g"):format(bps))
  local a = math.abs(r)
  if a >= 1e9 then return M.num(r / 1e9) .. " Gbit/s" end
  if a >= 1e6 then return M.num(r / 1e6) .. " Mbit/s" end
  if a >= 1e3 then return M.num(r / 1e3) .. " kbit/s" end
  return M.num(r) .. " bit/s"
end

return M
