-- results/plot.lua - `surge plot FILE.json [-o OUT.svg|png]`: charts of a results file.
--
-- Draws with gnuplot (Debian gnuplot-nox), one chart under the other:
--   * the rate over time per port (TX and RX, Mpps), one point per interval
--   * the latency distribution per receiver: a CDF over a log time axis
--   * each scenario table that carries a chart (see docs/results.md): the
--     RFC 2544 throughput and latency per frame size, a load-latency curve,
--     or any table with a `plot` description.
-- Needs no EAL; the REPL calls surge.plot(file [, out]) the same way.
local json = require "surge.results.json"

local M = {}

local function fail(msg) error(msg, 0) end        -- about the file or gnuplot: one line
-- gnuplot's input in the temporary folder: a full disk is an error, not a cut chart
local function save_or_fail(path, text)
  local ok, err = require("surge.results.file").save(path, text)
  if not ok then fail(("surge plot: %s: %s"):format(path, err)) end
end
-- about the arguments (the output's name, a results file that cannot be
-- read): at the caller's line when a script or the REPL called surge.plot;
-- from the command line (M.main) a usage error, exit 2 like core/front/cli.c's
local cli = false
local function misuse(msg)
  if cli then error(setmetatable({ msg = msg }, require("surge.args").OptionError), 0) end
  require("surge.check").raise(msg)
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
local ffi = require "ffi"
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

