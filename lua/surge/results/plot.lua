-- results/plot.lua - `surge plot FILE.json [-o OUT.svg|png]`: charts of a results file.
--
-- Draws with gnuplot (Debian gnuplot-nox) one report-ready figure per file
-- (OUT-rate.svg, OUT-latency.svg, ...), each with a title, axes labelled
-- with their units, ticks in human units, a key of human names and the
-- run's metadata in a footer:
--   * rate: every port's offered (TX) and forwarded (RX) packet rate over
--     time, with the run's events (set_rate, trial boundaries) marked
--   * latency: each receiver's percentile spectrum (x = percentile on a log
--     1/(1-p) axis, as HdrHistogram plots), all on one pair of axes
--   * each scenario table with charts: those its scenario declares
--     (scenario/NAME/charts.lua, found by the table's name: this module
--     names no scenario), or its own `plot` description (docs/results.md).
-- Needs no EAL; the REPL calls surge.plot(file [, out]) the same way.
local json = require("surge.results.json")
local results_file = require("surge.results.file")
local args = require("surge.args")
local check = require("surge.check")

local M = {}

local function fail(msg) error(msg, 0) end        -- about the file or gnuplot: one line
-- gnuplot's input in the temporary folder: a full disk is an error, not a cut chart
local function save_or_fail(path, text)
  local ok, err = results_file.save(path, text)
  if not ok then fail(("surge plot: %s: %s"):format(path, err)) end
end
-- about the arguments (the output's name, a results file that cannot be
-- read): at the caller's line when a script or the REPL called surge.plot;
-- from the command line (M.main) a usage error, exit 2 like core/front/cli.c's
local cli = false
local function misuse(msg)
  if cli then error(setmetatable({ msg = msg }, args.OptionError), 0) end
  check.raise(msg)
end

