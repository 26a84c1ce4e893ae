-- bench/wake.lua - first-packet latency after an idle spell, for
-- scripts/bench-idle --cpu. An RX task polls port 0 (a net_tap port)
-- under --mode; bench/wake.py writes a frame into the tap every
-- --gap-ms (ethertype 0x88b5, "SRGW", then its send time as little-endian
-- CLOCK_MONOTONIC_RAW ns); the task turns burst.tsc into the same clock
-- (surge.tsc_ns) and prints the delay's quantiles in us:
--   WAKE frames=20 min=.. p50=.. p90=.. max=..
local surge = require("surge")
local ffi = require("ffi")

function configure(p)
  p:option("--mode", "idle mode of the RX task", "sleep")
  p:option("--frames", "frames to wait for", 20, "integer")
  p:option("--seconds", "give up after", 30, "number")
end

function master(args)
  local port = surge.port(0, { rxq = 1, txq = 1 })
  print(surge.wait(surge.launch("rx", port:rxq(0), args)))
end

function rx(q, args)
  surge.idle{ mode = args.mode }
  local burst = surge.pool{ size = 63 }:burst(32)
  local d = {}
  local stop = surge.tsc() + args.seconds * surge.tsc_hz()
  print("WAKE ready")
  io.stdout:flush()
  while surge.running() and #d < args.frames and surge.tsc() < stop do
    for i = 0, q:recv(burst) - 1 do
      local p = burst.data[i]
      if burst.len[i] >= 26 and p[12] == 0x88 and p[13] == 0xb5 and ffi.string(p + 14, 4) == "SRGW" then
        local sent = ffi.cast("uint64_t *", p + 18)[0]
        d[#d + 1] = tonumber(surge.tsc_ns(burst.tsc) - tonumber(sent)) / 1e3
      end
    end
  end
  burst:free()
  table.sort(d)
  local function at(f) return d[math.max(1, math.ceil(#d * f))] or -1 end
  return ("WAKE frames=%d min=%.1f p50=%.1f p90=%.1f max=%.1f"):format(#d, at(0), at(0.5), at(0.9), at(1))
end
