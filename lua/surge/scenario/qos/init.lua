-- scenario/qos/init.lua - two or more traffic classes, each with its own rate and DSCP
-- mark, sent together through the DUT: loss, reordering and latency per class.
--
--   surge run --vdev ... qos --tx 0 --rx 1 --classes ef:46:10kpps,af41:34:20kpps,be:0:70kpps
local surge = require("surge")
local scenario = require("surge.scenario")
local fmt_rate = require("surge.rate").format_pps

local M = { name = "qos", description = "traffic classes with their own rates and DSCP marks: per-class loss and latency" }

function M.options(p)
  scenario.dut_options(p)
  p:option("--classes", "NAME:DSCP:RATE,... (two or more)", "ef:46:10kpps,be:0:40kpps")
  p:option("--size", "frame size in bytes, FCS included", 128, "integer 1..65535")
  p:option("--flows", "UDP flows per class", 4, "integer 1..60000")
  p:option("--trial", "seconds", 2, "number >0")
  p:option("--settle", "seconds to keep receiving afterwards", 0.5, "number 0..3600")
  p:option("--probes", "latency probes per second per class", 500, "number >0")
end

-- NAME:DSCP:RATE,... (or a list of them from Lua): each name once (they
-- name the result rows); two classes may share a DSCP (one class of service
-- of the DUT, told apart by their flows).
function M.parse_classes(text, size, line)
  local out = scenario.items(text, "--classes", { what = "class", unique = function(c) return c.name end,
    expected = "classes (\"ef:46:10kpps,be:0:40kpps\")", parse = function(w)
      local name, dscp, rate = tostring(w):match("^([%w_%-]+):(%d+):(.+)$")
      dscp = tonumber(dscp)
      if not name or dscp > 63 then
        scenario.refuse("--classes", "'%s' is not NAME:DSCP:RATE with DSCP 0..63", tostring(w))
      end
      return { name = name, dscp = dscp, rate = scenario.pps(rate, size, line, "--classes") }
    end })
  local total = 0
  for _, c in ipairs(out) do total = total + c.rate end
  if #out < 2 then scenario.refuse("--classes", "give two or more classes (NAME:DSCP:RATE,...)") end
  if line and line > 0 and total > line * (1 + 1e-9) then
    scenario.refuse("--classes", "the classes add up to %.0f pps, more than line rate (%.0f pps for %d-byte frames)",
      total, line, size)
  end
  return out
end

function M.run(opts)
  opts = scenario.defaults(M.name, M, opts)
  local s = scenario.session(opts)
  scenario.check_size(s, opts.size, "--size")
  local cls = M.parse_classes(opts.classes, opts.size, s:line_pps(opts.size))
  scenario.check_flows(M.name, opts.flows, #cls, "classes")
  for _, c in ipairs(cls) do
    scenario.check_frames(c.rate, opts.trial, ("class '%s' of --classes"):format(c.name), "--trial")
  end
  local total, classes = 0, {}
  for _, c in ipairs(cls) do total = total + c.rate end
  for k, c in ipairs(cls) do
    classes[k] = { size = opts.size, tos = c.dscp * 4, flows = opts.flows, share = c.rate,
                   probe_every = scenario.probe_every(c.rate, opts.probes) }
  end
  scenario.progress("qos: tx port %d -> rx port %d %s, %d classes, %s in all", s.tx.id, s.rx.id, s:next_hop(), #cls,
    fmt_rate(total))
  s:trial{ size = opts.size, rate = 1000, duration = 0.2, settle = 0.2, what = "the learning trial" }
  scenario.steps(1, "qos")
  local t = s:trial{ classes = classes, rate = total, duration = opts.trial, settle = opts.settle, what = "the qos trial" }
  scenario.step()
  local res = { scenario = M.name, size = opts.size, seconds = t.seconds, classes = {}, rate_pps = total,
                tx_pps = t.tx_pps, planned = t.planned, sender_limited = t.sender_limited, rx_poll_ns = t.rx_poll_ns }
  if t.sender_limited then scenario.progress("qos: offered %s in all%s", fmt_rate(total), scenario.limited_text(t)) end
  for k, c in ipairs(t.classes) do
    res.classes[k] = { name = cls[k].name, dscp = cls[k].dscp, rate_pps = cls[k].rate,
                       tx_pps = t.seconds > 0 and c.sent / t.seconds or 0, sent = c.sent, received = c.received,
                       lost = c.lost, loss_pct = c.loss_pct, reordered = c.reordered, duplicated = c.duplicated,
                       latency = c.latency, sender_limited = t.sender_limited, rx_poll_ns = t.rx_poll_ns }
    scenario.progress("  %-8s dscp %2d  sent %d  received %d  loss %.3f %%%s  %s", cls[k].name,
      cls[k].dscp, c.sent, c.received, c.loss_pct, scenario.dup_text(c.duplicated), surge.latency.format(c.latency))
  end
  return scenario.done(M.name, res)
end

function M.report(res)
  local rows = {}
  for _, c in ipairs(res.classes) do
    local l = scenario.lat_cells(c.latency)
    rows[#rows + 1] = { c.name, c.dscp, c.rate_pps, c.tx_pps, c.sent, c.received, c.loss_pct, c.reordered,
                        c.duplicated or 0,
                        l[1], l[2], l[3], l[4], l[5], c.sender_limited and "surge" or "-" }
  end
  return ("qos results (%d-byte frames, %.2f s)\n"):format(res.size, res.seconds) .. scenario.table({ "class",
    "dscp", "rate_pps", "sent_pps", "sent", "received", "loss_%", "reordered", "duplicated", "lat_min_us", "lat_avg_us",
    "lat_p50_us", "lat_p99_us", "lat_max_us", "limited_by" }, rows) .. scenario.notes(res.classes)
end

return M