-- The text of results file `file`. One check for every file that cannot be
-- read: missing, unreadable, or a directory (which io.open opens on Linux;
-- its read fails with "Is a directory").
local function read_text(file)
  local f, err = io.open(file, "r")
  local text
  if f then
    text, err = f:read("*a")
    f:close()
  end
  if not text then
    err = tostring(err)
    if err:sub(1, #file + 2) == file .. ": " then err = err:sub(#file + 3) end  -- io.open's "FILE: why"
    misuse(("surge plot: cannot read '%s': %s"):format(file, err))
  end
  return text
end

-- os.execute gives 0 (Lua 5.1) or true (5.2 compatibility) on success
local function sh(cmd)
  local rc = os.execute(cmd)
  return rc == 0 or rc == true
end

-- Runs cmd: true, or false and how it ended ("exit status 1", "signal 11")
local function run(cmd)
  local a, how, code = os.execute(cmd)
  if a == 0 or a == true then return true end
  if type(how) == "string" then return false, ("%s %s"):format(how == "signal" and "signal" or "exit status", tostring(code)) end
  if type(a) == "number" then
    if a % 256 == 0 then return false, ("exit status %d"):format(a / 256) end
    return false, ("signal %d"):format(a % 128)
  end
  return false, tostring(a)
end

local function have_gnuplot()
  return sh("command -v gnuplot >/dev/null 2>&1")
end

-- A results file is data: every string that reaches the gnuplot script (a
-- title, a label, a field name, a file name) goes through quote(), and
-- nothing else from the file does but numbers (docs/guarantees.md). Inside a
-- gnuplot single-quoted string only '' is special (no backquote, no @macro,
-- no backslash escape), but a newline or CR ends the command line, so the
-- control bytes (< 0x20 and 0x7f) become spaces: text drawn as it reads.
local function clean(s) return (tostring(s):gsub("%c", " ")) end
local function quote(s) return "'" .. clean(s):gsub("'", "''") .. "'" end
-- a shell word, for the commands run through os.execute
local function shquote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- A fresh private folder for the data files and the script, made in one
-- step by mkdtemp(3) (mode 0700; no name another user could take first).
local ffi = require("ffi")
for _, decl in ipairs({ "char *mkdtemp(char *template);", "char *strerror(int errnum);" }) do
  pcall(ffi.cdef, decl)
end
local function temp_folder()
  local base = os.getenv("TMPDIR")
  if not base or base == "" then base = "/tmp" end
  local function cannot(why) fail("surge plot: cannot make a temporary folder: " .. why) end
  if base:find("%c") then cannot("TMPDIR has a control character") end
  local template = base:gsub("/+$", "") .. "/surge-plot.XXXXXX"
  local buf = ffi.new("char[?]", #template + 1, template)
  if ffi.C.mkdtemp(buf) == nil then
    cannot(("%s: %s"):format(template, ffi.string(ffi.C.strerror(ffi.errno()))))
  end
  return ffi.string(buf)
end

-- A data file of rows of numbers, written to the run's temporary folder.
local function data_file(dir, name, rows)
  local path = dir .. "/" .. name .. ".dat"
  local lines = {}
  for _, r in ipairs(rows) do
    local cells = {}
    for i, v in ipairs(r) do cells[i] = ("%.17g"):format(v) end
    lines[#lines + 1] = table.concat(cells, " ") .. "\n"
  end
  save_or_fail(path, table.concat(lines))
  return path
end

local function field(row, names)
  for _, n in ipairs(names) do
    if type(row[n]) == "number" then return row[n], n end
  end
end

-- Units. Every value is drawn in its base unit (s, pps, bit/s, %, B) and
-- every axis is labelled "quantity (unit)" with ticks in human units: on a
-- linear axis one SI prefix for the whole axis ("0.5 Mpps", "20 us"), on a
-- log axis one tick per decade ("1 us", "10 us", "100 us"). A field's unit
-- comes from its name's suffix (p99_ns, throughput_mpps, loss_pct): one rule
-- for the charts surge ships and for a scenario's own `plot` table.
local UNITS = {
  -- a time is in s and below (ms, us, ns): "2 ks" reads as nobody's unit
  time = { symbol = "s", si = true, quantity = "latency", top = 1 },
  seconds = { symbol = "s", si = true, quantity = "time since start", top = 1 },
  rate = { symbol = "pps", si = true, quantity = "packet rate", base = "packets/s" },
  bits = { symbol = "bit/s", si = true, quantity = "bit rate" },
  pct = { symbol = "%", si = false, quantity = "share" },
  bytes = { symbol = "B", si = false, quantity = "frame size", base = "bytes" },
  plain = { symbol = "", si = true, quantity = "value" },
}
local SUFFIXES = {   -- name suffix -> unit, factor to the base unit
  { "_ns$", "time", 1e-9 }, { "_us$", "time", 1e-6 }, { "_ms$", "time", 1e-3 },
  { "_mpps$", "rate", 1e6 }, { "_kpps$", "rate", 1e3 }, { "_pps$", "rate", 1 }, { "_fps$", "rate", 1 },
  { "_gbps$", "bits", 1e9 }, { "_mbps$", "bits", 1e6 }, { "_bps$", "bits", 1 },
  { "_pct$", "pct", 1 }, { "_bytes$", "bytes", 1 }, { "^frame_size$", "bytes", 1 }, { "^size$", "bytes", 1 },
}
-- human names of the fields surge writes; others: the name without its
-- unit suffix, underscores as spaces ("rx_errors" -> "rx errors")
local NAMES = {
  throughput_pct = { "throughput", "% of line rate" }, rate_pct = { "throughput", "% of line rate" },
  throughput_pps = { "throughput" }, throughput_mpps = { "throughput" },
  loss_pct = { "frame loss" }, load_pct = { "offered load", "% of line rate" }, load_pps = { "offered load" },
  rate_pps = { "offered load" }, offered_pps = { "offered load" }, load = { "offered load" }, frame_size = { "frame size" }, size = { "frame size" },
  min_ns = { "min" }, mean_ns = { "mean" }, p50_ns = { "p50 (median)" }, latency_p50_ns = { "p50 (median)" },
  p90_ns = { "p90" }, p99_ns = { "p99" }, latency_p99_ns = { "p99" }, p999_ns = { "p99.9" },
  max_ns = { "max" }, latency_max_ns = { "max" },
}
local function field_info(name)
  local unit, factor, stem = "plain", 1, name
  for _, s in ipairs(SUFFIXES) do
    if name:find(s[1]) then unit, factor = s[2], s[3]; stem = name:gsub(s[1], ""); break end
  end
  local known = NAMES[name]
  local human = known and known[1] or (stem ~= "" and stem or name):gsub("_", " ")
  return { name = human, unit = unit, factor = factor, note = known and known[2] }
end

local PREFIXES = { { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "k" }, { 1, "" }, { 1e-3, "m" },
                   { 1e-6, "u" }, { 1e-9, "n" } }
local function prefix_of(v, top)
  v = math.abs(v)
  if v == 0 or v ~= v then return 1, "" end
  for _, p in ipairs(PREFIXES) do
    if p[1] <= (top or math.huge) and v >= p[1] * 0.9995 then return p[1], p[2] end
  end
  return PREFIXES[#PREFIXES][1], PREFIXES[#PREFIXES][2]
end
-- a value in a unit, as a human reads it: 1490000 pps -> "1.49 Mpps"
local function human(v, unit)
  local u = UNITS[unit] or UNITS.plain
  if not u.si then return ("%.4g %s"):format(v, u.symbol) end
  local f, p = prefix_of(v, u.top)
  return (("%.3g %s%s"):format(v / f, p, u.symbol):gsub(" $", ""))
end

-- The x values' spacing: log-spaced (10, 100, 1000; 64, 128, 256, ... 1518)
-- when their ratios vary less than their differences.
local function log_spaced(xs)
  if #xs < 3 then return false end
  for _, x in ipairs(xs) do if x <= 0 then return false end end
  if xs[#xs] / xs[1] < 8 then return false end
  local function cv(f)
    local v, sum, sq = {}, 0, 0
    for i = 2, #xs do v[#v + 1] = f(xs[i - 1], xs[i]) end
    for _, d in ipairs(v) do sum = sum + d end
    local mean = sum / #v
    for _, d in ipairs(v) do sq = sq + (d - mean) ^ 2 end
    return mean ~= 0 and math.sqrt(sq / #v) / math.abs(mean) or math.huge
  end
  return cv(function(a, b) return math.log(b / a) end) < cv(function(a, b) return b - a end)
end

-- An axis: { unit, label, log, lo, hi (base units, of the data), ticks =
-- { { value, text } } (explicit), factor (multiplies base units to drawn),
-- range = { lo, hi } (optional, base units: axis_lines draws it in the
-- axis' unit, as the data) }. Linear axes draw value * factor with the
-- prefix in the tick format.
local function axis(unit, label, log, lo, hi, at)
  local a = { unit = unit, label = label, log = log, lo = lo, hi = hi, factor = 1 }
  local u = UNITS[unit] or UNITS.plain
  if log then
    a.lo = 10 ^ math.floor(math.log10(lo) + 1e-9)
    a.hi = 10 ^ math.ceil(math.log10(hi) - 1e-9)
    if a.hi <= a.lo then a.hi = a.lo * 10 end
    a.ticks = {}
    if at and #at <= 12 then          -- few points: a tick at each (frame sizes, loads)
      a.lo, a.hi = at[1] / 1.2, at[#at] * 1.2
      local last
      for _, v in ipairs(at) do    -- less than 0.12 decade from the last: its text would overlap
        if not last or math.log10(v / last) >= 0.12 then a.ticks[#a.ticks + 1] = { v, human(v, unit) }; last = v end
      end
    else
      for k = math.floor(math.log10(a.lo) + 0.5), math.floor(math.log10(a.hi) + 0.5) do
        a.ticks[#a.ticks + 1] = { 10 ^ k, human(10 ^ k, unit) }
      end
    end
  else
    local f, p = 1, ""
    if u.si then f, p = prefix_of(math.max(math.abs(lo), math.abs(hi)), u.top) end
    a.factor = 1 / f
    a.format = ("%%g %s%s"):format(p, u.symbol:gsub("%%", "%%%%")):gsub(" $", "")
  end
  return a
end

local function axis_label(unit, names, note)
  local u = UNITS[unit] or UNITS.plain
  local what = #names == 1 and names[1] or u.quantity
  local in_ = note or u.base or u.symbol
  return in_ ~= "" and ("%s (%s)"):format(what, in_) or what
end

local function range_of(rows, col, factor, lo, hi)
  for _, r in ipairs(rows) do
    local v = r[col]
    if v == v then lo, hi = math.min(lo, v * factor), math.max(hi, v * factor) end
  end
  return lo, hi
end

-- The rate over time: every port's TX (offered) and RX (forwarded) on one
-- chart, with the run's events (rate changes, trial boundaries) as marks.
local function rate_charts(res, dir, charts)
  local by_port, order = {}, {}
  for _, r in ipairs(res.series and res.series.ports or {}) do
    if not by_port[r.port] then by_port[r.port] = {}; order[#order + 1] = r.port end
    local t = by_port[r.port]
    t[#t + 1] = { r.t, r.tx_pps, r.rx_pps }
  end
  if #order == 0 then return end
  local series, hi, tmax, points = {}, 0, 0, 0
  for _, p in ipairs(order) do
    local rows = by_port[p]
    local f = data_file(dir, "port" .. p, rows)
    local _, h = range_of(rows, 2, 1, 0, 0)
    local _, h2 = range_of(rows, 3, 1, 0, 0)
    local _, t = range_of(rows, 1, 1, 0, 0)
    hi, tmax, points = math.max(hi, h, h2), math.max(tmax, t), points + #rows
    series[#series + 1] = { file = f, x = 1, y = 2, with = "linespoints", title = ("port %d TX (offered)"):format(p),
                            points = #rows }
    series[#series + 1] = { file = f, x = 1, y = 3, with = "linespoints", title = ("port %d RX (forwarded)"):format(p),
                            points = #rows }
  end
  local events = {}
  for _, e in ipairs(type(res.events) == "table" and res.events or {}) do
    if e.kind ~= "dropped" then events[#events + 1] = e; tmax = math.max(tmax, e.t) end
  end
  local x = axis("seconds", "time since start (s)", false, 0, tmax)
  -- from 0 to the last sample or event (a run of one sample included); in
  -- base units like the data, drawn in the axis' unit (ms for a short run)
  x.range = { 0, tmax > 0 and tmax * 1.02 or 1 }
  charts[#charts + 1] = {
    name = "rate", title = "Offered and forwarded load (TX and RX per port)",
    x = x, y = axis("rate", axis_label("rate", {}, nil), false, 0, hi),
    series = series, events = events, points = points,
  }
end

-- Latency as a percentile spectrum (HdrHistogram's view): x = percentile on
-- a log 1/(1-p) scale (50 %, 90 %, 99 %, 99.9 % ...), y = latency, so the
-- tail has as much room as the body. All receivers share one chart (several
-- charts of at most 8 each share one pair of axes), each named by what it
-- measured (latency[].label: the trial's frame size and rate).
local PER_LATENCY_CHART = 8
local function latency_charts(res, dir, charts)
  local curves, ymin, ymax, nmax = {}, math.huge, 0, 1
  for _, l in ipairs(res.latency or {}) do
    local b, total = l.buckets, 0
    for _, c in ipairs(b.count) do total = total + c end
    if total > 0 then
      local rows, acc = {}, 0
      for i, c in ipairs(b.count) do
        rows[#rows + 1] = { 1 / (1 - acc / total), math.max(b.high_ns[i], 1) }
        acc = acc + c
      end
      rows[#rows + 1] = { math.max(total, rows[#rows][1]), rows[#rows][2] }
      ymin, ymax = math.min(ymin, rows[1][2] * 1e-9), math.max(ymax, rows[#rows][2] * 1e-9)
      nmax = math.max(nmax, total)
      local name = type(l.label) == "string" and l.label or ("receiver %d"):format(l.id)
      curves[#curves + 1] = { file = data_file(dir, "latency" .. #curves, rows), x = 1, y = 2, yfactor = 1e-9,
        with = "steps", points = #rows,
        title = ("%s: %d probes, p99 %s"):format(name, l.probes, human(l.p99_ns * 1e-9, "time")) }
    end
  end
  if #curves == 0 then return end
  local x = axis("plain", "percentile", true, 1, math.max(nmax, 10))
  x.ticks = { { 2, "50%" } }
  for k = 1, math.floor(math.log10(x.hi) + 0.5) do
    local p = 100 - 100 / 10 ^ k
    x.ticks[#x.ticks + 1] = { 10 ^ k, (("%.6f"):format(p):gsub("0+$", ""):gsub("%.$", "")) .. "%" }
  end
  -- a log latency axis when the tail is far above the body
  local y = axis("time", "latency (s)", ymax / ymin >= 50, ymax / ymin >= 50 and ymin or 0, ymax)
  local nchart = math.ceil(#curves / PER_LATENCY_CHART)
  for c = 1, nchart do
    local part = {}
    for i = (c - 1) * PER_LATENCY_CHART + 1, math.min(c * PER_LATENCY_CHART, #curves) do part[#part + 1] = curves[i] end
    local points = 0
    for _, s in ipairs(part) do points = points + s.points end
    charts[#charts + 1] = { name = nchart > 1 and ("latency-%d"):format(c) or "latency",
      title = "Latency by percentile" .. (nchart > 1 and (" (%d of %d)"):format(c, nchart) or ""),
      x = x, y = y, series = part, points = points }
  end
end

-- A scenario's charts: what its module scenario/NAME/charts.lua declares,
-- found by the table's name in the results file (NAME, NAME#2 a later run;
-- load-latency is load_latency), the way testpmd finds a forwarding engine
-- in its table of ops: results/ names no scenario, a scenario's charts live
-- beside its logic. The module returns { tables = { spec, ... }, draw =
-- function(tbl, data) }, both optional: a spec is drawn like a table's own
-- `plot` (below, plus `name` and `where = { field = value }`, the rows it
-- takes), draw returns charts of its own (module_charts). A charts module
-- requires nothing of its scenario (no package cycle: docs/architecture.md).
local function charts_of(name)
  local base = tostring(name):gsub("#%d+$", "")
  if not base:match("^[%w_%-]+$") then return nil end
  local mod = "surge.scenario." .. base:gsub("%-", "_") .. ".charts"
  -- lazy: a computed name (the table's), as for a scenario by name
  local ok, m = pcall(require, mod)
  if ok then return type(m) == "table" and m or nil end
  if tostring(m):find("module '" .. mod .. "' not found", 1, true) then return nil end
  error(m, 0)                                        -- a charts module that fails: surge's fault, shown
end

-- Whether row r is one a spec takes (its `where` fields all equal).
local function takes(spec, r)
  if type(spec.where) ~= "table" then return true end
  for k, v in pairs(spec.where) do if r[k] ~= v then return false end end
  return true
end

-- The k-th of a scenario table's nspecs chart specs: its data file (the
-- rows it takes) and its charts, appended to charts.
local function spec_charts(name, k, spec, nspecs, rows, dir, charts)
  local xnames = type(spec.x) == "table" and spec.x or { spec.x }
  local data, xused = {}, nil
  local ys = {}
  for _, y in ipairs(spec.y or {}) do ys[#ys + 1] = type(y) == "table" and y or { y } end
  for _, r in ipairs(rows) do
    local x, xn = field(r, xnames)
    if x and takes(spec, r) then
      xused = xused or xn
      local line = { x }
      for j, y in ipairs(ys) do
        local v, n = field(r, y)
        line[j + 1] = v and v * field_info(n).factor or 0 / 0
      end
      data[#data + 1] = line
    end
  end
  table.sort(data, function(a, b) return a[1] < b[1] end)
  -- the y series by unit, in order: the first unit on the left axis,
  -- the second on the right one, a third and more on further charts
  local groups, by_unit = {}, {}
  for j, y in ipairs(ys) do
    local used
    for _, r in ipairs(rows) do if takes(spec, r) then local _, n = field(r, y); used = used or n end end
    if used then
      local fi = field_info(used)
      local g = by_unit[fi.unit]
      if not g then g = { unit = fi.unit, series = {}, names = {}, note = fi.note }; by_unit[fi.unit] = g; groups[#groups + 1] = g end
      g.series[#g.series + 1] = { col = j + 1, title = fi.name }
      g.names[#g.names + 1] = fi.name
    end
  end
  if #data > 0 and #groups > 0 then
    local f = data_file(dir, ("scenario_%s_%d"):format(name:gsub("[^%w]", "_"), k), data)
    local xi = field_info(xused)
    local xs = {}
    for i, r in ipairs(data) do xs[i] = r[1] * xi.factor end
    local logx = spec.logx
    if logx == nil then logx = log_spaced(xs) end
    logx = logx and xs[1] > 0
    local x = axis(xi.unit, type(spec.xlabel) == "string" and spec.xlabel or axis_label(xi.unit, { xi.name }, xi.note),
                   logx, xs[1], xs[#xs], xs)
    -- points surge could not offer (sender_limited rows) are named in
    -- the title: there the curve shows surge's limit, not the DUT's
    local limited = {}
    for _, r in ipairs(rows) do
      local xv = field(r, xnames)
      if xv and r.sender_limited == true and takes(spec, r) then limited[#limited + 1] = human(xv * xi.factor, xi.unit) end
    end
    local title = type(spec.title) == "string" and spec.title or name
    if #limited > 0 then
      title = ("%s - surge did not send the offered rate at %s %s: there it shows surge's limit"):format(
        title, xi.name, table.concat(limited, ", "))
    end
    local base = (type(spec.name) == "string" and spec.name) or (nspecs > 1 and tostring(k)) or nil
    for c = 1, #groups, 2 do
      local chart = { title = title, x = x, series = {}, points = #data }
      chart.name = name:gsub("[^%w]", "_") .. (base and "-" .. base or "") .. (c > 1 and ("-%d"):format((c + 1) / 2) or "")
      for side = 0, 1 do
        local g = groups[c + side]
        if g then
          local lo, hi = math.huge, -math.huge
          for _, s in ipairs(g.series) do lo, hi = range_of(data, s.col, 1, lo, hi) end
          if lo > hi then lo, hi = 0, 1 end
          local logy = spec.logy and lo > 0
          local label = side == 0 and type(spec.ylabel) == "string" and spec.ylabel
            or axis_label(g.unit, g.names, g.note)
          local a = axis(g.unit, label, logy, logy and lo or math.min(lo, 0), hi)
          chart[side == 0 and "y" or "y2"] = a
          for _, s in ipairs(g.series) do
            chart.series[#chart.series + 1] = { file = f, x = 1, xfactor = xi.factor, y = s.col,
              with = "linespoints", axes = side == 1 and "x1y2" or nil, points = #data,
              title = s.title .. (groups[c + 1] and (side == 1 and " (right axis)" or " (left axis)") or "") }
          end
        end
      end
      charts[#charts + 1] = chart
    end
  end
end

local function scenario_charts(res, dir, charts)
  local names = {}
  for name in pairs(res.scenarios or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local tbl = res.scenarios[name]
    local rows = type(tbl) == "table" and (tbl.rows or tbl.results or (#tbl > 0 and tbl)) or nil
    -- NAME#2, NAME#3: later runs of a scenario in the same session
    local own = type(tbl) == "table" and not tbl.plot and charts_of(name) or nil
    local specs = type(tbl) == "table" and tbl.plot and { tbl.plot } or (own and own.tables)
    if type(rows) == "table" and #rows > 0 and specs then
      for k, spec in ipairs(specs) do spec_charts(name, k, spec, #specs, rows, dir, charts) end
    end
  end
end

-- Scenarios whose charts module has a draw (draw(tbl, data) -> charts;
-- data(name, rows) writes a data file; scenario/NAME/charts.lua). A drawn chart is { title, xlabel, ylabel,
-- xunit, yunit (UNITS' names; values in the base unit), logx, logy, xinteger
-- (whole-number x: a tick at each on a short axis), plots =
-- { { file, column, with, title } } (x in column 1) }; module_chart makes it
-- a chart as chart_text draws them (axes from the data's ranges), so every
-- module's chart goes through the one path the built-in charts take.
local function module_chart(c, name, rows_of)
  local xlo, xhi, ylo, yhi, ypos = math.huge, -math.huge, math.huge, -math.huge, math.huge
  local series = {}
  for _, p in ipairs(c.plots or {}) do
    local rows = rows_of[p.file] or {}
    xlo, xhi = range_of(rows, 1, 1, xlo, xhi)
    ylo, yhi = range_of(rows, p.column, 1, ylo, yhi)
    for _, r in ipairs(rows) do if r[p.column] == r[p.column] and r[p.column] > 0 then ypos = math.min(ypos, r[p.column]) end end
    series[#series + 1] = { file = p.file, x = 1, y = p.column, with = p.with or "linespoints", title = p.title or "" }
  end
  if xlo > xhi or ylo > yhi then return nil end   -- no point to draw
  local logy = c.logy and ypos < math.huge or false
  if logy then ylo = ypos end                     -- a log axis shows the points above 0
  local logx = c.logx and xlo > 0 or false
  local x = axis(c.xunit or "plain", c.xlabel or "", logx, xlo, xhi)
  if c.xinteger and not logx and xhi - xlo <= 20 then x.step = 1 end
  return { name = c.name or name, title = c.title, series = series, points = c.points, x = x,
           y = axis(c.yunit or "plain", c.ylabel or "", logy, ylo, yhi) }
end
local function module_charts(res, dir, charts)
  for name, tbl in pairs(res.scenarios or {}) do
    local own = type(tbl) == "table" and charts_of(name) or nil
    local draw = own and own.draw
    if draw then
      local tag = name:gsub("[^%w]", "_")
      local rows_of = {}
      local made = draw(tbl, function(n, rows)
        local f = data_file(dir, tag .. "_" .. n, rows)
        rows_of[f] = rows
        return f
      end)
      -- a chart without a name of its own is named by its table and place
      -- ("y1564", "y1564-2"): the file it is written to
      for i, c in ipairs(made) do
        local chart = module_chart(c, i == 1 and tag or ("%s-%d"):format(tag, i), rows_of)
        if chart then charts[#charts + 1] = chart end
      end
    end
  end
end

-- The shape of a results file, checked in one place before anything is
-- drawn: the fields the charts read (docs/results.md). Returns nil, or what
-- is wrong ("series.ports is not a list").
local function is_list(v)
  if type(v) ~= "table" then return false end
  local n = 0
  for _ in pairs(v) do n = n + 1 end
  return n == #v
end
local function is_object(v) return type(v) == "table" and v ~= json.null and (next(v) == nil or not is_list(v)) end

-- What the charts read of a results file: at a path of the file ("series.ports[]":
-- each item of that list), each field and its JSON type ("?": the charts
-- do without it; "number!": required only where the item has data, a
-- receiver with probes). The schema, docs/results.schema.json, is the one
-- description of the file: tests/lua/test_plot_schema.lua fails when a field
-- here is not in the schema at that path, has another type there, or is
-- read as always there while the schema lets it be absent.
-- In the order checked: the first fault named is always the same one.
M.READS = {
  ["series.ports[]"] = { { "port", "number" }, { "t", "number" }, { "tx_pps", "number" }, { "rx_pps", "number" } },
  ["latency[]"] = { { "buckets", "object" }, { "label", "string?" }, { "id", "number!" }, { "probes", "number!" },
                    { "p50_ns", "number!" }, { "p99_ns", "number!" } },
  ["latency[].buckets"] = { { "count", "array" }, { "high_ns", "array" } },
  ["events[]"] = { { "t", "number" }, { "kind", "string?" }, { "text", "string?" }, { "label", "string?" } },
}
local READS = M.READS

-- Checks object o (at path p) against READS[at]: nil, or what is wrong.
local function read_ok(o, p, at, with_data)
  if not is_object(o) then return p .. " is not an object" end
  for _, f in ipairs(READS[at]) do
    local n, want = f[1], f[2]
    local kind, mark = want:match("^(%a+)([?!]?)$")
    local v = o[n]
    local absent = v == nil or v == json.null
    if not (absent and (mark == "?" or (mark == "!" and not with_data))) then
      local ok = (kind == "object" and is_object(v)) or (kind == "array" and is_list(v))
        or (kind ~= "object" and kind ~= "array" and type(v) == kind)
      if not ok then
        return ("%s.%s is not %s"):format(p, n, kind == "array" and "a list" or (kind == "object" and "an object")
          or "a " .. kind)
      end
    end
  end
end

local function shape(res)
  local function list_of(v, path, item)
    if not is_list(v) then return path .. " is not a list" end
    for i, x in ipairs(v) do
      local why = item(x, ("%s[%d]"):format(path, i))
      if why then return why end
    end
  end
  local function number(x, path) if type(x) ~= "number" then return path .. " is not a number" end end
  local function names(x, path)   -- a field name, or a list of them (the first present is used)
    if type(x) == "string" then return nil end
    if not is_list(x) then return path .. " is not a field name or a list of them" end
    return list_of(x, path, function(n, p) if type(n) ~= "string" then return p .. " is not a field name" end end)
  end
  local function absent(v) return v == nil or v == json.null end
  if not absent(res.series) then
    if not is_object(res.series) then return "series is not an object" end
    if not absent(res.series.ports) then
      local why = list_of(res.series.ports, "series.ports", function(r, p)
        return read_ok(r, p, "series.ports[]")
      end)
      if why then return why end
    end
  end
  if not absent(res.latency) then
    local why = list_of(res.latency, "latency", function(l, p)
      local w = read_ok(l, p, "latency[]") or read_ok(l.buckets, p .. ".buckets", "latency[].buckets")
      if w then return w end
      local b = l.buckets
      w = list_of(b.count, p .. ".buckets.count", number) or list_of(b.high_ns, p .. ".buckets.high_ns", number)
      if w then return w end
      if #b.high_ns < #b.count then return p .. ".buckets.high_ns is shorter than its count" end
      local total = 0
      for _, c in ipairs(b.count) do total = total + c end
      if total > 0 then return read_ok(l, p, "latency[]", true) end
    end)
    if why then return why end
  end
  if not absent(res.events) then
    local why = list_of(res.events, "events", function(e, p) return read_ok(e, p, "events[]") end)
    if why then return why end
  end
  if not absent(res.scenarios) then
    if not is_object(res.scenarios) then return "scenarios is not an object" end
    for name, tbl in pairs(res.scenarios) do
      local p = "scenarios." .. tostring(name)
      if type(tbl) == "table" then
        -- its rows, as scenario_charts finds them: rows, results or the table itself
        local k = (tbl.rows ~= nil and "rows") or (tbl.results ~= nil and "results") or nil
        local rows = k and tbl[k] or (#tbl > 0 and tbl) or nil
        if rows ~= nil then
          local why = list_of(rows, k and p .. "." .. k or p, function(r, rp)
            if not is_object(r) then return rp .. " is not an object" end
          end)
          if why then return why end
        end
        local spec = tbl.plot
        if not absent(spec) then
          if not is_object(spec) then return p .. ".plot is not an object" end
          local why = names(spec.x, p .. ".plot.x")
            or list_of(spec.y or {}, p .. ".plot.y", names)
          if why then return why end
          for _, key in ipairs({ "title", "xlabel", "ylabel" }) do
            if spec[key] ~= nil and type(spec[key]) ~= "string" then
              return ("%s.plot.%s is not a string"):format(p, key)
            end
          end
        end
      end
    end
  end
end

-- The run, in three footer lines under every chart: what surge wrote in
-- `metadata` (untrusted text: it reaches the script through quote() alone).
local function cut(s, n)
  s = clean(s)
  return #s > n and s:sub(1, n - 3) .. "..." or s
end
local function footer(res)
  local m = is_object(res.metadata) and res.metadata or {}
  local function str(v) return type(v) == "string" and v or nil end
  local l1 = {}
  l1[#l1 + 1] = "surge " .. (str(m.surge_version) or "?") .. (str(m.git_commit) and (" (" .. m.git_commit .. ")") or "")
  if str(m.start_time) then l1[#l1 + 1] = "started " .. m.start_time end
  if type(m.duration_s) == "number" then l1[#l1 + 1] = ("%.3g s"):format(m.duration_s) end
  if str(m.hostname) then l1[#l1 + 1] = "host " .. m.hostname end
  if str(res.status) then l1[#l1 + 1] = "status " .. res.status end
  local cmd = {}
  for _, a in ipairs(is_list(m.command_line) and m.command_line or {}) do
    if type(a) == "string" then cmd[#cmd + 1] = a:find("[%s'\"]") and ("'" .. a .. "'") or a end
  end
  local ports = {}
  for _, d in ipairs(is_list(m.devices) and m.devices or {}) do
    if is_object(d) then
      ports[#ports + 1] = ("port %s %s (%s%s)"):format(tostring(d.port), str(d.name) or "?", str(d.driver) or "?",
        type(d.link_speed_mbps) == "number" and d.link_speed_mbps > 0 and (", " .. human(d.link_speed_mbps * 1e6, "bits")) or "")
    end
  end
  -- a line is cut to what fits the figure's width at the footer's font
  return { cut(table.concat(l1, " | "), 120),
           cut("command: " .. (#cmd > 0 and table.concat(cmd, " ") or "?"), 120),
           cut("ports: " .. (#ports > 0 and table.concat(ports, "; ") or "none recorded"), 120) }
end

-- v > 0 rounded up to a multiple of a 1, 2 or 5 x 10^k step, the largest
-- step that divides it into at most 10: a top a tick can sit on
local function round_up(v)
  local decade = 10 ^ math.floor(math.log10(v))
  for _, m in ipairs({ 0.1, 0.2, 0.5, 1, 2 }) do
    local step = decade * m
    if v / step <= 10 then return math.ceil(v / step - 1e-9) * step end
  end
  return v
end

local FONT = 14          -- px in the SVG: the smallest text on a chart (a report's body size)
local function axis_lines(s, name, a)
  s[#s + 1] = ("set %slabel %s"):format(name, quote(a.label))
  if a.log then
    s[#s + 1] = "set logscale " .. name
    local t = {}
    -- a tick's text is a format too: its % doubled
    for _, tk in ipairs(a.ticks) do t[#t + 1] = ("%s %.17g"):format(quote(tk[2]:gsub("%%", "%%%%")), tk[1]) end
    s[#s + 1] = ("set %stics (%s)"):format(name, table.concat(t, ", "))
    -- a hair wider than the ticks at its ends: gnuplot leaves out a tick
    -- exactly at a log axis' end (10 kpps under a 10k-100k axis)
    s[#s + 1] = ("set %srange [%.17g:%.17g]"):format(name, a.lo * (1 - 1e-6), a.hi * (1 + 1e-6))
  else
    s[#s + 1] = ("set format %s %s"):format(name, quote(a.format))
    -- whole-number values (a count: groups, trials) on a short axis: a tick at each
    if a.step then s[#s + 1] = ("set %stics %.17g"):format(name, a.step * a.factor) end
    -- an autoscaled x: no rounding out to ticks (chart_text's offsets give the room)
    s[#s + 1] = a.range and ("set %srange [%.17g:%.17g]"):format(name, a.range[1] * a.factor, a.range[2] * a.factor)
      or (name == "x" and "set autoscale xfix") or ("set %srange [*:*]"):format(name)
    if name == "y" and (a.lo or 0) >= 0 then s[#s + 1] = "set yrange [0:*]" end
    -- gnuplot's offsets (chart_text) leave the right axis out: its top is
    -- the round number at or above the data's highest value and 6 % more,
    -- as gnuplot rounds the left one, so a line at the highest value is not
    -- the frame
    if name == "y2" and (a.lo or 0) >= 0 then
      s[#s + 1] = (a.hi or 0) > 0 and ("set y2range [0:%.17g]"):format(round_up(a.hi * a.factor * 1.06)) or "set y2range [0:*]"
    end
  end
  if name == "y2" then s[#s + 1] = "set y2tics; set ytics nomirror" end
end

-- A title wider than the figure would be cut off at both sides: it is
-- wrapped at spaces into lines of at most TITLE_CHARS (what fits 1200 px at
-- the title's font, counting bytes: UTF-8 text gets shorter lines), as many
-- as it takes; a word longer than a line is split. One that fits is drawn
-- as it reads.
local TITLE_CHARS = 72
local function title_lines(title)
  title = clean(title)
  if #title <= TITLE_CHARS then return { title } end
  local lines, line = {}, ""
  for word in title:gmatch("%S+") do
    while #word > TITLE_CHARS do   -- after its last - / _ . that fits, if any
      if line ~= "" then lines[#lines + 1] = line; line = "" end
      local at = word:sub(1, TITLE_CHARS):match(".*()[-/_.]") or TITLE_CHARS
      lines[#lines + 1] = word:sub(1, at)
      word = word:sub(at + 1)
    end
    if line == "" then line = word
    elseif #line + 1 + #word <= TITLE_CHARS then line = line .. " " .. word
    else lines[#lines + 1] = line; line = word end
  end
  if line ~= "" or #lines == 0 then lines[#lines + 1] = line end
  return lines
end

local function chart_text(c, out, png, foot)
  local s = {}
  s[#s + 1] = "reset"
  s[#s + 1] = "set output " .. quote(out)
  s[#s + 1] = "set encoding utf8"
  s[#s + 1] = "set grid"
  s[#s + 1] = "set datafile missing 'nan'"
  -- the key under the x axis' label, above the footer: the plot keeps the
  -- figure's whole width
  s[#s + 1] = ("set key at screen 0.5, screen 0.245 center top horizontal maxrows 4 font ',%d'"):format(FONT)
  -- the title's lines joined by a newline of gnuplot's own ("\n" in double
  -- quotes): every line goes through quote() like any other text
  local lines = title_lines(c.title)
  local parts_t = {}
  for i, l in ipairs(lines) do parts_t[i] = quote(l) end
  s[#s + 1] = ("set title %s font ',%d' noenhanced"):format(table.concat(parts_t, ' . "\\n" . '), FONT + 6)
  -- room under the plot for the key and the three footer lines; above it
  -- for the title's lines
  s[#s + 1] = "set bmargin at screen 0.36"
  s[#s + 1] = ("set tmargin at screen %.3f"):format(0.90 - 0.03 * (#lines - 1))
  -- room inside the frame around autoscaled data: a line at the data's
  -- highest value (y1564's CIR + EIR) or a point at its first or last x is
  -- drawn inside the plot, not under the frame. x ends at the data's room
  -- (no tick-rounding: 10 .. 90 % reads as drawn); y rounds up to a tick.
  -- (Ranges given explicitly, as the log axes' and the rate chart's x, keep
  -- theirs.)
  s[#s + 1] = "set offsets graph 0.02, graph 0.02, graph 0.06, 0"
  s[#s + 1] = "set lmargin 14"
  for i, line in ipairs(foot) do
    s[#s + 1] = ("set label %d %s at screen 0.01, screen %.3f left font ',%d' textcolor rgb '#444444' noenhanced"):format(
      100 + i, quote(line), 0.015 + (#foot - i) * 0.03, FONT)
  end
  axis_lines(s, "x", c.x)
  axis_lines(s, "y", c.y)
  if c.y2 then axis_lines(s, "y2", c.y2) end
  local parts = {}
  for _, p in ipairs(c.series) do
    local xf = (p.xfactor or 1) * c.x.factor
    local y = p.axes == "x1y2" and c.y2 or c.y
    local yf = (p.yfactor or 1) * y.factor
    parts[#parts + 1] = ("%s using ($%d*%.17g):($%d*%.17g) with %s lw 2%s title %s noenhanced"):format(
      quote(p.file), p.x, xf, p.y, yf, p.with, p.axes and (" axes " .. p.axes) or "", quote(p.title))
  end
  -- the events: a dashed line each (and its text, while there are few),
  -- explained in the key
  local kinds = { set_rate = { dt = 2, color = "#b03030", key = "rate set" },
                  trial_start = { dt = 3, color = "#3050b0", key = "trial start" },
                  trial_end = { dt = 4, color = "#7080b0", key = "trial end" } }
  -- a text closer to the last one drawn than its own height (2.5 % of the
  -- axis) would be drawn over it: its line and the key's count remain
  local seen, nlabels, last_label = {}, 0, nil
  local span = c.x.range and (c.x.range[2] - c.x.range[1]) * c.x.factor or math.huge
  for _, e in ipairs(c.events or {}) do
    local k = kinds[e.kind]
    if k then
      local t = e.t * c.x.factor
      seen[e.kind] = (seen[e.kind] or 0) + 1
      s[#s + 1] = ("set arrow from %.17g, graph 0 to %.17g, graph 1 nohead dt %d lw 1.5 lc rgb '%s'"):format(
        t, t, k.dt, k.color)
      if e.kind ~= "trial_end" and #c.events <= 24 and (not last_label or t - last_label >= 0.025 * span) then
        nlabels, last_label = nlabels + 1, t
        local text = type(e.label) == "string" and e.label or (type(e.text) == "string" and e.text) or e.kind
        s[#s + 1] = ("set label %s at %.17g, graph 0.98 rotate by 90 right offset 0.8,0 font ',%d' textcolor rgb '%s' noenhanced"):format(
          quote(cut(text, 48)), t, FONT, k.color)
      end
    end
  end
  for _, kind in ipairs({ "set_rate", "trial_start", "trial_end" }) do
    if seen[kind] then
      local k = kinds[kind]
      parts[#parts + 1] = ("keyentry with lines dt %d lw 1.5 lc rgb '%s' title %s"):format(k.dt, k.color,
        quote(("%s: %d"):format(k.key, seen[kind])))
    end
  end
  s[#s + 1] = "plot " .. table.concat(parts, ", ")
  return table.concat(s, "\n") .. "\n"
end

-- The script drawing every chart, each into its c.temp; c.line: the
-- script's line where the chart's part starts (gnuplot names the line of
-- its error: plot() says which chart it was)
local function script_text(charts, png, foot)
  local s = {}
  if png then
    -- pngcairo's points at 72 dpi are px: the same sizes as the SVG
    s[#s + 1] = ("set terminal pngcairo noenhanced size 1200,900 font 'Sans,%d'"):format(FONT)
  else
    s[#s + 1] = ("set terminal svg noenhanced size 1200,900 dynamic font 'Sans,%d' background rgb 'white'"):format(FONT)
  end
  local line = 2
  for _, c in ipairs(charts) do
    local text = chart_text(c, c.temp, png, foot)
    c.line = line
    s[#s + 1] = text
    line = line + select(2, text:gsub("\n", "\n"))
  end
  return table.concat(s, "\n")
end

-- Why gnuplot failed, in surge's words, from what it wrote on stderr: the
-- echo of the command with a caret under it, then '"plot.gp" line N:
-- reason' (warnings alike, "warning: ..."). Returns the line (or nil) and
-- the reason. Any other stderr (a loader's error, a crash) gives its last
-- line; nothing at all, the exit status.
local REASONS = {   -- gnuplot's words -> what they mean for a chart surge drew
  { "points [xy]2? value undefined", "none of its points falls inside its axes' ranges" },
  { "range is invalid", "an axis' range is empty" },
  { "cannot open file", "its file cannot be written" },
  { "[Cc]an't open", "its file cannot be written" },
  { "no valid points", "it has no point to draw" },
}
local function gnuplot_reason(etext, status)
  local lines = {}
  for l in etext:gmatch("[^\n]+") do lines[#lines + 1] = l end
  local at, why, last
  for i, l in ipairs(lines) do
    local n, msg = l:match('^".-" line (%d+): (.*)$')
    if n and not msg:match("^%s*warning:") then
      at, why = tonumber(n), msg
    elseif not n and l:match("%S") and not l:match("^%s*%^%s*$") and not (lines[i + 1] or ""):match("^%s*%^%s*$") then
      last = l    -- not an echoed command (the line above a caret)
    end
  end
  if not why then
    return nil, last and ("gnuplot: " .. clean(last)) or ("gnuplot ended (%s) and said nothing"):format(tostring(status))
  end
  why = clean(why):gsub("^%s+", ""):gsub("%s+$", "")
  for _, r in ipairs(REASONS) do
    if why:find(r[1]) then return at, ("%s (gnuplot: %s)"):format(r[2], why) end
  end
  return at, "gnuplot: " .. why
end

-- Draws the charts of results file `file`, one file per chart: for `out` =
-- STEM.svg (default: FILE.json -> FILE.svg) the files STEM-rate.svg,
-- STEM-latency.svg, STEM-rfc2544-throughput.svg, ... (.png alike). Returns
-- the files written and the charts ({ name, file, title, points }).
function M.plot(file, out)
  if type(file) ~= "string" or file == "" then
    misuse("surge plot: give a results file (surge run --output FILE.json)")
  end
  if out ~= nil and type(out) ~= "string" then
    misuse(("surge plot: -o %s: the output must be a file name ending in .svg or .png"):format(tostring(out)))
  end
  out = out or (file:gsub("%.json$", "") .. ".svg")
  local png = out:match("%.png$") ~= nil
  if not png and not out:match("%.svg$") then
    misuse(("surge plot: -o %s: the output must end in .svg or .png"):format(clean(out)))
  end
  if out:find("%c") then
    misuse(("surge plot: -o %s: the output's name has a control character"):format(clean(out)))
  end
  local stem, ext = out:sub(1, -5), out:sub(-3)
  -- the figures go next to -o's name: its folder must exist (as for any
  -- output file, surge does not make folders)
  local out_dir = out:match("^(.*)/[^/]*$")
  if out_dir and out_dir ~= "" then
    local probe = io.open(out_dir .. "/.", "r")
    if not probe then
      misuse(("surge plot: -o %s: no folder '%s' (make it first)"):format(clean(out), clean(out_dir)))
    end
    probe:close()
  end
  local text = read_text(file)
  if text:match("^%s*$") then fail(("surge plot: %s: empty file"):format(file)) end
  -- what surge writes for --output run.csv: the rate series only
  if text:match("^t,interval_s,") or (file:match("%.csv$") and not text:match("^%s*[{%[]")) then
    fail(("surge plot: %s: a CSV results file: plot the .json (--output %s)"):format(file,
      (file:gsub("%.csv$", "")) .. ".json"))
  end
  local res, jerr = json.decode(text)
  if not res then fail(("surge plot: %s: %s"):format(file, jerr)) end
  if type(res) ~= "table" or res.schema ~= "surge-results" then
    fail(("surge plot: %s is not a surge results file (no \"schema\": \"surge-results\")"):format(file))
  end
  local why = shape(res)
  if why then fail(("surge plot: %s: not as surge writes it: %s"):format(file, clean(why))) end
  if not have_gnuplot() then fail("surge plot: gnuplot not found: install the Debian package gnuplot-nox") end
  local dir = temp_folder()
  -- the folder goes whatever happens in between (an error included)
  local temps = {}
  local done, charts = pcall(function()
    local drawn = {}
    rate_charts(res, dir, drawn)
    latency_charts(res, dir, drawn)
    scenario_charts(res, dir, drawn)
    module_charts(res, dir, drawn)
    if #drawn == 0 then
      fail(("surge plot: %s has nothing to draw (no series, latency or scenario rows)"):format(file))
    end
    -- each chart its own file, named by the chart (letters, digits, _ and -
    -- only: a scenario's name cannot point the file elsewhere)
    local taken = {}
    for _, c in ipairs(drawn) do
      local name, n = c.name, 1
      while taken[name] do n = n + 1; name = ("%s-%d"):format(c.name, n) end
      taken[name] = true
      c.name, c.file = name, ("%s-%s.%s"):format(stem, name, ext)
    end
    -- gnuplot draws each chart into a temporary file beside its own (a
    -- hidden name in the same folder: the same file system), and they are
    -- renamed into place only once every chart is drawn: a failure leaves
    -- no empty or cut figure, and the figures of an earlier plot as they
    -- were. surge makes each first: a folder it cannot write in is said
    -- in its words, before gnuplot runs.
    local suffix = dir:match("([^/]*)$")
    for _, c in ipairs(drawn) do
      local folder, base = c.file:match("^(.*/)([^/]*)$")
      c.temp = (folder or "") .. "." .. (base or c.file) .. "." .. suffix
      temps[#temps + 1] = c.temp
      local f, err = io.open(c.temp, "w")
      if not f then
        err = tostring(err)
        if err:sub(1, #c.temp + 2) == c.temp .. ": " then err = err:sub(#c.temp + 3) end
        fail(("surge plot: cannot write %s: %s"):format(clean(c.file), err))
      end
      f:close()
    end
    local gp = dir .. "/plot.gp"
    save_or_fail(gp, script_text(drawn, png, footer(res)))
    local ran, status = run(("gnuplot %s 2>%s"):format(shquote(gp), shquote(dir .. "/err")))
    local e = io.open(dir .. "/err")
    local etext = e and e:read("*a") or ""
    if e then e:close() end
    -- a chart gnuplot left empty is a failure too, whatever its status
    local empty
    for _, c in ipairs(drawn) do
      local f = io.open(c.temp, "rb")
      local size = f and f:seek("end") or 0
      if f then f:close() end
      if size == 0 then empty = empty or c end
    end
    local failed = not ran
    if failed or empty then
      -- the chart: the one whose part of the script has gnuplot's line,
      -- else the first it left empty (where it stopped)
      local at, reason = gnuplot_reason(etext, status)
      local which = empty or drawn[1]
      if at then
        for _, c in ipairs(drawn) do if c.line <= at then which = c end end
      end
      if not failed and not at then reason = "gnuplot ended without drawing it" end
      fail(("surge plot: cannot draw %s (%s): %s; no figure written"):format(clean(which.file), clean(which.title),
        reason))
    end
    for _, c in ipairs(drawn) do
      local moved, err = os.rename(c.temp, c.file)
      if not moved then fail(("surge plot: cannot write %s: %s"):format(clean(c.file), tostring(err))) end
    end
    return drawn
  end)
  os.execute("rm -rf " .. shquote(dir))
  for _, t in ipairs(temps) do os.remove(t) end   -- gone already where renamed
  if not done then error(charts, 0) end
  local files = {}
  for i, c in ipairs(charts) do files[i] = c.file end
  return files, charts
end

-- `surge plot FILE.json [-o OUT]`
function M.main(file, argv)
  -- core/front/cli.c checked the arguments (exit 2): only -o/--output OUT pairs
  local out
  for i = 2, #argv, 2 do out = argv[i] end
  cli = true
  local ok, files, charts = pcall(M.plot, file, out)
  cli = false
  if not ok then error(files, 0) end
  -- one line per file: what it shows
  for _, c in ipairs(charts) do
    print(("surge: wrote %s: %s (%d points)"):format(c.file, clean(c.title), c.points))
  end
  return 0
end

return M
