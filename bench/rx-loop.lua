-- bench/rx-loop.lua - the receive rows of scripts/bench: one RX task on port 0.
--
--   surge run --vdev net_null0 bench/rx-loop.lua --mode bare
--   surge run --vdev net_pcap0,tx_pcap=F bench/rx-loop.lua --mode capture   # 512 test frames into F
--   surge run --vdev net_pcap0,rx_pcap=F,infinite_rx=1 bench/rx-loop.lua --mode measure
--   ... --mode measure --cpu-windows 7    # cycles a frame by the thread's CPU clock (scripts/bench-rx-ab)
--
-- bare: the plainest loop, q:recv(b) and b:free(). measure: the receiving
-- side every surge.dut trial and scenario uses (surge.dut.trial.rx: parse,
-- per-flow sequence counting, latency probe scan, ARP/NDP answering), on
-- the test frames `capture` wrote (surge's own trial frames: 64 flows, a
-- latency probe in one frame in 8). The rate is read from outside (DPDK
-- telemetry's ipackets) by scripts/bench. With --cpu-windows N the
-- measure loop times itself instead: N windows of --window-frames frames
-- after a warm-up, each by the receiving thread's CPU clock, and prints
-- the best as cycles a frame (TSC cycles): what preempts the thread or
-- slows the wall clock is not in it (scripts/bench-rx-ab compares two
-- builds by it).
local ffi = require("ffi")
local surge = require("surge")

ffi.cdef [[
struct rxloop_timespec { long sec, nsec; };
int clock_gettime(int clk, struct rxloop_timespec *ts);
]]
local CLOCK_THREAD_CPUTIME_ID = 3

function configure(p)
  p:description("RX rows of scripts/bench")
  p:option("--mode", "bare, measure or capture", "bare")
  p:option("--burst", "packets per receive burst", 32, "integer 1..256")
  p:option("--flows", "test flows (capture, measure)", 64, "integer 1..60000")
  p:option("--cpu-windows", "measure: time N windows by the thread's CPU clock, print the best (0: run until stopped)",
           0, "integer 0..1000")
  p:option("--window-frames", "frames a --cpu-windows window", 10000000, "integer 1000..1000000000")
end

local function thread_cpu_ns(ts)
  ffi.C.clock_gettime(CLOCK_THREAD_CPUTIME_ID, ts)
  return tonumber(ts.sec) * 1e9 + tonumber(ts.nsec)
end

-- The best of args.cpu_windows windows, in TSC cycles a frame; nil when
-- the run was stopped before the first window ended.
local function cpu_windows(r, args)
  local ts, best, seen = ffi.new("struct rxloop_timespec"), nil, 0
  local cycles_per_ns = surge.tsc_hz() / 1e9
  while seen < args.window_frames and surge.running() do seen = seen + r:poll() end   -- warm-up
  for _ = 1, args.cpu_windows do
    local n, t0 = 0, thread_cpu_ns(ts)
    while n < args.window_frames and surge.running() do n = n + r:poll() end
    if n < args.window_frames then break end
    local c = (thread_cpu_ns(ts) - t0) * cycles_per_ns / n
    if best == nil or c < best then best = c end
  end
  return best
end

function master(args)
  if args.mode == "capture" then
    local dut = require("surge.dut")
    local s = dut.session{ tx = 0, dst_mac = "02:00:00:00:00:02" }
    local r = s:trial{ size = 64, count = 512, flows = args.flows, probe_every = 8, settle = 0 }
    print(("rx-loop: captured %d test frames"):format(r.sent))
    return r.sent == 512
  end
  local port = surge.port(0, { rxq = 1, txq = 1, clones = true })
  surge.launch("rx", port, args)
  surge.wait()
end

function rx(port, args)
  local q = port:rxq(0)
  if args.mode == "bare" then
    local b = surge.pool{ size = 63 }:burst(args.burst)
    local got = 0
    while surge.running() do
      got = got + q:recv(b)
      b:free()
    end
    b:free()
    return got
  end
  local trial = require("surge.dut.trial")
  local r = trial.rx{ ifaces = { { rxq = q, txq = port:txq(0), mac = port:info().mac, ip4 = "10.1.0.2" } },
                      ctrl_pool = surge.pool{ size = 1023 }, total_flows = args.flows, sport0 = 1024,
                      dport = require("surge.dut").DPORT,
                      classes = { { first = 0, flows = args.flows, probe_every = 8, probe_off = 42 + 10 } } }
  if args.cpu_windows > 0 then
    local best = cpu_windows(r, args)
    if best == nil then error("rx-loop: stopped before the first window ended (--duration too short?)") end
    print(("rx-loop: best %.2f cycles a frame (thread CPU, %d windows of %d frames)"):format(best, args.cpu_windows,
      args.window_frames))
    r:close()
    return
  end
  local seen = 0
  while surge.running() do seen = seen + r:poll() end
  print(("rx-loop: %d seen, %d counted, %d duplicated, %d other"):format(seen, r.counter.total,
    r.counter.duplicated, r.other))
  r:close()
  return seen
end
