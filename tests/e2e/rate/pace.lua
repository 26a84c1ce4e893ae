-- pace.lua - paces one TX task at the rate given on the command line and
-- prints what it achieved, two ways: the pacer's own q:rate_stats() and the
-- driver's packet counter over the task's own clock. Used by test_rate.sh
-- and test_idle.sh.
--
--   surge run --vdev net_null0,no-rx=1 pace.lua --rate 1mpps --seconds 3
--   surge run --vdev net_ring0 --lcores '(0-2)@(0-1)' pace.lua --rate 1mpps --rx
--   surge run ... pace.lua --rate 2mpps --rerate 300kpps   # master re-rates the running task
--
-- Every figure is printed as "... error +0.123%" against the analytic
-- expectation (--expect, or worked out here from --rate/--pattern).
local surge = require("surge")

function configure(p)
  p:description("Pace a TX task and print the achieved rate against the expected one.")
  p:option("--port", "port number or name", "0")
  p:option("--rate", "rate spec for set_rate (\"\" with --pattern onoff: unpaced on periods)", "")
  p:option("--pattern", "constant, poisson, onoff or ramp", "constant")
  p:option("--seed", "poisson seed", 1, "integer")
  p:option("--on", "onoff: packets per on period", 1000, "integer")
  p:option("--off", "onoff: seconds off", 0.01, "number")
  p:option("--to", "ramp: final rate", "")
  p:option("--over", "ramp: seconds", 1, "number")
  p:option("--seconds", "seconds the task sends (per phase with --rerate)", 3, "number")
  p:option("--size", "frame size", 60, "integer")
  p:option("--burst", "packets per send", 32, "integer")
  p:option("--expect", "expected pps (0: work it out from --rate, pps units only)", 0, "number")
  p:option("--expect-l1", "expected L1 bit/s from rate_stats (0: not checked)", 0, "number")
  p:option("--rerate", "after --seconds, master sets this rate on the running task", "")
  p:option("--rerate-expect", "expected pps after --rerate (0: from its pps units)", 0, "number")
  p:option("--idle-mode", "surge.idle mode for the TX task (\"\": default)", "")
  p:option("--max-sleep-us", "surge.idle max_sleep_us for the TX task (-1: default)", -1, "integer")
  p:option("--master-idle-mode", "surge.idle mode set in master before launching", "")
  p:option("--master-max-sleep-us", "surge.idle max_sleep_us set in master (-1: none)", -1, "integer")
  p:flag("--batch", "surge.idle{ batch = true } for the TX task: the low-CPU pacer")
  p:flag("--rx", "an RX task drains the port (net_ring loopback): RX must equal TX")
  p:flag("--rx-busy", "the RX task polls with mode busy (default: the sleep policy)")
end

-- "10kpps" -> 10000; nil for anything that is not a packet rate
local function pps_of(text)
  local v, unit = tostring(text):match("^([%d.eE+]+)%s*(%a*)$")
  local scale = ({ pps = 1, kpps = 1e3, mpps = 1e6, gpps = 1e9 })[(unit or ""):lower()]
  if not v or not scale or not tonumber(v) then return nil end
  return tonumber(v) * scale
end

local function spec_of(args)
  if args.pattern == "constant" then return args.rate end
  local spec = { pattern = args.pattern, rate = args.rate ~= "" and args.rate or nil }
  if args.pattern == "poisson" then spec.seed = args.seed
  elseif args.pattern == "onoff" then spec.on, spec.off = args.on, args.off
  elseif args.pattern == "ramp" then spec.to, spec.over = args.to, args.over end
  return spec
end

-- Packets the pattern sends in its first t seconds, divided by t: the
-- expected average over [0, t]; expected(args, a, b) is the average over [a, b].
local function sent_by(args, t)
  local r = pps_of(args.rate)
  if args.pattern == "ramp" then
    local r1, over = pps_of(args.to), args.over
    if t <= over then return r * t + (r1 - r) * t * t / (2 * over) end
    return over * (r + r1) / 2 + (t - over) * r1
  elseif args.pattern == "onoff" then
    -- on packets at r (gaps 1/r), then off seconds: one period each
    return t * args.on / (args.on / r + args.off)
  end
  return t * r
end

local function expected(args, a, b)
  if args.expect > 0 then return args.expect end
  if pps_of(args.rate) == nil then return nil end          -- unpaced on periods
  if b == nil then a, b = 0, a end
  return (sent_by(args, b) - sent_by(args, a)) / (b - a)
end

-- time a busy shared machine took from the pacer
local cpu_wait = surge.cpu_wait

local function err(got, want) return (got / want - 1) * 100 end

local function report(what, pps, want, extra)
  if want == nil then
    print(("pace: %-14s %12.1f pps  %s"):format(what, pps, extra or ""))
    return
  end
  print(("pace: %-14s %12.1f pps  expected %12.1f  %s error %+.3f%%"):format(what, pps, want,
    extra or "", err(pps, want)))
end

local function set_idle(mode, max_sleep, batch)
  local pol
  if mode ~= "" then pol = { mode = mode } end
  if batch then pol = pol or {}; pol.batch = true end
  if max_sleep >= 0 then pol = pol or {}; pol.max_sleep_us = max_sleep end
  if pol then surge.idle(pol) end
end

