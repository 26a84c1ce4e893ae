-- scenario/flood/init.lua - many flows at the highest rate surge reaches (or --rate),
-- fixed sizes or IMIX, through the DUT: what it forwards, per frame size.
--
--   surge run --vdev ... flood --tx 0 --rx 1 --sizes imix --flows 1024 --trial 5
local scenario = require("surge.scenario")
local fmt_rate = require("surge.rate").format_pps
local json = require("surge.results.json")

local M = { name = "flood", description = "many flows at max rate (sizes or IMIX): what the DUT forwards" }

-- IMIX (simple, 7:4:1 of 64, 570 and 1518 bytes with FCS).
local IMIX = { { size = 64, share = 7 }, { size = 570, share = 4 }, { size = 1518, share = 1 } }

function M.options(p)
  scenario.dut_options(p)
  p:option("--sizes", "frame sizes with FCS, all sent together in equal shares, or imix", "64")
  p:option("--flows", "UDP flows per frame size", 1024, "integer 1..60000")
  p:option("--rate", "total offered rate (empty: as fast as surge can)", "")
  p:option("--trial", "seconds of flooding", 2, "number >0")
  p:option("--settle", "seconds to keep receiving afterwards", 0.5, "number 0..3600")
end

function M.run(opts)
  opts = scenario.defaults(M.name, M, opts)
  local mix
  if opts.sizes == "imix" then mix = IMIX else
    mix = {}
    for _, size in ipairs(scenario.sizes(opts.sizes)) do mix[#mix + 1] = { size = size, share = 1 } end
  end
  scenario.check_flows(M.name, opts.flows, #mix, "sizes")
  local s = scenario.session(opts)
  local classes, avg, total = {}, 0, 0
  for _, m in ipairs(mix) do
    scenario.check_size(s, m.size, "--sizes")
    classes[#classes + 1] = { size = m.size, share = m.share, flows = opts.flows }
    avg, total = avg + m.size * m.share, total + m.share
  end
  avg = avg / total
  local rate = opts.rate ~= "" and scenario.pps(opts.rate, avg, s:line_pps(avg), "--rate") or nil
  -- every size sends in the trial: its share of --rate (or of line rate,
  -- the most an unpaced flood reaches, where the port reports it)
  local top = rate or s:line_pps(avg)
  if top > 0 then
    for _, c in ipairs(classes) do
      scenario.check_frames(top * c.share / total, opts.trial, #classes == 1 and (rate and "--rate" or "line rate")
        or ("the %d-byte frames' share of %s"):format(c.size, rate and "--rate" or "line rate"), "--trial")
    end
  end
  scenario.progress("flood: tx port %d -> rx port %d %s, %d flow(s) x %d size(s), %s", s.tx.id, s.rx.id,
    s:next_hop(), opts.flows, #classes, rate and fmt_rate(rate) or "as fast as possible")
  s:trial{ size = classes[1].size, rate = 1000, duration = 0.2, settle = 0.2, what = "the learning trial" }
  scenario.steps(1, "flood")
  local t = s:trial{ classes = classes, rate = rate, duration = opts.trial, settle = opts.settle, what = "the flood" }
  scenario.step()
  local res = { scenario = M.name, flows = opts.flows, seconds = t.seconds, sent = t.sent, received = t.received,
                lost = t.lost, loss_pct = t.loss_pct, reordered = t.reordered, duplicated = t.duplicated, tx_pps = t.tx_pps,
                forwarded_pps = t.seconds > 0 and t.received / t.seconds or 0, sizes = json.array(),
                rate_pps = rate, planned = t.planned, sender_limited = t.sender_limited }
  for k, c in ipairs(t.classes) do
    res.sizes[k] = { size = classes[k].size, sent = c.sent, received = c.received, lost = c.lost,
                     loss_pct = c.loss_pct, reordered = c.reordered, duplicated = c.duplicated }
  end
  scenario.progress("  sent %d (%s)  received %d  loss %.3f %%%s%s", t.sent, fmt_rate(t.tx_pps),
    t.received, t.loss_pct, scenario.dup_text(t.duplicated), scenario.limited_text(t))
  return scenario.done(M.name, res)
end

function M.report(res)
  local rows = {}
  for _, c in ipairs(res.sizes) do
    rows[#rows + 1] = { c.size, c.sent, c.received, c.loss_pct, c.reordered, c.duplicated or 0 }
  end
  rows[#rows + 1] = { "all", res.sent, res.received, res.loss_pct, res.reordered, res.duplicated or 0 }
  return ("flood results: %d flows per size, %.2f s, sent %s, forwarded %s%s\n"):format(res.flows,
    res.seconds, fmt_rate(res.tx_pps), fmt_rate(res.forwarded_pps),
    res.sender_limited and (" (offered %s: surge's limit, not the DUT's)"):format(fmt_rate(res.rate_pps)) or "")
    .. scenario.table({ "size", "sent", "received", "loss_%", "reordered", "duplicated" }, rows)
end

return M
