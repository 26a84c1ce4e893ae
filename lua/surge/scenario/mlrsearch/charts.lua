-- scenario/mlrsearch/charts.lua - the charts mlrsearch declares for surge
-- plot (results/plot.lua finds this module by the table's name and calls
-- draw; results/ names no scenario):
--   * the bounds per frame size: each goal's relevant lower and upper bound
--     and conditional throughput (pps, log scale: sizes differ by decades)
--   * the trials over the search's trial time: each trial's load, per frame
--     size, those that met every goal's loss ratio apart from the others.
-- tbl: scenarios.mlrsearch of a results file; data(name, rows) writes rows
-- of numbers and returns the file. Returns charts in plot.lua's form.
local M = {}

function M.draw(tbl, data)
  local rows, trials = tbl.rows, tbl.trials
  if type(rows) ~= "table" or #rows == 0 then return {} end
  local goals, sizes, seen, by = {}, {}, {}, {}
  for _, r in ipairs(rows) do
    if type(r.goal) == "string" and type(r.frame_size) == "number" then
      if not seen[r.goal] then seen[r.goal] = true goals[#goals + 1] = r.goal end
      if not by[r.frame_size] then by[r.frame_size] = {} sizes[#sizes + 1] = r.frame_size end
      by[r.frame_size][r.goal] = r
    end
  end
  table.sort(sizes)
  local function num(v) return type(v) == "number" and v or 0 / 0 end
  local lines = {}
  for _, size in ipairs(sizes) do
    local line = { size }
    for _, g in ipairs(goals) do
      local r = by[size][g] or {}
      line[#line + 1] = num(r.lower_bound_pps)
      line[#line + 1] = num(r.upper_bound_pps)
      line[#line + 1] = num(r.conditional_throughput_pps)
    end
    lines[#lines + 1] = line
  end
  local f = data("mlr_bounds", lines)
  local plots = {}
  for i, g in ipairs(goals) do
    for k, what in ipairs({ "lower bound", "upper bound", "conditional throughput" }) do
      plots[#plots + 1] = { file = f, column = 1 + (i - 1) * 3 + k, with = "linespoints", title = g .. " " .. what }
    end
  end
  local charts = { { title = "MLRsearch (RFC 9971): bounds per frame size", xlabel = "frame size (bytes)",
                     ylabel = "load (pps)", xunit = "bytes", yunit = "rate", logy = true, plots = plots,
                     points = #lines } }
  if type(trials) == "table" and #trials > 0 then
    -- the smallest loss ratio among the goals: a trial at or below it met them all
    local least = math.huge
    for _, r in ipairs(rows) do if type(r.loss_ratio) == "number" then least = math.min(least, r.loss_ratio) end end
    local tplots, n = {}, 0
    for _, size in ipairs(sizes) do
      for _, ok in ipairs({ true, false }) do
        local pts = {}
        for _, t in ipairs(trials) do
          if t.frame_size == size and type(t.t_s) == "number" and type(t.load_pps) == "number"
              and ((num(t.loss_ratio) <= least) == ok) then
            pts[#pts + 1] = { t.t_s, t.load_pps }
          end
        end
        if #pts > 0 then
          n = n + #pts
          tplots[#tplots + 1] = { file = data(("mlr_trials_%d_%s"):format(size, ok and "met" or "lost"), pts),
            column = 2, with = "points", title = ("%d B, %s"):format(size, ok and "loss within every goal"
              or "loss above a goal") }
        end
      end
    end
    if #tplots > 0 then
      charts[#charts + 1] = { title = "MLRsearch trials over the search", xlabel = "trial time (s)",
                              ylabel = "load (pps)", xunit = "seconds", yunit = "rate", logy = true, plots = tplots,
                              points = n }
    end
  end
  return charts
end

return M
