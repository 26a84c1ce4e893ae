-- bench/rx-loop.lua - the receive rows of scripts/bench: one RX task on port 0.
--
--   surge run --vdev net_null0 bench/rx-loop.lua --mode bare
--   surge run --vdev net_pcap0,tx_pcap=F bench/rx-loop.lua --mode capture   # 512 test frames into F
--   surge run --vdev net_pcap0,rx_pcap=F,infinite_rx=1 bench/rx-loop.lua --mode measure
--
-- bare: the plainest loop, q:recv(b) and b:free(). measure: the receiving
-- side every surge.dut trial and scenario uses (surge.dut.trial.rx: parse,
-- per-flow sequence counting, latency probe scan, ARP/NDP answering), on
-- the test frames `capture` wrote (surge's own trial frames: 64 flows, a
-- latency probe in one frame in 8). The rate is read from outside (DPDK
-- telemetry's ipackets) by scripts/bench.
local surge = require "surge"

function configure(p)
  p:description("RX rows of scripts/bench")
  p:option("--mode", "bare, measure or capture", "bare")
  p:option("--burst", "packets per receive burst", 32, "integer 1..256")
  p:option("--flows", "test flows (capture, measure)", 64, "integer 1..60000")
end

function master(args)
  if args.mode == "capture" then
    local dut = require "surge.dut"
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
  local trial = require "surge.dut.trial"
  local r = trial.rx{ ifaces = { { rxq = q, txq = port:txq(0), mac = port:info().mac, ip4 = "10.1.0.2" } },
                      ctrl_pool = surge.pool{ size = 1023 }, total_flows = args.flows, sport0 = 1024,
                      dport = require("surge.dut").DPORT,
                      classes = { { first = 0, flows = args.flows, probe_every = 8, probe_off = 42 + 10 } } }
  local seen = 0
  while surge.running() do seen = seen + r:poll() end
  print(("rx-loop: %d seen, %d counted, %d duplicated, %d other"):format(seen, r.counter.total,
    r.counter.duplicated, r.other))
  r:close()
  return seen
end
