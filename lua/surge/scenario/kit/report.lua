-- scenario/kit/report.lua - what a scenario prints: progress lines and
-- steps, the notes under its result table, the table and its cells.
local core = require("surge.core")
local fmt_pps = require("surge.rate").format_pps
local progress_bar = require("surge.results.progress")
local state = require("surge.scenario.kit.state")

local M = {}

-- Progress: one plain line per trial (to stdout, flushed so pipes see it);
-- --quiet silences them like every progress line (the result table stays).
-- The progress lines' note of a DUT's copies ("  duplicated N"), there when
-- it sent any: received counts unique frames, the copies are apart.
function M.dup_text(n)
  return (n or 0) > 0 and ("  duplicated %d"):format(n) or ""
end

-- The note of a trial whose offer surge did not reach (dut trial's
-- sender_limited): what it did send, and whose limit that is.
function M.limited_text(t)
  if not t.sender_limited then return "" end
  return ("  (surge sent only %s, %d of %d frames: surge's limit, not the DUT's)"):format(
    fmt_pps(t.tx_pps), t.sent, t.planned)
end

-- The lines under a result table that say what its numbers include:
-- rows limited by surge (their limited_by column) and the receive-poll
-- delay surge adds to every latency (its measured mean poll interval).
-- entries: the results' trials ({ sender_limited, rx_poll_ns, latency }).
function M.notes(entries)
  local limited, poll, n = 0, 0, 0
  for _, e in ipairs(entries) do
    if e.sender_limited then limited = limited + 1 end
    if e.rx_poll_ns and e.latency and (e.latency.probes or 0) > 0 then poll, n = math.max(poll, e.rx_poll_ns), n + 1 end
  end
  local out = {}
  if limited > 0 then
    out[#out + 1] = ("limited_by surge: in %d row(s) surge did not send the offered rate (the progress lines "
      .. "say what it sent): those figures are surge's limit, not the DUT's"):format(limited)
  end
  if n > 0 then
    out[#out + 1] = ("latency includes up to one RX poll interval of surge's own delay: polls %.2f us apart "
      .. "on average (the trial with the longest)"):format(poll / 1e3)
  end
  return #out > 0 and "\n" .. table.concat(out, "\n") or ""
end

function M.progress(fmt, ...)
  if state.dry or core.C.surge_quiet() ~= 0 then return end
  io.write(fmt:format(...), "\n")
  io.flush()
end

-- Progress with an ETA over the steps a scenario plans (a trial, or one test
-- of one frame size): surge.progress draws it on stderr, a line rewritten
-- in place on a terminal, plain lines otherwise, nothing with --quiet.
local steps
function M.steps(total, label)
  if state.dry then return end
  steps = { done = 0, total = total, label = label }
  progress_bar(0, total, label)
end
function M.step()
  if not steps then return end
  steps.done = steps.done + 1
  progress_bar(steps.done, steps.total, steps.label)
  if steps.done >= steps.total then steps = nil end
end

-- A text table: headers, rows of cells (strings or numbers), right-aligned.
function M.table(headers, rows)
  local w = {}
  for i, h in ipairs(headers) do w[i] = #h end
  local cells = {}
  for r, row in ipairs(rows) do
    cells[r] = {}
    for i = 1, #headers do
      local v = row[i]
      if type(v) == "number" then
        v = (v == math.floor(v) and math.abs(v) < 1e15) and ("%d"):format(v) or ("%.2f"):format(v)
      end
      cells[r][i] = tostring(v == nil and "-" or v)
      w[i] = math.max(w[i], #cells[r][i])
    end
  end
  local out = {}
  local function line(c)
    local parts = {}
    for i = 1, #headers do parts[i] = (" "):rep(w[i] - #c[i]) .. c[i] end
    out[#out + 1] = table.concat(parts, "  ")
  end
  line(headers)
  for _, c in ipairs(cells) do line(c) end
  return table.concat(out, "\n")
end

-- A figure formatted for a table or a progress line, "-" when there is none.
function M.cell(v, fmt)
  if v == nil then return "-" end
  return (fmt or "%s"):format(v)
end

-- A time in microseconds for a table: one decimal, "-" when there is none.
function M.us(v) return M.cell(v, "%.1f") end

-- Latency summary cells in microseconds: min, avg, p50, p99, max.
function M.lat_cells(l)
  if not l or l.probes == 0 then return { "-", "-", "-", "-", "-" } end
  return { l.min_ns / 1e3, l.mean_ns / 1e3, l.p50_ns / 1e3, l.p99_ns / 1e3, l.max_ns / 1e3 }
end

return M
