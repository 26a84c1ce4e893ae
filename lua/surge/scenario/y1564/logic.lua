-- scenario/y1564/logic.lua - the pure logic of ITU-T Y.1564 (the scenario `y1564`,
-- y1564.lua): services and their criteria from --services text or a Lua
-- table, the steps of the service configuration test, availability from
-- per-interval counts and the pass/fail verdicts. Free of packets and ports
-- (like mlr.lua): tests/lua/test_y1564.lua checks it against made-up
-- measurements.
--
-- A service: { name, dscp, vlan, port (UDP destination port): what the DUT
-- tells it apart by (none: a flow of its own UDP source ports), cir_bps,
-- eir_bps (information rates: the bits of its frames, FCS included, per
-- second), flr (frame loss ratio allowed, 0..1), ftd_us (mean frame transfer
-- delay allowed), fdv_us (frame delay variation allowed), avail_pct
-- (availability required) }; the last three nil: not judged.
local scenario = require("surge.scenario")
local finite, num, bits = scenario.finite, scenario.num, scenario.bits

local M = {}

M.KEYS = { "dscp", "vlan", "port", "cir", "eir", "cbs", "ebs", "flr", "ftd", "fdv", "avail" }
local KNOWN = {}
for _, k in ipairs(M.KEYS) do KNOWN[k] = true end

-- The configuration test's steps below CIR (shares of CIR), as Y.1564 8.1.2.
M.CIR_STEPS = { 0.25, 0.5, 0.75, 1 }

local function show(v)
  return type(v) == "string" and ("'%s'"):format(v) or tostring(v)
end

-- A value with a unit: a number as it is (nil unless finite), or text
-- NUMBER[UNIT] with UNIT a key of `mult` (its multiplier, "" for none) and
-- NUMBER matching the pattern `number`; nil when it is neither. Negative
-- values are returned (the caller says why they are refused).
local DECIMAL = "[-+]?[%d%.]+"
local function with_unit(v, mult, number)
  if type(v) == "number" then return finite(v) end
  if type(v) ~= "string" then return nil end
  local n, unit = v:lower():match("^%s*(" .. number .. ")%s*(%a*)%s*$")
  n = finite(n)
  if not n or not mult[unit] then return nil end
  return n * mult[unit]
end

-- A bit rate: a number (bit/s) or text "2mbit", "500kbit", "1.5gbit", "2m",
-- "64000", "1e6". Returns bit/s, or nil.
local BITS = { [""] = 1, bit = 1, bps = 1, k = 1e3, kbit = 1e3, kbps = 1e3, m = 1e6, mbit = 1e6, mbps = 1e6,
               g = 1e9, gbit = 1e9, gbps = 1e9 }
function M.bitrate(v) return with_unit(v, BITS, DECIMAL .. "[eE]?[-+]?%d*") end

-- A size in bytes: a number or text "4000", "4k", "4kb" (1000 bytes), "1mb".
local BYTES = { [""] = 1, b = 1, k = 1e3, kb = 1e3, m = 1e6, mb = 1e6 }
function M.bytes(v) return with_unit(v, BYTES, DECIMAL) end

-- A delay in microseconds: a number (us) or text "10ms", "500us", "1s".
local MICROSECONDS = { [""] = 1, us = 1, ms = 1e3, s = 1e6 }
function M.delay_us(v) return with_unit(v, MICROSECONDS, DECIMAL) end