function master(args)
  set_idle(args.master_idle_mode, args.master_max_sleep_us)
  local port = surge.port(tonumber(args.port) or args.port, { rxq = 1, txq = 1 })
  local q = port:txq(0)
  q:set_rate(spec_of(args))
  local hz = surge.tsc_hz()
  local before = port:stats()
  local rx_task
  if args.rx then rx_task = surge.launch("rx", port:rxq(0), args.rx_busy) end
  -- net_ring hands the sent mbufs to its receiver: the pool must be shared
  local shared = args.rx or port:info().driver:match("ring") ~= nil
  local task = surge.launch("tx", q, port, args, shared)
  print(("pace: started, link %d Mbit/s"):format(port:info().speed_mbps))
  io.stdout:flush()
  local res
  if args.rerate ~= "" then
    surge.wait(task, args.seconds)
    local st = q:rate_stats()
    report("before-rerate", st.pps, expected(args, st.seconds), ("(%d packets in %.3f s)"):format(st.packets, st.seconds))
    q:set_rate(args.rerate)
    surge.wait(task, 0.2)                         -- the task picks it up at its next send
    local s0, t0 = port:stats(), surge.tsc()
    surge.wait(task, args.seconds)
    local s1, t1 = port:stats(), surge.tsc()
    st = q:rate_stats()
    local want = args.rerate_expect > 0 and args.rerate_expect or pps_of(args.rerate)
    print(("pace: rerate target_pps %.1f"):format(st.target_pps))
    report("rerate-stats", st.pps, want, ("(%d packets in %.3f s)"):format(st.packets, st.seconds))
    local sec = tonumber(t1 - t0) / hz
    report("rerate-counter", (s1.opackets - s0.opackets) / sec, want,
      ("(%d packets in %.3f s)"):format(s1.opackets - s0.opackets, sec))
    surge.stop()
    res = surge.wait(task)
  else
    res = surge.wait(task)
    local st = q:rate_stats()
    report("rate_stats", st.pps, expected(args, st.seconds),
      ("(%d packets in %.6f s, target_pps %.1f)"):format(st.packets, st.seconds, st.target_pps))
    if args.expect_l1 > 0 then
      print(("pace: %-14s %12.1f bit/s  expected %12.1f  error %+.3f%%"):format("l1_bps", st.l1_bps,
        args.expect_l1, err(st.l1_bps, args.expect_l1)))
    end
    -- the driver's counter between the end of the first send and the end of
    -- the last one, on the task's clock: exactly the packets that left then
    local n, sec = res.opackets_last - res.opackets_first, res.t_last - res.t_first
    report("counters", n / sec, expected(args, res.t_first, res.t_last),
      ("(%d packets in %.6f s)"):format(n, sec))
    local ps = port:stats()
    print(("pace: task sent %d, driver opackets %d, tx_packets %d"):format(res.sent,
      ps.opackets - before.opackets, ps.tx_packets))
  end
  local got
  if rx_task then
    -- let the receiver drain what is in flight, then stop it
    local deadline = surge.tsc() + 3 * hz
    while port:stats().rx_packets < port:stats().tx_packets and surge.tsc() < deadline do
      surge.wait(rx_task, 0.05)
    end
    surge.stop()
    got = surge.wait(rx_task)
    local ps = port:stats()
    print(("pace: ring tx %d rx %d (rx task counted %d)"):format(ps.tx_packets, ps.rx_packets, got.got))
    print(("pace: rx lcore %d mode %s sleeps %d idle %.1f%%"):format(rx_task, got.mode, got.sleeps, got.idle_pct))
  end
  print(("pace: cpu-wait tx %.3f s rx %.3f s"):format(res.cpu_wait, got and got.cpu_wait or 0))
end

function tx(q, port, args, shared)
  set_idle(args.idle_mode, args.max_sleep_us, args.batch)
  local pool = surge.pool{ template = surge.proto.udp{ size = args.size }, shared = shared }
  local burst = pool:burst(args.burst)
  local hz = surge.tsc_hz()
  local sent = 0
  port:stats()                           -- once before: the first call is slow
  local w0 = cpu_wait()
  local t0 = surge.tsc()                 -- the pacer starts at the first send
  local stop_at = args.rerate == "" and t0 + args.seconds * hz or nil
  local t_first, o_first
  while surge.running() and (stop_at == nil or surge.tsc() < stop_at) do
    burst:alloc()
    sent = sent + q:send(burst)
    if not t_first then t_first, o_first = surge.tsc(), port:stats().opackets end
  end
  local t_last, o_last = surge.tsc(), port:stats().opackets
  if not t_first then t_first, o_first = t_last, o_last end   -- stopped before the first send
  return { sent = sent, cpu_wait = cpu_wait() - w0, seconds = tonumber(t_last - t0) / hz,
           t_first = tonumber(t_first - t0) / hz, t_last = tonumber(t_last - t0) / hz, opackets_first = o_first, opackets_last = o_last }
end

function rx(q, busy)
  if busy then surge.idle{ mode = "busy" } end
  local w0 = cpu_wait()
  local burst = surge.pool{ size = 63 }:burst(32)
  local got = 0
  while surge.running() do
    got = got + q:recv(burst)
  end
  burst:free()
  local ls = surge.lcore_stats()
  return { got = got, cpu_wait = cpu_wait() - w0, mode = surge.idle().mode, sleeps = ls.sleeps, idle_pct = ls.idle_pct }
end