-- Charts for the rate per port.
local function rate_charts(res, dir, charts)
  local by_port, order = {}, {}
  for _, r in ipairs(res.series and res.series.ports or {}) do
    if not by_port[r.port] then by_port[r.port] = {}; order[#order + 1] = r.port end
    local t = by_port[r.port]
    t[#t + 1] = { r.t, r.tx_pps / 1e6, r.rx_pps / 1e6 }
  end
  for _, p in ipairs(order) do
    local f = data_file(dir, "port" .. p, by_port[p])
    charts[#charts + 1] = {
      title = ("port %d: rate over time"):format(p), xlabel = "time (s)", ylabel = "Mpps",
      plots = { { file = f, column = 2, with = "linespoints", title = "TX" },
                { file = f, column = 3, with = "linespoints", title = "RX" } },
      points = #by_port[p],
    }
  end
end

local function latency_charts(res, dir, charts)
  for _, l in ipairs(res.latency or {}) do
    local b, rows, acc, total = l.buckets, {}, 0, 0
    for _, c in ipairs(b.count) do total = total + c end
    if total > 0 then
      for i, c in ipairs(b.count) do
        acc = acc + c
        rows[#rows + 1] = { math.max(b.high_ns[i], 1), acc / total }
      end
      local f = data_file(dir, "latency" .. l.id, rows)
      -- whole decades, so a log axis always shows its powers of ten
      local lo = 10 ^ math.floor(math.log10(rows[1][1]))
      local hi = 10 ^ math.ceil(math.log10(rows[#rows][1]))
      if hi <= lo then hi = lo * 10 end
      charts[#charts + 1] = {
        xrange = ("[%.0f:%.0f]"):format(lo, hi), xformat = "%.0f",
        title = ("latency receiver %d: CDF (%d probes, p50 %.0f ns, p99 %.0f ns)"):format(l.id, l.probes, l.p50_ns, l.p99_ns),
        xlabel = "latency (ns)", ylabel = "fraction of probes", logx = true, yrange = "[0:1.02]",
        plots = { { file = f, column = 2, with = "steps", title = ("receiver %d"):format(l.id) } },
        points = #rows,
      }
    end
  end
end

-- Default chart descriptions for the scenarios surge ships; a scenario may
-- give its own: tbl.plot = { title, x, y = { fields }, xlabel, ylabel, logx, logy }
local known = {
  rfc2544 = {
    { title = "RFC 2544 throughput per frame size", x = { "frame_size", "size" },
      y = { { "throughput_pct", "rate_pct" }, { "throughput_mpps" } }, xlabel = "frame size (bytes)" },
    { title = "RFC 2544 latency per frame size", x = { "frame_size", "size" },
      y = { { "p50_ns", "latency_p50_ns" }, { "p99_ns", "latency_p99_ns" }, { "max_ns", "latency_max_ns" } },
      xlabel = "frame size (bytes)", ylabel = "latency (ns)", logy = true },
  },
  load_latency = {
    { title = "load-latency curve", x = { "load_pct", "load_pps", "rate_pps", "load" },
      y = { { "p50_ns" }, { "p99_ns" }, { "p999_ns" } }, ylabel = "latency (ns)", logy = true },
  },
}
known["load-latency"] = known.load_latency
known.latency_curve = known.load_latency

local function scenario_charts(res, dir, charts)
  local names = {}
  for name in pairs(res.scenarios or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local tbl = res.scenarios[name]
    local rows = type(tbl) == "table" and (tbl.rows or tbl.results or (#tbl > 0 and tbl)) or nil
    -- NAME#2, NAME#3: later runs of a scenario in the same session
    local specs = type(tbl) == "table" and tbl.plot and { tbl.plot } or known[(name:gsub("#%d+$", ""))]
    if type(rows) == "table" and #rows > 0 and specs then
      for k, spec in ipairs(specs) do
        local xnames = type(spec.x) == "table" and spec.x or { spec.x }
        local plots, data, xused = {}, {}, nil
        local ys = {}
        for _, y in ipairs(spec.y or {}) do ys[#ys + 1] = type(y) == "table" and y or { y } end
        for _, r in ipairs(rows) do
          local x, xn = field(r, xnames)
          if x then
            xused = xused or xn
            local line = { x }
            for j, y in ipairs(ys) do line[j + 1] = field(r, y) or 0 / 0 end
            data[#data + 1] = line
          end
        end
        table.sort(data, function(a, b) return a[1] < b[1] end)
        if #data > 0 then
          local f = data_file(dir, ("scenario_%s_%d"):format(name:gsub("[^%w]", "_"), k), data)
          for j, y in ipairs(ys) do
            local used
            for _, r in ipairs(rows) do local _, n = field(r, y); used = used or n end
            if used then
              plots[#plots + 1] = { file = f, column = j + 1, with = "linespoints", title = used }
            end
          end
          if #plots > 0 then
            charts[#charts + 1] = { title = spec.title or name, xlabel = spec.xlabel or xused,
              ylabel = spec.ylabel or "", logx = spec.logx, logy = spec.logy, plots = plots, points = #data }
          end
        end
      end
    end
  end
end

-- Scenarios whose charts a module of their own draws (module(tbl, data)
-- -> charts; data(name, rows) writes a data file): results/plot_mlr.lua.
local chart_modules = { mlrsearch = "surge.results.plot_mlr" }
local function module_charts(res, dir, charts)
  for name, tbl in pairs(res.scenarios or {}) do
    local m = type(tbl) == "table" and chart_modules[(name:gsub("#%d+$", ""))]
    if m then
      local tag = name:gsub("[^%w]", "_")
      for _, c in ipairs(require(m)(tbl, function(n, rows) return data_file(dir, tag .. "_" .. n, rows) end)) do
        charts[#charts + 1] = c
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

local function shape(res)
  local function list_of(v, path, item)
    if not is_list(v) then return path .. " is not a list" end
    for i, x in ipairs(v) do
      local why = item(x, ("%s[%d]"):format(path, i))
      if why then return why end
    end
  end
  local function numbers(o, path, names)
    if not is_object(o) then return path .. " is not an object" end
    for _, n in ipairs(names) do
      if type(o[n]) ~= "number" then return ("%s.%s is not a number"):format(path, n) end
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
        return numbers(r, p, { "port", "t", "tx_pps", "rx_pps" })
      end)
      if why then return why end
    end
  end
  if not absent(res.latency) then
    local why = list_of(res.latency, "latency", function(l, p)
      if not is_object(l) then return p .. " is not an object" end
      local b = l.buckets
      if not is_object(b) then return p .. ".buckets is not an object" end
      local w = list_of(b.count, p .. ".buckets.count", number) or list_of(b.high_ns, p .. ".buckets.high_ns", number)
      if w then return w end
      if #b.high_ns < #b.count then return p .. ".buckets.high_ns is shorter than its count" end
      local total = 0
      for _, c in ipairs(b.count) do total = total + c end
      if total > 0 then return numbers(l, p, { "id", "probes", "p50_ns", "p99_ns" }) end
    end)
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
          for _, k in ipairs({ "title", "xlabel", "ylabel" }) do
            if spec[k] ~= nil and type(spec[k]) ~= "string" then return ("%s.plot.%s is not a string"):format(p, k) end
          end
        end
      end
    end
  end
end

local function script_text(charts, out, png)
  local h = 300 * #charts + 40
  local s = {}
  if png then
    s[#s + 1] = ("set terminal pngcairo noenhanced size 1000,%d font 'Sans,10'"):format(h)
  else
    s[#s + 1] = ("set terminal svg noenhanced size 1000,%d dynamic font 'Sans,10' background rgb 'white'"):format(h)
  end
  s[#s + 1] = "set output " .. quote(out)
  s[#s + 1] = "set grid"
  s[#s + 1] = "set key outside right top"
  s[#s + 1] = "set datafile missing 'nan'"
  s[#s + 1] = ("set multiplot layout %d,1"):format(#charts)
  for _, c in ipairs(charts) do
    -- numbers and the constants above; every string through quote()
    s[#s + 1] = "set title " .. quote(c.title) .. " noenhanced"
    s[#s + 1] = "set xlabel " .. quote(c.xlabel or "")
    s[#s + 1] = "set ylabel " .. quote(c.ylabel or "")
    s[#s + 1] = c.logx and "set logscale x" or "unset logscale x"
    s[#s + 1] = c.logy and "set logscale y" or "unset logscale y"
    s[#s + 1] = "set yrange " .. (c.yrange or "[*:*]")
    s[#s + 1] = "set xrange " .. (c.xrange or "[*:*]")
    s[#s + 1] = "set format x " .. quote(c.xformat or "% h")
    local parts = {}
    for _, p in ipairs(c.plots) do
      parts[#parts + 1] = ("%s using 1:%d with %s title %s noenhanced"):format(
        quote(p.file), p.column, p.with, quote(p.title))
    end
    s[#s + 1] = "plot " .. table.concat(parts, ", ")
  end
  s[#s + 1] = "unset multiplot"
  return table.concat(s, "\n") .. "\n"
end

-- Draws the charts of results file `file` into `out` (default: FILE.svg).
-- Returns out and the charts drawn ({ title, points }).
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
  local done, ok, etext, charts = pcall(function()
    local drawn = {}
    rate_charts(res, dir, drawn)
    latency_charts(res, dir, drawn)
    scenario_charts(res, dir, drawn)
    module_charts(res, dir, drawn)
    if #drawn == 0 then
      fail(("surge plot: %s has nothing to draw (no series, latency or scenario rows)"):format(file))
    end
    local gp = dir .. "/plot.gp"
    save_or_fail(gp, script_text(drawn, out, png))
    local ran = sh(("gnuplot %s 2>%s"):format(shquote(gp), shquote(dir .. "/err")))
    local e = io.open(dir .. "/err")
    local text = e and e:read("*a") or ""
    if e then e:close() end
    return ran, text, drawn
  end)
  os.execute("rm -rf " .. shquote(dir))
  if not done then error(ok, 0) end
  if not ok then
    fail(("surge plot: gnuplot failed: %s"):format(clean(etext:match("[^\n]*%S[^\n]*") or "?")))
  end
  return out, charts
end

-- `surge plot FILE.json [-o OUT]`
function M.main(file, argv)
  -- core/front/cli.c checked the arguments (exit 2): only -o/--output OUT pairs
  local out
  for i = 2, #argv, 2 do out = argv[i] end
  cli = true
  local ok, path, charts = pcall(M.plot, file, out)
  cli = false
  if not ok then error(path, 0) end
  local titles = {}
  for _, c in ipairs(charts) do titles[#titles + 1] = ("%s (%d points)"):format(clean(c.title), c.points) end
  print(("surge: wrote %s: %s"):format(path, table.concat(titles, "; ")))
  return 0
end

return M
