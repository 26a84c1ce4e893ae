-- scenario/y1564/charts.lua - the charts y1564 declares for surge plot
-- (results/plot.lua finds this module by the table's name and calls draw,
-- as for mlrsearch/charts.lua): one chart per service, the
-- information rate it delivered at each configuration step against the
-- rate offered, with its CIR and CIR + EIR as lines: below CIR the IR
-- follows the offer, above CIR + EIR a policing DUT holds it there.
-- tbl: scenarios.y1564 of a results file; data(name, rows) writes rows of
-- numbers and returns the file. Returns charts in plot.lua's form.
local M = {}

function M.draw(tbl, data)
  local rows, services = tbl.rows, tbl.services
  if type(rows) ~= "table" or type(services) ~= "table" then return {} end
  local charts = {}
  for i, s in ipairs(services) do
    if type(s) == "table" and type(s.name) == "string" and type(s.cir_bps) == "number" then
      local eir = type(s.eir_bps) == "number" and s.eir_bps or 0
      local lines = {}
      for _, r in ipairs(rows) do
        if type(r) == "table" and r.service == s.name and r.step ~= "performance" and type(r.offered_bps) == "number"
            and type(r.ir_bps) == "number" then
          lines[#lines + 1] = { r.offered_bps, r.ir_bps, s.cir_bps, s.cir_bps + eir }
        end
      end
      if #lines > 0 then
        local f = data(("y1564_%d"):format(i), lines)
        charts[#charts + 1] = { title = ("Y.1564 service %s: information rate per step"):format(s.name),
          xlabel = "offered (bit/s)", ylabel = "information rate (bit/s)", xunit = "bits", yunit = "bits",
          points = #lines, plots = {
            { file = f, column = 2, with = "linespoints", title = "delivered IR" },
            { file = f, column = 3, with = "lines", title = "CIR" },
            { file = f, column = 4, with = "lines", title = "CIR + EIR" } } }
      end
    end
  end
  return charts
end

return M
