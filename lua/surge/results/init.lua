-- results/init.lua (surge.results) - the run's results as one data structure, and its files.
--
--   surge.results.add("rfc2544", tbl)   -- a scenario hands over its table
--   surge.results.collect()             -- -> the results table (docs/results.md)
--   surge.results.write("out.json")     -- or .csv; what --output FILE does
--
-- The C core samples cumulative counters at each stats-line tick
-- (core/report/series.c); this module turns consecutive samples into interval
-- rates, adds the summary, rate figures, latency histograms, counters,
-- metadata and scenario tables, and writes JSON (docs/results.schema.json)
-- or CSV. `surge plot` reads the JSON back; telemetry reads the same C slots.
local ffi = require("ffi")
local bit = require("bit")
local check = require("surge.check")
local core = require("surge.core")
local C, rc_check = core.C, core.check
local json = require("surge.results.json")
local file = require("surge.results.file")
local counter = require("surge.counter")
local jit = require("jit")

local M = { SCHEMA_VERSION = 1 }

local L1_OVERHEAD, FCS = 24, 4      -- as core/dataplane/dataplane.h: preamble+SFD+IFG+FCS, FCS

local state = { scenarios = {}, tasks = {}, options = nil, start_time = nil, script = nil,
                events = {}, dropped = 0, labels = {} }

-- What a results file can hold: numbers, strings, booleans, json.null and
-- tables of them with string or number keys, no cycles, at most 100 deep.
-- Returns nil, or why not, naming the key path (path: where v sits).
local function unsendable(v, path, open, depth)
  local t = type(v)
  if t == "number" or t == "string" or t == "boolean" then return nil end
  if t ~= "table" then return ("%s: a %s cannot go in a results file"):format(path, t) end
  if open[v] then return ("%s: it contains itself (a cycle)"):format(path) end
  if depth > 100 then return ("%s: nested more than 100 deep"):format(path) end
  open[v] = true
  for k, x in pairs(v) do
    local kt = type(k)
    if kt ~= "string" and kt ~= "number" then
      open[v] = nil
      return ("%s: key %s: keys must be strings or numbers"):format(path, check.show(k))
    end
    local sub = kt == "string" and k:match("^[%a_][%w_]*$") and (path .. "." .. k)
      or ("%s[%s]"):format(path, check.show(k))
    local why = unsendable(x, sub, open, depth + 1)
    if why then open[v] = nil return why end
  end
  open[v] = nil
  return nil
end

-- A scenario's (or script's) own results, kept under results.scenarios[name].
function M.add(name, tbl)
  if type(name) ~= "string" or name == "" then check.raise("surge.results.add: name must be a non-empty string") end
  if type(tbl) ~= "table" then check.raise("surge.results.add: the results must be a table") end
  local why = unsendable(tbl, name, {}, 0)
  if why then check.raise("surge.results.add: " .. why) end
  state.scenarios[name] = tbl
end

-- A scenario's results, recorded when it ends however it was run (by name,
-- from a script, at the prompt): under its name, then NAME#2, NAME#3 for
-- later runs in the same session; the same table is recorded once.
function M.scenario_done(name, tbl)
  for _, v in pairs(state.scenarios) do if v == tbl then return end end
  local key, n = name, 1
  while state.scenarios[key] ~= nil do n = n + 1; key = ("%s#%d"):format(name, n) end
  state.scenarios[key] = tbl
end

