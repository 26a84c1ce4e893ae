-- counters.lua - what test_rate_counters.sh checks: each counter and report
-- means one thing.
--
--   --case stop    one burst of 32 at 10 pps; the run stops (--duration 1)
--                  while most of it is not due: those are unsent, not drops
--   --case target  rate_stats().target_pps for onoff, ramp and custom gaps
--   --case reader  a pcap reader with timing = "original" sent without
--                  r:pace(q): the file's gaps still hold; with a rate of the
--                  queue's own, the send is refused
local surge = require("surge")
local pcap = require("surge.pcap")

function configure(p)
  p:option("--case", "stop, target or reader", "stop")
  p:option("--pattern", "target: onoff, ramp or gaps", "onoff")
  p:option("--file", "reader: pcap file to write and replay", "")
  p:option("--catchup", "target: burst or skip", "burst")
end

function master(args)
  local port = surge.port(0, { txq = 1, rxq = 0 })
  local q = port:txq(0)
  if args.case == "reader" then
    -- 20 packets 10 ms apart: 190 ms from the first to the last
    local pool = surge.pool{ template = surge.proto.udp{ dst = "10.0.0.2", size = 60 }, size = 63 }
    local b = pool:burst(1)
    local w = pcap.writer(args.file)
    local t, hz = surge.tsc(), surge.tsc_hz()
    for _ = 1, 20 do
      b:alloc(1); b.tsc = t; w:write(b); b:free()
      t = t + hz / 100
    end
    w:close()
  end
  surge.launch("tx", q, args)
  local res = surge.wait()[1]
  local s = port:stats()
  print(("counters: tx_packets %d tx_drops %d tx_unsent %d"):format(s.tx_packets, s.tx_drops, s.tx_unsent))
  if res then print(res) end
end

function tx(q, args)
  local t = surge.proto.udp{ dst = "10.0.0.2", size = 60 }
  local pool = surge.pool{ template = t, size = 511 }
  if args.case == "stop" then
    q:set_rate("10pps")
    local b = pool:burst(32)
    b:alloc()
    local sent = q:send(b)                     -- returns at the stop, 3.1 s early
    local st = q:rate_stats()
    return ("counters: sent %d rate_stats unsent %d"):format(sent, st.unsent)
  elseif args.case == "target" then
    local spec = ({ onoff = { rate = "1mpps", pattern = "onoff", on = 1000, off = 0.01 },
                    ramp = { rate = "10kpps", pattern = "ramp", to = "100kpps", over = 2 },
                    gaps = { gap = function() return 20000 end } })[args.pattern]
    spec.catchup = args.catchup
    q:set_rate(spec)
    local b = pool:burst(32)
    local stop = surge.tsc() + surge.tsc_hz()     -- one second
    while surge.running() and surge.tsc() < stop do b:alloc(); q:send(b) end
    local st = q:rate_stats()
    return ("counters: %s target_pps %.1f pps %.1f late %d skipped_s %.4f catchup %s"):format(args.pattern,
      st.target_pps, st.pps, st.late, st.skipped_s, st.catchup)
  else
    local r = pcap.reader(args.file, { timing = "original" })
    local b = pool:burst(32)
    local t0, n = surge.tsc(), 0
    while r:fill(b) > 0 do n = n + q:send(b) end   -- no r:pace(q)
    local ms = tonumber(surge.tsc() - t0) * 1000 / surge.tsc_hz()
    r:rewind()
    q:set_rate("1kpps")
    r:fill(b)
    local ok, e = pcall(q.send, q, b)
    b:free()
    return ("counters: reader sent %d in %.1f ms; with a rate: %s"):format(n, ms, ok and "sent" or e)
  end
end
