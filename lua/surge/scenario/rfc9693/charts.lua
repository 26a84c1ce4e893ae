-- scenario/rfc9693/charts.lua - the chart rfc9693 declares for surge plot
-- (results/plot.lua finds this module by the table's name and calls draw):
-- the trials of the setup-rate and teardown-rate searches (RFC 9693 section
-- 6.2, 6.3), each trial's connection rate in the order run, those that
-- passed apart from those that failed: where the two meet is the result.
local M = {}

local TESTS = { "setup-rate", "teardown-rate" }

function M.draw(tbl, data)
  local trials = tbl.trials
  if type(trials) ~= "table" then return {} end
  local plots, n = {}, 0
  for _, test in ipairs(TESTS) do
    local k = 0
    local pts = { [true] = {}, [false] = {} }
    for _, t in ipairs(trials) do
      if type(t) == "table" and t.test == test and type(t.rate) == "number" then
        k = k + 1
        local p = pts[t.pass == true]
        p[#p + 1] = { k, t.rate }
      end
    end
    for _, pass in ipairs({ true, false }) do
      if #pts[pass] > 0 then
        n = n + #pts[pass]
        plots[#plots + 1] = { file = data(("rfc9693_%s_%s"):format(test:gsub("%-", "_"), pass and "pass" or "fail"),
          pts[pass]), column = 2, with = "points", title = ("%s trial, %s"):format(test, pass and "passed" or "failed") }
      end
    end
  end
  if #plots == 0 then return {} end
  return { { title = "RFC 9693 setup and teardown rate searches: the trials",
             xlabel = "trial (in the order run)", ylabel = "connection rate (connections/s)", xunit = "plain", xinteger = true,
             yunit = "plain", plots = plots, points = n } }
end

return M
