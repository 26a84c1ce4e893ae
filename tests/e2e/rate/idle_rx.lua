-- idle_rx.lua - an RX task polls a port nobody sends to, under a given idle
-- policy, for --seconds; master then prints the task lcore's idle figures.
-- test_idle.sh reads the task thread's CPU time from /proc meanwhile.
--
--   surge run --vdev net_ring0 idle_rx.lua --mode sleep --seconds 4
local surge = require("surge")

function configure(p)
  p:description("Poll an idle port under an idle policy.")
  p:option("--port", "port number or name", "0")
  p:option("--mode", "idle mode of the RX task: busy, pause or sleep", "sleep")
  p:option("--max-sleep-us", "max_sleep_us (-1: default)", -1, "integer")
  p:option("--seconds", "how long to poll", 4, "number")
end

function master(args)
  local port = surge.port(tonumber(args.port) or args.port, { rxq = 1, txq = 1 })
  local task = surge.launch("rx", port:rxq(0), args)
  print("idle_rx: started")
  io.stdout:flush()
  local res = surge.wait(task)
  print(("idle_rx: policy mode %s max_sleep_us %d step_us %d sleep_min_us %d"):format(res.mode,
    res.max_sleep_us, res.step_us, res.sleep_min_us))
  print(("idle_rx: polls %d packets %d sleeps %d idle_pct %.2f"):format(res.polls, res.got,
    res.sleeps, res.idle_pct))
end

function rx(q, args)
  local pol = { mode = args.mode }
  if args.max_sleep_us >= 0 then pol.max_sleep_us = args.max_sleep_us end
  local cur = surge.idle(pol)
  local burst = surge.pool{ size = 63 }:burst(32)
  local hz = surge.tsc_hz()
  local stop_at = surge.tsc() + args.seconds * hz
  local got, polls = 0, 0
  while surge.running() and surge.tsc() < stop_at do
    got = got + q:recv(burst)
    polls = polls + 1
  end
  burst:free()
  local ls = surge.lcore_stats()
  return { got = got, polls = polls, sleeps = ls.sleeps, idle_pct = ls.idle_pct, mode = cur.mode,
           max_sleep_us = cur.max_sleep_us, step_us = cur.step_us, sleep_min_us = cur.sleep_min_us }
end
