-- rate.lua - every pacing mode, and re-rating a running task from master.
--
--   surge run examples/rate.lua                  # on the virtual sink, ~8 s
--   surge run examples/rate.lua --seconds 2
--
-- A first task paces its own queue through constant, L1 bit rate, Poisson,
-- on/off, ramp and a Lua gap function, measuring what each achieved. Then a
-- second task sends while master changes its rate twice, measuring each from
-- outside.
local surge = require("surge")

function configure(p)
  p:description("Pacing modes: constant, bit rate, poisson, onoff, ramp, lua gaps, re-rate.")
  p:option("--port", "port number or name", "0")
  p:option("--seconds", "seconds per phase", 1, "number 0..86400")
  p:option("--size", "frame size in bytes", 60, "integer 14..9600")
end

local function phases_of(seconds)
  return {
    { name = "constant 100kpps", spec = "100kpps", expect = 100e3 },
    { name = "L1 100mbit", spec = "100mbit", expect = 100e6 / ((60 + 24) * 8) },
    { name = "poisson 50kpps", spec = { rate = "50kpps", pattern = "poisson", seed = 1 }, expect = 50e3 },
    { name = "onoff 1000 pkts / 10 ms", spec = { pattern = "onoff", rate = "1mpps", on = 1000, off = 0.01 },
      expect = 1000 / (1000 / 1e6 + 0.01) },
    { name = "ramp 10k->100kpps", spec = { rate = "10kpps", pattern = "ramp", to = "100kpps", over = seconds },
      expect = 55e3 },
    { name = "lua gaps 20 us", spec = { gap = function() return 20000 end }, expect = 50e3 },
  }
end

local function report(name, st, expect)
  print(("  %-26s %10.0f pps  (expected %10.0f, %+6.2f%%)"):format(name, st.pps, expect,
    (st.pps / expect - 1) * 100))
end

function master(args)
  local port = surge.port(tonumber(args.port) or args.port, { txq = 1 })
  local q = port:txq(0)
  -- 1. the task paces its own queue through every pattern
  local results = surge.wait(surge.launch("phases", q, args)) or {}
  print("rates set by the task itself:")
  for _, r in ipairs(results) do report(r.name, r, r.expect) end
  if not surge.running() then return end          -- --duration or Ctrl-C
  -- 2. a task sends; master changes its rate while it runs
  local task = surge.launch("steady", q, args)
  print("rates set by master on the running task:")
  for _, r in ipairs({ { "500kpps", 500e3 }, { "2mpps", 2e6 } }) do
    q:set_rate(r[1])
    surge.sleep(args.seconds)
    if not surge.running() then break end
    report(r[1], q:rate_stats(), r[2])
  end
  surge.stop()
  surge.wait(task)
end

local function sender(args)
  local pool = surge.pool{ template = surge.proto.udp{ size = args.size } }
  return pool:burst(32)
end

function phases(q, args)
  local burst = sender(args)
  local results = {}
  local hz = surge.tsc_hz()
  for _, ph in ipairs(phases_of(args.seconds)) do
    if not surge.running() then break end          -- --duration or Ctrl-C
    q:set_rate(ph.spec)
    local stop_at = surge.tsc() + args.seconds * hz
    while surge.running() and surge.tsc() < stop_at do
      burst:alloc()
      q:send(burst)
    end
    local st = q:rate_stats()
    results[#results + 1] = { name = ph.name, pps = st.pps, expect = ph.expect }
  end
  q:set_rate(nil)
  return results
end

function steady(q, args)
  local burst = sender(args)
  while surge.running() do          -- master sets and changes the rate
    burst:alloc()
    q:send(burst)
  end
end
