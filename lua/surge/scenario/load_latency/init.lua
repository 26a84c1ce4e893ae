-- scenario/load_latency/init.lua - latency percentiles and loss against offered load: one
-- trial per rate of --rates, each with latency probes.
--
--   surge run --vdev ... load-latency --tx 0 --rx 1 --rates 10kpps,100kpps,1mpps
--   require("surge.scenario.load_latency").run{ tx = 0, rates = "10kpps,50kpps" }
local surge = require("surge")
local scenario = require("surge.scenario")
local fmt_rate = require("surge.rate").format_pps
local json = require("surge.results.json")

local M = { name = "load-latency", description = "latency percentiles and loss vs offered load, over a list of rates" }

function M.options(p)
  scenario.dut_options(p)
  p:option("--size", "frame size in bytes, FCS included", 64, "integer 1..65535")
  p:option("--rates", "offered loads, comma-separated (pps, kpps, mpps, gbit, % of line)", "10kpps,50kpps,100kpps")
  p:option("--trial", "seconds per rate", 1, "number >0")
  p:option("--settle", "seconds to keep receiving after each trial", 0.3, "number 0..3600")
  p:option("--probes", "latency probes per second", 1000, "number >0")
  p:option("--flows", "UDP flows in the traffic", 1, "integer 1..60000")
end

-- One flat row per load: what surge plot reads (docs/results.md).
local function flat_rows(res)
  res.rows = json.array()
  for _, pt in ipairs(res.points) do
    local l = pt.latency or {}
    res.rows[#res.rows + 1] = { load_pps = pt.rate_pps, loss_pct = pt.loss_pct, p50_ns = l.p50_ns,
      p99_ns = l.p99_ns, p999_ns = l.p999_ns, sent_pps = pt.tx_pps, sender_limited = pt.sender_limited }
  end
end

function M.run(opts)
  opts = scenario.defaults(M.name, M, opts)
  local s = scenario.session(opts)
  scenario.check_size(s, opts.size, "--size")
  -- a rate may come back in the list (10kpps,1mpps,10kpps: does latency
  -- recover after an overload?): each is its own point, in order
  local line = s:line_pps(opts.size)
  local rates = scenario.items(opts.rates, "--rates", { what = "rate", expected = "rates (\"10kpps,50kpps\")",
    parse = function(w) return scenario.pps(w, opts.size, line, "--rates") end })
  if #rates == 0 then scenario.refuse("--rates", "no rate given") end
  for _, rate in ipairs(rates) do scenario.check_frames(rate, opts.trial, "--rates", "--trial") end
  scenario.progress("load-latency: tx port %d -> rx port %d %s, %d-byte frames", s.tx.id, s.rx.id, s:next_hop(),
    opts.size)
  s:trial{ size = opts.size, rate = 1000, duration = 0.2, settle = 0.2, what = "the learning trial" }
  -- a list even when a stop comes before the first point (JSON [], not {})
  local res = { scenario = M.name, size = opts.size, points = json.array() }
  scenario.partial(res, flat_rows)
  scenario.steps(#rates, "load-latency")
  for _, rate in ipairs(rates) do
    local t = s:trial{ size = opts.size, rate = rate, duration = opts.trial, settle = opts.settle, flows = opts.flows,
                       probe_every = scenario.probe_every(rate, opts.probes),
                       what = "the trial at " .. fmt_rate(rate) }
    local l = t.classes[1].latency
    res.points[#res.points + 1] = { rate_pps = rate, tx_pps = t.tx_pps, sent = t.sent, received = t.received,
      lost = t.lost, loss_pct = t.loss_pct, reordered = t.reordered, duplicated = t.duplicated, latency = l,
      planned = t.planned, sender_limited = t.sender_limited, rx_poll_ns = t.rx_poll_ns }
    scenario.progress("  offered %s  sent %d  received %d  loss %.3f %%%s  %s%s", fmt_rate(rate),
      t.sent, t.received, t.loss_pct, scenario.dup_text(t.duplicated), surge.latency.format(l),
      scenario.limited_text(t))
    scenario.step()
  end
  flat_rows(res)
  return scenario.done(M.name, res)
end

function M.report(res)
  local rows = {}
  for _, p in ipairs(res.points) do
    local l = scenario.lat_cells(p.latency)
    rows[#rows + 1] = { p.rate_pps, p.tx_pps, p.sent, p.received, p.loss_pct, l[1], l[2], l[3], l[4], l[5],
                        p.duplicated or 0, p.sender_limited and "surge" or "-" }
  end
  return ("load-latency results (%d-byte frames)\n"):format(res.size) .. scenario.table({ "offered_pps",
    "sent_pps", "sent", "received", "loss_%", "lat_min_us", "lat_avg_us", "lat_p50_us", "lat_p99_us",
    "lat_max_us", "duplicated", "limited_by" }, rows) .. scenario.notes(res.points)
end

return M