-- Events on the run's clock (the series' t), which `surge plot` marks on the
-- time axis: a queue's rate set from master or the prompt (port:txq():set_rate)
-- and each trial's start and end (surge.dut's session:trial). One list in the
-- master VM, so every caller is recorded the same way; a task's own
-- set_rate is inside a trial (or its own business) and not recorded. At most
-- MAX_EVENTS are kept: the ones past it are counted, not lost silently.
M.MAX_EVENTS = 10000
function M.event(kind, text, fields)
  if C.surge_is_main() == 0 then return end
  if #state.events >= M.MAX_EVENTS then state.dropped = state.dropped + 1 return end
  local e = { t = C.surge_run_elapsed(), kind = kind, text = text }
  for k, v in pairs(fields or {}) do e[k] = v end
  state.events[#state.events + 1] = e
end
-- A latency receiver's name in the file (latency[].label): what it measured,
-- e.g. the trial "64 B at 1.49 Mpps", so charts can tell receivers apart.
function M.latency_label(id, text)
  if C.surge_is_main() ~= 0 then state.labels[id] = text end
end

-- Called by surge.launch and master.lua, so the file can name things.
function M.task_started(lcore, fn) state.tasks[lcore] = fn end
function M.run_started(script, options)
  state.script, state.options = script, options
  state.start_time = state.start_time or os.time()
end

local function read_file(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end
M.read_file = read_file     -- a file's bytes, or nil (otg/capture.lua too)

local function metadata(duration)
  local cpu = (read_file("/proc/cpuinfo") or ""):match("model name%s*:%s*([^\n]+)") or "unknown"
  local cmd = json.array()
  local i = 0
  while true do
    local a = C.surge_cmdline(i)
    if a == nil then break end
    cmd[#cmd + 1] = ffi.string(a)
    i = i + 1
  end
  local devices = json.array()
  local info = ffi.new("struct surge_port_info")
  for p = 0, C.surge_port_count() - 1 do
    if C.surge_port_info(p, info) == 0 then
      devices[#devices + 1] = { port = p, name = ffi.string(info.name), driver = ffi.string(info.driver),
        link_speed_mbps = info.link_speed_mbps, link_up = info.link_up ~= 0,
        mac = ("%02x:%02x:%02x:%02x:%02x:%02x"):format(info.mac[0], info.mac[1], info.mac[2],
                                                       info.mac[3], info.mac[4], info.mac[5]) }
    end
  end
  local prefix = C.surge_file_prefix()
  return {
    surge_version = ffi.string(C.surge_version()),
    git_commit = ffi.string(C.surge_git_commit()),
    dpdk_version = ffi.string(C.surge_dpdk_version()),
    luajit_version = jit.version,
    cpu_model = cpu,
    hostname = (read_file("/proc/sys/kernel/hostname") or ""):gsub("%s+$", ""),
    tsc_hz = tonumber(C.surge_tsc_hz()),
    command_line = cmd,
    script = state.script or json.null,
    script_options = state.options or {},
    start_time = os.date("!%Y-%m-%dT%H:%M:%SZ", state.start_time or os.time()),
    duration_s = duration,
    file_prefix = prefix ~= nil and ffi.string(prefix) or json.null,
    devices = devices,
  }
end

local function rates(pkts, bytes, sec)
  if sec <= 0 then return 0, 0, 0 end
  return pkts / sec, (bytes + pkts * FCS) * 8 / sec, (bytes + pkts * L1_OVERHEAD) * 8 / sec
end

local function idle_pct(busy, idle)
  return busy + idle > 0 and idle * 100 / (busy + idle) or 0
end

-- The C rows, grouped per (kind, port, id) in time order.
local function read_rows()
  local n = C.surge_series_count()
  local row = ffi.new("struct surge_sample")
  local groups, order = {}, {}
  for i = 0, n - 1 do
    rc_check(C.surge_series_get(i, row), 2)
    local key = ("%d/%d/%d"):format(row.kind, row.port, row.id)
    local g = groups[key]
    if not g then
      g = { kind = row.kind, port = row.port, id = row.id, rows = {} }
      groups[key] = g
      order[#order + 1] = g
    end
    g.rows[#g.rows + 1] = {
      t = row.t, tick = row.tick, value = row.value, flags = row.flags,
      tx_packets = tonumber(row.tx_packets), tx_bytes = tonumber(row.tx_bytes),
      rx_packets = tonumber(row.rx_packets), rx_bytes = tonumber(row.rx_bytes),
      drops = tonumber(row.drops), unsent = tonumber(row.unsent),
      busy = tonumber(row.busy_cycles), idle = tonumber(row.idle_cycles),
    }
  end
  return order
end

-- Interval differences of one group; a task lcore's cycle counters restart
-- with each new task, so a fall means "from 0".
local function intervals(g, fn)
  local prev = { t = 0, tx_packets = 0, tx_bytes = 0, rx_packets = 0, rx_bytes = 0, drops = 0,
                 unsent = 0, busy = 0, idle = 0 }
  for _, r in ipairs(g.rows) do
    local dt = r.t - prev.t
    if dt > 0 then
      local d = {}
      for _, k in ipairs({ "tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "drops", "unsent", "busy", "idle" }) do
        d[k] = r[k] >= prev[k] and r[k] - prev[k] or r[k]
      end
      fn(r, dt, d)
    end
    prev = r
  end
end

local function build_series(groups, lcore_idle_by_tick)
  local ports, queues, tasks, counters = json.array(), json.array(), json.array(), json.array()
  local names = {}
  for _, c in ipairs(counter.all()) do names[#names + 1] = c end
  for _, g in ipairs(groups) do
    if g.kind == C.SURGE_SAMPLE_LCORE then
      intervals(g, function(r, dt, d)
        tasks[#tasks + 1] = { t = r.t, interval_s = dt, lcore = g.id, fn = state.tasks[g.id] or json.null,
          busy_cycles = d.busy, idle_cycles = d.idle, idle_pct = idle_pct(d.busy, d.idle) }
        local acc = lcore_idle_by_tick[r.tick] or { busy = 0, idle = 0 }
        acc.busy, acc.idle = acc.busy + d.busy, acc.idle + d.idle
        lcore_idle_by_tick[r.tick] = acc
      end)
    elseif g.kind == C.SURGE_SAMPLE_COUNTER then
      local c = names[g.id + 1]
      for _, r in ipairs(g.rows) do
        counters[#counters + 1] = { t = r.t, name = c and c.name or tostring(g.id),
                                    value = (c and c.kind == "gauge") and r.value or r.tx_packets,
                                    saturated = bit.band(r.flags, C.SURGE_COUNTER_SATURATED) ~= 0 or nil }
      end
    end
  end
  for _, g in ipairs(groups) do
    if g.kind == C.SURGE_SAMPLE_PORT then
      intervals(g, function(r, dt, d)
        local tp, tl2, tl1 = rates(d.tx_packets, d.tx_bytes, dt)
        local rp, rl2, rl1 = rates(d.rx_packets, d.rx_bytes, dt)
        local acc = lcore_idle_by_tick[r.tick]
        ports[#ports + 1] = { t = r.t, interval_s = dt, port = g.port,
          tx_packets = d.tx_packets, tx_bytes = d.tx_bytes, tx_pps = tp, tx_bps_l2 = tl2, tx_bps_l1 = tl1,
          rx_packets = d.rx_packets, rx_bytes = d.rx_bytes, rx_pps = rp, rx_bps_l2 = rl2, rx_bps_l1 = rl1,
          drops = d.drops, unsent = d.unsent, idle_pct = acc and idle_pct(acc.busy, acc.idle) or 0 }
      end)
    elseif g.kind == C.SURGE_SAMPLE_TXQ or g.kind == C.SURGE_SAMPLE_RXQ then
      local tx = g.kind == C.SURGE_SAMPLE_TXQ
      intervals(g, function(r, dt, d)
        local p = tx and d.tx_packets or d.rx_packets
        local b = tx and d.tx_bytes or d.rx_bytes
        local pps, l2, l1 = rates(p, b, dt)
        queues[#queues + 1] = { t = r.t, interval_s = dt, port = g.port, queue = g.id,
          dir = tx and "tx" or "rx", packets = p, bytes = b, pps = pps, bps_l2 = l2, bps_l1 = l1,
          drops = d.drops, unsent = d.unsent }
      end)
    end
  end
  return { ports = ports, queues = queues, tasks = tasks, counters = counters }
end

local function last(g) return g.rows[#g.rows] end

-- A port's or queue's totals over the run: the sum of its rises, so a port
-- closed and opened again (its counters start from 0) keeps what it counted
-- before the close; without a close this is its last row.
local COUNTS = { "tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "drops", "unsent" }
local function totals(g)
  local sum, prev = {}, {}
  for _, k in ipairs(COUNTS) do sum[k], prev[k] = 0, 0 end
  for _, r in ipairs(g.rows) do
    for _, k in ipairs(COUNTS) do
      sum[k] = sum[k] + (r[k] >= prev[k] and r[k] - prev[k] or r[k])
      prev[k] = r[k]
    end
  end
  return sum
end

local function build_summary(groups, duration)
  local ports, queues, tasks = json.array(), json.array(), json.array()
  local ps = ffi.new("struct surge_port_stats")
  local rs = ffi.new("struct surge_rate_stats")
  for _, g in ipairs(groups) do
    local counts = g.kind == C.SURGE_SAMPLE_PORT or g.kind == C.SURGE_SAMPLE_TXQ or g.kind == C.SURGE_SAMPLE_RXQ
    local r = counts and totals(g) or last(g)
    if g.kind == C.SURGE_SAMPLE_PORT then
      local tp, tl2, tl1 = rates(r.tx_packets, r.tx_bytes, duration)
      local rp, rl2, rl1 = rates(r.rx_packets, r.rx_bytes, duration)
      local p = { port = g.port, tx_packets = r.tx_packets, tx_bytes = r.tx_bytes, tx_pps = tp,
        tx_bps_l2 = tl2, tx_bps_l1 = tl1, rx_packets = r.rx_packets, rx_bytes = r.rx_bytes,
        rx_pps = rp, rx_bps_l2 = rl2, rx_bps_l1 = rl1, drops = r.drops, unsent = r.unsent }
      if C.surge_port_stats(g.port, ps) == 0 then
        p.device = { ipackets = tonumber(ps.ipackets), opackets = tonumber(ps.opackets),
          ibytes = tonumber(ps.ibytes), obytes = tonumber(ps.obytes), imissed = tonumber(ps.imissed),
          ierrors = tonumber(ps.ierrors), oerrors = tonumber(ps.oerrors), rx_nombuf = tonumber(ps.rx_nombuf) }
      end
      ports[#ports + 1] = p
    elseif g.kind == C.SURGE_SAMPLE_TXQ or g.kind == C.SURGE_SAMPLE_RXQ then
      local tx = g.kind == C.SURGE_SAMPLE_TXQ
      local q = { port = g.port, queue = g.id, dir = tx and "tx" or "rx",
        packets = tx and r.tx_packets or r.rx_packets, bytes = tx and r.tx_bytes or r.rx_bytes,
        drops = r.drops, unsent = r.unsent }
      if tx and C.surge_txq_rate_stats(g.port, g.id, rs) == 0 then
        q.rate = { target_pps = rs.target_pps > 0 and rs.target_pps or json.null, achieved_pps = rs.pps,
          achieved_bps_l1 = rs.l1_bps, packets = tonumber(rs.packets), seconds = rs.seconds,
          error_pct = rs.target_pps > 0 and (rs.pps - rs.target_pps) * 100 / rs.target_pps or json.null }
      end
      queues[#queues + 1] = q
    elseif g.kind == C.SURGE_SAMPLE_LCORE then
      tasks[#tasks + 1] = { lcore = g.id, fn = state.tasks[g.id] or json.null, busy_cycles = r.busy,
                            idle_cycles = r.idle, idle_pct = idle_pct(r.busy, r.idle) }
    end
  end
  return { duration_s = duration, ports = ports, queues = queues, tasks = tasks }
end

local function build_latency()
  local out = json.array()
  local l = ffi.new("struct surge_latency")
  for id = 0, C.surge_latency_count() - 1 do
    rc_check(C.surge_latency_get(id, l), 2)
    local n = rc_check(C.surge_latency_buckets(id, nil, 0), 2)
    local arr = ffi.new("struct surge_hist_bucket[?]", n + 1)
    n = math.min(n, rc_check(C.surge_latency_buckets(id, arr, n), 2))
    local b = { low_ns = json.array(), high_ns = json.array(), count = json.array() }
    for k = 0, n - 1 do
      b.low_ns[k + 1], b.high_ns[k + 1], b.count[k + 1] = tonumber(arr[k].low_ns), tonumber(arr[k].high_ns),
        tonumber(arr[k].count)
    end
    out[#out + 1] = { id = id, probes = tonumber(l.probes), lost = tonumber(l.lost),
      duplicated = tonumber(l.duplicated), reordered = tonumber(l.reordered),
      min_ns = l.min_ns, mean_ns = l.mean_ns, p50_ns = l.p50_ns, p90_ns = l.p90_ns, p99_ns = l.p99_ns,
      p999_ns = l.p999_ns, max_ns = l.max_ns, buckets = b, label = state.labels[id] }
  end
  return out
end

local function events()
  local out = json.array()
  for i, e in ipairs(state.events) do out[i] = e end
  if state.dropped > 0 then
    out[#out + 1] = { t = C.surge_run_elapsed(), kind = "dropped", count = state.dropped,
                      text = ("%d more events not recorded (at most %d)"):format(state.dropped, M.MAX_EVENTS) }
  end
  return out
end

-- status: "ok" | "failed" | "interrupted" | "running"; err: the error text.
function M.collect(status, exit_code, err)
  if C.surge_is_main() ~= 0 then C.surge_series_record() end
  local groups = read_rows()
  local duration = 0
  for _, g in ipairs(groups) do duration = math.max(duration, last(g).t) end
  local sig = C.surge_signal()
  local counters = json.array()
  for _, c in ipairs(counter.all()) do counters[#counters + 1] = c end
  return {
    schema = "surge-results", schema_version = M.SCHEMA_VERSION,
    status = status or "running", exit_code = exit_code or json.null,
    error = err or json.null, signal = sig ~= 0 and sig or json.null,
    metadata = metadata(duration),
    series = build_series(groups, {}),
    summary = build_summary(groups, duration),
    latency = build_latency(),
    counters = counters,
    scenarios = state.scenarios,
    events = events(),
  }
end

local CSV_COLUMNS = { "t", "interval_s", "port", "tx_packets", "tx_bytes", "tx_pps", "tx_bps_l2",
  "tx_bps_l1", "rx_packets", "rx_bytes", "rx_pps", "rx_bps_l2", "rx_bps_l1", "drops", "unsent", "idle_pct" }
M.CSV_COLUMNS = CSV_COLUMNS

local function csv_cell(v)
  if type(v) == "number" then
    if v == math.floor(v) and math.abs(v) < 2^53 then return ("%d"):format(v) end
    return ("%.17g"):format(v)
  end
  return tostring(v)
end

-- One row per interval and port.
function M.csv(res)
  local out = { table.concat(CSV_COLUMNS, ",") }
  for _, r in ipairs(res.series.ports) do
    local cells = {}
    for i, k in ipairs(CSV_COLUMNS) do cells[i] = csv_cell(r[k]) end
    out[#out + 1] = table.concat(cells, ",")
  end
  return table.concat(out, "\n") .. "\n"
end

-- Writes res (default: collect()) to path: .csv as CSV, anything else JSON.
function M.write(path, res)
  if type(path) ~= "string" or path == "" then check.raise("surge.results.write: expected a file name") end
  check.expect(res, "table?", "surge.results.write", "res")
  res = res or M.collect()
  local why = unsendable(res, "res", {}, 0)
  if why then check.raise("surge.results.write: " .. why) end
  local csv = path:match("%.csv$")
  if csv and (type(res.series) ~= "table" or type(res.series.ports) ~= "table") then
    check.raise("surge.results.write: res: a CSV file needs a results table (surge.results.collect()) with series.ports")
  end
  local text = csv and M.csv(res) or (json.encode(res, 1) .. "\n")
  local ok, err = M.save(path, text)
  if not ok then check.raise("surge.results.write: " .. path .. ": " .. err) end
  return res
end

-- A results file is written all or nothing (surge.results.file).
M.save = file.save

-- master.lua's end of a run: every task stopped and joined, then the file.
function M.finish(ok, rc_or_err)
  local out = C.surge_output()
  if out == nil then return end
  C.surge_stop()
  while C.surge_task_poll(20) > 0 do end
  C.surge_run_end()            -- the text summary ends here too
  local status, code, err = "ok", 0, nil
  if C.surge_signal() ~= 0 then status = "interrupted" end
  if not ok then status, code, err = "failed", 1, tostring(rc_or_err)
  elseif rc_or_err ~= 0 then status, code = "failed", rc_or_err end
  if ok and C.surge_signal() ~= 0 then status = "interrupted" end
  local path = ffi.string(out)
  local wok, werr = pcall(M.write, path, M.collect(status, code, err))
  if not wok then
    -- one line naming the option and the file: "surge: --output F: No space left on device"
    werr = tostring(werr):gsub("^surge%.results%.write: ", ""):gsub("^" .. path:gsub("%p", "%%%0") .. ": ", "")
    io.stderr:write("surge: --output ", path, ": ", werr, "\n")
  end
  return wok
end

return M
