-- bench/idle.lua - one cell of the idle-policy table (driven by scripts/bench-idle).
--
-- A TX task sends through a net_ring loopback at --load, every 100th packet
-- a latency probe (at idle load: probes only, 1 kpps). Master receives under
-- the idle policy being measured and reports its own thread's CPU use (from
-- /proc/thread-self/stat) and the probe latency.
local surge = require("surge")

function configure(p)
  p:option("--policy", "busy, pause or sleep", "sleep")
  p:option("--max-sleep", "max_sleep_us for the sleep policy", 500, "integer")
  p:option("--load", "idle, 1mpps, max or bursts", "idle")
  p:option("--seconds", "measured time", 3, "number")
end

local PROBE_AT = 44

local function cpu_ticks()
  local f = assert(io.open("/proc/thread-self/stat"))
  local line = f:read("*l")
  f:close()
  -- fields after the ")" of the command name: utime is the 12th, stime the 13th
  local rest = line:match("%) (.*)$")
  local fields = {}
  for x in rest:gmatch("%S+") do fields[#fields + 1] = x end
  return tonumber(fields[12]) + tonumber(fields[13])
end

function master(args)
  local port = surge.port(surge.vdev("net_ring_idle0"), { rxq = 1, txq = 1 })
  local q = port:txq(0)
  local loads = {
    idle = { rate = "1kpps", every = 1 },
    ["1mpps"] = { rate = "1mpps", every = 100 },
    max = { rate = nil, every = 100 },
    bursts = { rate = { pattern = "onoff", on = 1000, off = 0.01 }, every = 100 },
  }
  local load = loads[args.load] or error("--load: idle, 1mpps, max or bursts", 0)
  q:set_rate(load.rate)
  surge.idle{ mode = args.policy, max_sleep_us = args.max_sleep }
  local task = surge.launch("tx", q, load.every, args.seconds + 0.5)
  local rxq, lat = port:rxq(0), surge.latency.receiver{ offset = PROBE_AT }
  local burst = surge.pool{ size = 255 }:burst(32)
  local received = 0
  -- warm up, then measure this thread over --seconds
  local t_end = surge.tsc() + 0.25 * surge.tsc_hz()
  while surge.tsc() < t_end do
    if rxq:recv(burst) > 0 then
      received = received + burst.n
      lat:scan(burst)
    end
  end
  local c0, w0 = cpu_ticks(), surge.tsc()
  t_end = w0 + args.seconds * surge.tsc_hz()
  while surge.tsc() < t_end and surge.running() do
    if rxq:recv(burst) > 0 then
      received = received + burst.n
      lat:scan(burst)
    end
  end
  local cpu = (cpu_ticks() - c0) / 100 / (tonumber(surge.tsc() - w0) / surge.tsc_hz()) * 100
  -- keep the ring moving until the sender is done (it blocks on a full
  -- ring); these packets count, but their latency is not measured
  local sent
  while true do
    local v, err = surge.wait(task, 0)
    if err == nil then sent = v break end
    received = received + rxq:recv(burst)
  end
  for _ = 1, 100000 do
    if rxq:recv(burst) == 0 then break end
    received = received + burst.n
  end
  burst:free()
  local s = lat:summary()
  print(("RESULT policy=%s max_sleep=%d load=%s cpu=%.1f sent=%d received=%d mpps=%.3f "
    .. "lat_min=%.1f lat_avg=%.1f lat_p99=%.1f lat_max=%.1f probes=%d lost=%d"):format(
    args.policy, args.max_sleep, args.load, cpu, sent, received, received / (args.seconds + 0.5) / 1e6,
    s.min_ns / 1e3, s.mean_ns / 1e3, s.p99_ns / 1e3, s.max_ns / 1e3, s.probes, s.lost))
end

function tx(q, every, seconds)
  local pool = surge.pool{ template = surge.proto.udp{ size = 64 }, shared = true }
  local burst = pool:burst(32)
  local probes = surge.latency.marker{ offset = PROBE_AT, every = every }
  local stop_at = surge.tsc() + seconds * surge.tsc_hz()
  local sent = 0
  while surge.running() and surge.tsc() < stop_at do
    burst:alloc()
    probes:mark(burst)
    sent = sent + q:send(burst)
  end
  return sent
end
