-- scenario/replay/init.lua - a pcap through the DUT at its own timing, scaled, as fast as
-- possible or at a fixed rate: what was sent and what came back.
--
--   surge run --vdev ... replay --tx 0 --rx 1 --file in.pcap --timing scale=2 --rewrite
-- --rewrite sends every frame to the DUT's MAC (resolved) from the tx
-- port's MAC, so captures from elsewhere go through a router. Frames that
-- come back are counted unless they are ARP/NDP (those the responder answers).
local scenario = require("surge.scenario")
local pcap = require("surge.pcap")
local dut = require("surge.dut")
local rate_mod = require("surge.rate")
local surge = require("surge")

local M = { name = "replay", description = "a pcap through the DUT at its timing, scaled or a fixed rate: what came back" }

function M.options(p)
  scenario.dut_options(p)
  p:option("--file", "pcap or pcapng file (Ethernet)", "")
  p:option("--timing", "original | fast | scale=X", "original")
  p:option("--rate", "a fixed rate instead of the file's timing (pps, kpps, mpps)", "")
  p:option("--loop", "passes over the file", 1, "integer 1..4294967295")
  p:option("--settle", "seconds to keep receiving after the last frame", 0.5, "number 0..3600")
  p:flag("--rewrite", "set each frame's MACs: to the DUT (resolved), from the tx port")
end

function M.run(opts)
  opts = scenario.defaults(M.name, M, opts)
  if opts.file == "" then scenario.refuse("--file", "give a pcap file to replay") end
  -- the timing as surge.pcap takes it, refused here naming the option (and
  -- before EAL: scenario.dry_run), not by the reader after the port started
  local timing = opts.timing
  local scale = scenario.finite(type(timing) == "string" and (timing:match("^scale=(.+)$") or timing:match("^x(.+)$"))
    or nil)
  if timing ~= "original" and timing ~= "fast" and not (scale and scale > 0 and scale <= 1e9) then
    scenario.refuse("--timing", "'%s' is not original, fast or scale=X (X above 0, at most 1e9)", tostring(timing))
  end
  local rate = opts.rate ~= "" and scenario.pps(opts.rate, 64, 0, "--rate") or nil
  if not scenario.readable(opts.file) then
    local f, why = io.open(opts.file, "r")
    if f then f:close() why = "a folder, not a file" end
    scenario.refuse("--file", "cannot read '%s': %s", opts.file, (tostring(why):gsub("^[^:]*: ", "")))
  end
  local s = scenario.session(opts)
  local reader = pcap.reader(opts.file, { loop = opts.loop, timing = opts.rate ~= "" and "fast" or opts.timing })
  local info = reader:info()
  local mac = opts.rewrite and s:resolve() or nil
  local pool = s.replay_pool or surge.pool{ size = 4095,
    data_room = info.max_len > 1518 and info.max_len or nil }
  s.replay_pool = pool
  scenario.progress("replay: %s: %d frames, %.6f s, %d pass(es), %s", opts.file, info.records, info.duration, opts.loop,
    rate and ("at " .. rate_mod.format_pps(rate)) or ("timing " .. opts.timing))
  local id = surge.launch("surge.dut.trial:replay", { ifaces = s.ifaces, ctrl_pool = s.ctrl_pool, tx_iface = 1,
    rx_iface = s.rx_iface, reader = reader, pool = pool, rate = rate, settle = opts.settle,
    dst_mac = mac, src_mac = mac and s.tx_info.mac or nil })
  -- the reader's position, read from master while the task fills from it
  surge.progress.watch("replay", info.records * opts.loop, function()
    local i = reader:info()
    return i.pass * i.records + i.next
  end)
  local ok, t = pcall(surge.wait, id)
  reader:close()
  if not ok then error(dut.reason(t), 0) end
  local res = { scenario = M.name, file = opts.file, records = info.records, passes = opts.loop, sent = t.sent,
                received = t.received, sent_bytes = t.sent_bytes, received_bytes = t.received_bytes,
                lost = math.max(0, t.sent - t.received), seconds = t.seconds }
  res.loss_pct = t.sent > 0 and res.lost * 100 / t.sent or 0
  scenario.progress("  sent %d frames in %.3f s, received %d", t.sent, t.seconds, t.received)
  return scenario.done(M.name, res)
end

function M.report(res)
  return "replay results\n" .. scenario.table({ "file", "passes", "sent", "received", "loss_%", "sent_bytes",
    "received_bytes", "seconds" }, { { res.file, res.passes, res.sent, res.received, res.loss_pct, res.sent_bytes,
    res.received_bytes, res.seconds } })
end

return M
