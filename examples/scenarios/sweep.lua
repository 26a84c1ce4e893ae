-- sweep.lua - a user scenario: one trial per frame size at a fixed rate,
-- loss per size. A complete example of the scenario contract (docs/scenarios.md):
--
--   SURGE_PATH=examples/scenarios surge run --vdev net_ring0 sweep --sizes 64,1518 --rate 20kpps
--   surge run --path examples/scenarios sweep --help
--   require("sweep").run{ tx = 0, sizes = "64,256" }          -- from a script or the REPL
local scenario = require("surge.scenario")

local M = { name = "sweep", description = "one trial per frame size at a fixed rate: loss per size" }

-- The option schema: the same parser a script's configure(p) gets.
function M.options(p)
  scenario.dut_options(p)                       -- --tx, --rx, --src, --dst, --gateway, ...
  p:option("--sizes", "frame sizes in bytes, FCS included", "64,512,1518")
  p:option("--rate", "offered rate per trial", "10kpps")
  p:option("--trial", "seconds per trial", 0.5, "number >0")
end

-- Runs the trials and returns the results as data.
function M.run(opts)
  opts = scenario.defaults(M.name, M, opts)     -- fills defaults when called from Lua
  local s = scenario.session(opts)              -- opens the ports, resolves the gateway
  local res = { scenario = M.name, rows = {} }
  for _, size in ipairs(scenario.sizes(opts.sizes)) do
    scenario.check_size(s, size, "--sizes")     -- a size the ports refuse: "sweep: --sizes: ..."
    local t = s:trial{ size = size, rate = scenario.pps(opts.rate, size, s:line_pps(size), "--rate"),
                       duration = opts.trial, settle = 0.1 }
    scenario.progress("  %5d B  sent %d  received %d  loss %.3f %%", size, t.sent, t.received, t.loss_pct)
    res.rows[#res.rows + 1] = { size = size, sent = t.sent, received = t.received, loss_pct = t.loss_pct }
  end
  res.ok = true
  for _, r in ipairs(res.rows) do if r.loss_pct > 0 then res.ok = false end end
  return scenario.done(M.name, res)            -- to --output, however it ran; ok = false: exit 1
end

-- The table printed at the end of `surge run sweep`.
function M.report(res)
  local rows = {}
  for _, r in ipairs(res.rows) do rows[#rows + 1] = { r.size, r.sent, r.received, r.loss_pct } end
  return "sweep results\n" .. scenario.table({ "size", "sent", "received", "loss_%" }, rows)
end

return M
