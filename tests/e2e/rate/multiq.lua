-- multiq.lua - one TX task feeding several TX queues of one port, each
-- paced at its own rate (issue 20). Used by test_rate_multiq.sh, which
-- measures each queue's rate from outside (DPDK telemetry q_opackets).
--
--   surge run --vdev net_null0,no-rx=1 multiq.lua --rates 250kpps,500kpps,1mpps,2mpps
--
-- --loop due (the default): each queue in turn gets q:send_due(burst), which
-- sends what its schedule has due and keeps the rest for the next turn.
-- --loop send: the same loop with q:send, which waits for each burst's
-- departures, so every queue goes at the pace of the slowest (for contrast).
local surge = require("surge")

function configure(p)
  p:description("one task, several paced TX queues of port 0")
  p:option("--rates", "one rate per queue, comma-separated", "250kpps,500kpps,1mpps,2mpps")
  p:option("--seconds", "seconds the task sends", 6, "number")
  p:option("--loop", "due (q:send_due) or send (q:send)", "due")
  p:option("--burst", "packets per burst", 32, "integer 1..256")
end

function master(args)
  local rates = {}
  for r in args.rates:gmatch("[^,]+") do rates[#rates + 1] = r end
  local port = surge.port(0, { txq = #rates, rxq = 1 })
  local qs = {}
  for i, r in ipairs(rates) do qs[i] = port:txq(i - 1):set_rate(r) end
  local res = surge.wait(surge.launch("tx", qs, args))
  for i, q in ipairs(qs) do
    local st = q:stats()
    print(("multiq: queue %d task sent %d stats packets %d drops %d unsent %d"):format(i - 1,
      res.sent[i], st.packets, st.drops, st.unsent))
  end
  print(("multiq: cpu-wait tx %.3f s"):format(res.cpu_wait))
  return 0
end

function tx(qs, args)
  local pool = surge.pool{ template = surge.proto.udp{ size = 60 } }
  local bursts, sent = {}, {}
  for i = 1, #qs do bursts[i] = pool:burst(args.burst); sent[i] = 0 end
  local due = args.loop == "due"
  local hz, w0 = surge.tsc_hz(), surge.cpu_wait()
  local t_end = surge.tsc() + args.seconds * hz
  local k, nq = 1, #qs
  local next_q = {}   -- a table, not a branch: one trace (bench/mq-loop.lua)
  for i = 1, nq do next_q[i] = i % nq + 1 end
  while surge.running() and surge.tsc() < t_end do
    local b = bursts[k]
    if due then
      if b.n == 0 then b:alloc() end
      sent[k] = sent[k] + qs[k]:send_due(b)
    else
      b:alloc()
      sent[k] = sent[k] + qs[k]:send(b)
    end
    k = next_q[k]
  end
  for i = 1, nq do bursts[i]:free() end   -- what send_due kept: never sent
  return { sent = sent, cpu_wait = surge.cpu_wait() - w0 }
end
