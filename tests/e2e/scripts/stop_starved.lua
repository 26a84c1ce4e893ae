-- stop_starved.lua - the watchdog ends code that ignores the stop, never code
-- that was starved of CPU (issue 23, open finding "the watchdog under load").
--   --mode starved: the task checks surge.running() after every 0.2 s of its
--     own CPU time; right after surge.stop() master stops the whole process
--     (SIGSTOP) for 3 s, so neither it nor the task can see the stop for far
--     longer than --stop-grace. Both end by themselves: exit 0, the counts.
--   --mode blocked: the task waits in a C sleep(30) that never returns to
--     surge and burns no CPU: the watchdog's wall bound still ends the run.
local surge = require("surge")
local ffi = require("ffi")
local C = ffi.C
ffi.cdef [[
struct surge_test_ts { long tv_sec; long tv_nsec; };
int clock_gettime(int clk, struct surge_test_ts *ts);
int getpid(void);
unsigned int sleep(unsigned int s);
]]
local CLOCK_THREAD_CPUTIME_ID = 3

function configure(p) p:option("--mode", "starved | blocked", "starved") end

function master(args)
  local port = surge.port(0)
  surge.launch(args.mode, port:txq(0))
  surge.sleep(0.5)
  print("stopping")
  io.stdout:flush()
  surge.stop()
  if args.mode == "starved" then
    local pid = C.getpid()
    os.execute(("(sleep 3; kill -CONT %d) >/dev/null 2>&1 & kill -STOP %d"):format(pid, pid))
  end
  local n = surge.wait()[1]
  print(("starved: %d bursts of 32 sent"):format(n))
end

local function cpu_s(ts)
  C.clock_gettime(CLOCK_THREAD_CPUTIME_ID, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

function starved(q)
  local b = surge.pool{ template = surge.proto.udp{} }:burst(32)
  local ts = ffi.new("struct surge_test_ts")
  local n = 0
  while true do
    local t = cpu_s(ts) + 0.2
    while cpu_s(ts) < t do end   -- 0.2 s of this thread's CPU between checks
    if not surge.running() then break end
    b:alloc()
    q:send(b)
    n = n + 1
  end
  return n
end

function blocked(q)
  local b = surge.pool{ template = surge.proto.udp{} }:burst(32)
  b:alloc()
  q:send(b)
  while surge.running() do C.sleep(30) end
  return 1
end
