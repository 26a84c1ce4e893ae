-- scenario/rfc3918/charts.lua - the charts rfc3918 declares for surge plot
-- (results/plot.lua finds this module by the table's name):
-- the join and leave delay of each group (7.1, 7.2), one series per test
-- and receiving port, groups in the order joined. The throughput tests and
-- the capacity are one figure each (the report's table), no chart.
local M = {}

local NAMES = { join_delay = "join delay", leave_delay = "leave delay" }

function M.draw(tbl, data)
  local rows = tbl.rows
  if type(rows) ~= "table" then return {} end
  local plots, n = {}, 0
  for _, r in ipairs(rows) do
    if type(r) == "table" and NAMES[r.test] and type(r.per_group) == "table" then
      local pts = {}
      for g, d in ipairs(r.per_group) do
        if type(d) == "table" and type(d.delay_us) == "number" then pts[#pts + 1] = { g, d.delay_us * 1e-6 } end
      end
      if #pts > 0 then
        n = n + #pts
        local port = type(r.port) == "number" and r.port or #plots
        plots[#plots + 1] = { file = data(("rfc3918_%s_%d"):format(r.test, port), pts), column = 2,
          with = "linespoints", title = ("%s, port %s"):format(NAMES[r.test], tostring(port)) }
      end
    end
  end
  if #plots == 0 then return {} end
  return { { title = "RFC 3918 join and leave delay (7.1, 7.2) per group",
             xlabel = "group (in the order joined)", ylabel = "delay (s)", xunit = "plain", xinteger = true, yunit = "time",
             plots = plots, points = n } }
end

return M
