-- bench/mq-loop.lua - the several-queues row of scripts/bench: one task on
-- one lcore sending the template frame round-robin to --queues TX queues of
-- port 0, a burst to each in turn (issue 20: a task feeding 4 queues must
-- send within 5 % of one feeding one). The rate is read from outside (DPDK
-- telemetry's opackets, every queue together) by scripts/bench.
--
--   surge run --vdev net_null0,no-rx=1 bench/mq-loop.lua --queues 4
local surge = require("surge")
local udp = surge.proto.udp

function configure(p)
  p:description("one task sending to several TX queues of a port")
  p:option("--queues", "TX queues the task sends to in turn", 4, "integer 1..64")
  p:option("--size", "frame size in bytes", 60, "integer 60..1514")
  p:option("--burst", "packets per burst", 32, "integer 1..256")
end

function master(args)
  local port = surge.port(0, { txq = args.queues, rxq = 1 })
  local qs = {}
  for q = 0, args.queues - 1 do qs[q + 1] = port:txq(q) end
  surge.launch("tx", qs, args)
  surge.wait()
end

function tx(qs, args)
  local pool = surge.pool{ template = udp{ size = args.size } }
  local burst = pool:burst(args.burst)
  local nq, k, sent = #qs, 1, 0
  -- the next queue from a table, not `k == nq and 1 or k + 1`: that branch
  -- leaves the loop's trace for a side trace once a turn (docs/performance.md,
  -- issue 20's sixth round)
  local next_q = {}
  for i = 1, nq do next_q[i] = i % nq + 1 end
  while surge.running() do
    burst:alloc()
    sent = sent + qs[k]:send(burst)
    k = next_q[k]
  end
  return sent
end