-- A ratio: a number (0.001) or text "0.001", "0.1%" (the kit's one parser).
M.ratio = scenario.kit.numbers.ratio

-- The fields of one service item: text NAME:KEY=VALUE:... or a table with
-- name and the keys. refuse(fmt, ...) raises (it names the option).
local function fields(w, refuse)
  if type(w) == "table" then
    local out = {}
    for k, v in pairs(w) do
      if k ~= "name" then
        if type(k) ~= "string" or not KNOWN[k] then
          refuse("service %s: unknown key %s (keys: %s)", show(w.name), show(k), table.concat(M.KEYS, ", "))
        end
        out[k] = v
      end
    end
    if type(w.name) ~= "string" or not w.name:match("^[%w_%-]+$") then
      refuse("a service needs a name of letters, digits, '_' or '-', got %s", show(w.name))
    end
    return w.name, out
  end
  local text = tostring(w)
  local parts = {}
  for f in (text .. ":"):gmatch("([^:]*):") do parts[#parts + 1] = f end
  local name = parts[1]
  if not name:match("^[%w_%-]+$") then
    refuse("'%s' is not NAME:KEY=VALUE:... (e.g. voice:dscp=46:cir=2mbit:eir=1mbit)", text)
  end
  local out = {}
  for i = 2, #parts do
    local k, v = parts[i]:match("^%s*([%w_]+)%s*=%s*(.-)%s*$")
    if not k then refuse("service '%s': '%s' is not KEY=VALUE", name, parts[i]) end
    if not KNOWN[k] then refuse("service '%s': unknown key '%s' (keys: %s)", name, k, table.concat(M.KEYS, ", ")) end
    if out[k] ~= nil then refuse("service '%s': key '%s' given twice", name, k) end
    out[k] = v
  end
  return name, out
end

local function int(v, lo, hi, name, key, refuse)
  local n = type(v) == "string" and finite(v) or v
  if type(n) ~= "number" or n ~= math.floor(n) or n < lo or n > hi then
    refuse("service '%s': %s=%s is not an integer in %d..%d", name, key, tostring(v), lo, hi)
  end
  return n
end

-- One service from its fields, every value checked.
local function service(name, f, refuse)
  local s = { name = name }
  if f.dscp ~= nil then s.dscp = int(f.dscp, 0, 63, name, "dscp", refuse) end
  if f.vlan ~= nil then s.vlan = int(f.vlan, 1, 4095, name, "vlan", refuse) end
  if f.port ~= nil then s.port = int(f.port, 1, 65535, name, "port", refuse) end
  if f.cir == nil then refuse("service '%s' has no cir (its committed information rate, e.g. cir=2mbit)", name) end
  local function rate(k, zero_ok)
    local v = M.bitrate(f[k])
    if v == nil then refuse("service '%s': %s=%s is not a bit rate (2mbit, 500kbit, 1gbit)", name, k, tostring(f[k])) end
    if v < 0 then refuse("service '%s': %s=%s is negative", name, k, tostring(f[k])) end
    if v == 0 and not zero_ok then refuse("service '%s': %s=%s: give a rate above 0", name, k, tostring(f[k])) end
    return v
  end
  s.cir_bps = rate("cir")
  s.eir_bps = f.eir ~= nil and rate("eir", true) or 0
  -- the bandwidth profile's burst sizes: a policer lets CBS + EBS bytes
  -- through above the rates (a shaper its queue too), so the EIR and
  -- policing steps allow that much on top of CIR + EIR over a step
  for _, k in ipairs({ "cbs", "ebs" }) do
    s[k] = 0
    if f[k] ~= nil then
      s[k] = M.bytes(f[k])
      if s[k] == nil or s[k] < 0 then
        refuse("service '%s': %s=%s is not a burst size in bytes of 0 or more (4000, 4kb)", name, k, tostring(f[k]))
      end
    end
  end
  s.flr = 0
  if f.flr ~= nil then
    s.flr = M.ratio(f.flr)
    if s.flr == nil or s.flr < 0 or s.flr >= 1 then
      refuse("service '%s': flr=%s is not a loss ratio in 0..1, below 1 (0.001 or 0.1%%)", name, tostring(f.flr))
    end
  end
  for _, k in ipairs({ "ftd", "fdv" }) do
    if f[k] ~= nil then
      local us = M.delay_us(f[k])
      if us == nil or us <= 0 then
        refuse("service '%s': %s=%s is not a delay above 0 (10ms, 500us; a number is microseconds)", name, k,
          tostring(f[k]))
      end
      s[k .. "_us"] = us
    end
  end
  if f.avail ~= nil then
    local v = f.avail           -- a percentage: 99.9, "99.9" or "99.9%"
    local pct = type(v) == "number" and v or (type(v) == "string" and finite((v:gsub("%s*%%%s*$", ""))))
    if not pct or pct < 0 or pct > 100 then
      refuse("service '%s': avail=%s is not a percentage in 0..100 (99.9%%)", name, tostring(v))
    end
    s.avail_pct = pct
  end
  return s
end

-- What the DUT tells a service apart by, as text ("dscp 46, port 5001",
-- or "its own flow" when nothing).
function M.match_text(s)
  local out = {}
  for _, k in ipairs({ "vlan", "dscp", "port" }) do
    if s[k] then out[#out + 1] = ("%s %d"):format(k, s[k]) end
  end
  return #out > 0 and table.concat(out, ", ") or "its own flow"
end

-- The services of --services: text "NAME:KEY=VALUE:...,NAME:..." (services
-- separated by commas) or a list of tables { name = ..., cir = ..., ... }.
-- items(v, what) splits the list (scenario.items, so an empty item is
-- refused like every list option's); refuse(fmt, ...) raises naming the
-- option. A name given twice, or two services the DUT cannot tell apart
-- (the same dscp, vlan and port), is a duplicate and refused.
function M.services(v, items, refuse)
  local list = items(v, function(w)
    local name, f = fields(w, refuse)
    return service(name, f, refuse)
  end)
  if #list == 0 then refuse("no service given (e.g. voice:dscp=46:cir=2mbit:eir=1mbit)") end
  local names, matches = {}, {}
  for _, s in ipairs(list) do
    if names[s.name] then refuse("service '%s' given twice", s.name) end
    names[s.name] = true
    local key = ("%s|%s|%s"):format(tostring(s.vlan), tostring(s.dscp), tostring(s.port))
    if matches[key] then
      refuse("services '%s' and '%s' both match %s: the DUT cannot tell them apart (give each its own dscp, vlan "
        .. "or port)", matches[key], s.name, M.match_text(s))
    end
    matches[key] = s.name
  end
  return list
end

-- The service configuration test's steps of service s: 25, 50, 75 and 100 %
-- of CIR (kind "cir": the green traffic, every criterion judged), CIR + EIR
-- when there is an EIR (kind "eir"), then CIR + EIR + overshoot x CIR (kind
-- "policing": more than the DUT must deliver). overshoot: a share of CIR
-- (0.25: Y.1564's 125 % of CIR where EIR is 0).
function M.steps(s, overshoot)
  local out = {}
  for _, f in ipairs(M.CIR_STEPS) do
    out[#out + 1] = { step = ("%d%%"):format(f * 100), kind = "cir", rate_bps = s.cir_bps * f }
  end
  if s.eir_bps > 0 then out[#out + 1] = { step = "cir+eir", kind = "eir", rate_bps = s.cir_bps + s.eir_bps } end
  out[#out + 1] = { step = "overshoot", kind = "policing", rate_bps = s.cir_bps + s.eir_bps + overshoot * s.cir_bps }
  return out
end

-- Availability in % from per-interval counts (sent[i], received[i]): an
-- interval is unavailable when more than `threshold` (a ratio) of its frames
-- were lost; intervals that sent nothing are not counted. nil when none sent.
function M.availability(sent, received, threshold)
  local n, up = 0, 0
  for i = 1, #sent do
    if sent[i] > 0 then
      n = n + 1
      if (sent[i] - math.min(received[i], sent[i])) / sent[i] <= threshold then up = up + 1 end
    end
  end
  if n == 0 then return nil end
  return up * 100 / n
end

-- The verdict of one measurement m = { ir_bps, flr_pct, ftd_us = { mean },
-- fdv_us, avail_pct, seconds } of service s at a step of `kind` ("cir" and
-- the performance test's "perf": every criterion; "eir" and "policing": the
-- delivered IR must lie between CIR and CIR + EIR, within `tolerance`, a
-- ratio, and above it by at most the bursts (CBS + EBS bytes over the
-- step's seconds): Y.1564 judges no loss or delay above CIR, where traffic
-- is not committed). Returns pass, and the list of what failed (text).
function M.verdict(s, kind, m, tolerance)
  local why = {}
  if kind == "cir" or kind == "perf" then
    if m.flr_pct > s.flr * 100 + 1e-9 then why[#why + 1] = ("FLR %s %% > %s %%"):format(num(m.flr_pct), num(s.flr * 100)) end
    if s.ftd_us then
      if not (m.ftd_us and m.ftd_us.mean) then why[#why + 1] = "FTD not measured (no probe came back)"
      elseif m.ftd_us.mean > s.ftd_us then why[#why + 1] = ("FTD %s us > %s us"):format(num(m.ftd_us.mean), num(s.ftd_us)) end
    end
    if s.fdv_us then
      if not m.fdv_us then why[#why + 1] = "FDV not measured (no probe came back)"
      elseif m.fdv_us > s.fdv_us then why[#why + 1] = ("FDV %s us > %s us"):format(num(m.fdv_us), num(s.fdv_us)) end
    end
    if s.avail_pct and (m.avail_pct or 0) < s.avail_pct then
      why[#why + 1] = ("availability %s %% < %s %%"):format(num(m.avail_pct or 0), num(s.avail_pct))
    end
  else
    local lo = s.cir_bps * (1 - tolerance)
    local hi = (s.cir_bps + s.eir_bps) * (1 + tolerance)
    if m.seconds and m.seconds > 0 then hi = hi + ((s.cbs or 0) + (s.ebs or 0)) * 8 / m.seconds end
    if m.ir_bps < lo then why[#why + 1] = ("IR %s below CIR %s"):format(bits(m.ir_bps), bits(s.cir_bps)) end
    if m.ir_bps > hi then
      why[#why + 1] = ("IR %s above CIR+EIR %s%s (not policed)"):format(bits(m.ir_bps), bits(s.cir_bps + s.eir_bps),
        ((s.cbs or 0) + (s.ebs or 0)) > 0 and (" and its bursts (%s)"):format(bits(hi)) or "")
    end
  end
  return #why == 0, why
end

return M
