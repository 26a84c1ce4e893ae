-- otg/task.lua - the task of one port while OTG traffic runs (launched as
-- "surge.otg.task:port" by otg/traffic.lua): it sends the flows whose
-- tx port this is, each on its own TX queue paced by surge's pacer at the
-- flow's rate (send_due: no flow waits on another's schedule), and counts
-- what the port receives per flow (the tag otg/flows.lua puts at the end of
-- a frame).
--
-- Counts go to memory master owns (otg/stats.lua): per flow the frames and
-- bytes sent and whether its packets are all sent (this task alone writes
-- them), per port and flow the frames and bytes received (this port's
-- task alone writes its row). Aligned 8-byte stores: master reads whole
-- values while the task runs.
local surge = require "surge"
local core = require "surge.core"
local flows = require "surge.otg.flows"
local stats = require "surge.otg.stats"

local C = core.C
local M = {}

local BURST = 32
local IDLE_US = 20     -- a round with nothing to send or receive: the lcore is shared (floating lcores)

-- a: { txqs = { txq, ... } (one per flow, in order), rxq, flows = { spec, ... },
--      stats = address of the run's stats, nflows, row (this port's rx row) }
function M.port(a)
  local st = stats.view(a.stats, a.nflows, a.nports)
  local sending = {}
  for i, spec in ipairs(a.flows) do
    local t, f = flows.build(spec)
    local pool = surge.pool{ template = t, shared = true }
    local q = a.txqs[i]
    q:set_rate(spec.rate)
    sending[i] = { q = q, burst = pool:burst(BURST), f = f or false, left = spec.count, s = st.flow[spec.index],
                   bytes = spec.size + flows.FCS }
  end
  local rxq = a.rxq
  local rxb = surge.pool{ size = 2048, shared = true }:burst(BURST)
  local rx = st.rx + a.row * a.nflows
  local nflows, ns = a.nflows, #sending
  local T0, T1, T2, T3 = flows.TAG:byte(1, 4)
  while surge.running() do
    local busy = false
    for i = 1, ns do
      local x = sending[i]
      local left = x.left
      if left ~= 0 then
        local b = x.burst
        if b.n == 0 then
          b:alloc((left > 0 and left < BURST) and left or BURST)
          if x.f then x.f:apply(b) end
        end
        local sent = x.q:send_due(b)
        if sent > 0 then
          busy = true
          local s = x.s
          s.tx_frames = s.tx_frames + sent
          s.tx_bytes = s.tx_bytes + sent * x.bytes
          if left > 0 then
            left = left - sent
            x.left = left
            if left == 0 then s.done = 1 end
          end
        end
      end
    end
    local n = rxq:recv(rxb)
    if n > 0 then
      busy = true
      local data, len = rxb.data, rxb.len
      for j = 0, n - 1 do
        local p, l = data[j], len[j]
        if l >= 6 and p[l - 6] == T0 and p[l - 5] == T1 and p[l - 4] == T2 and p[l - 3] == T3 then
          local k = p[l - 2] * 256 + p[l - 1]
          if k < nflows then
            local r = rx[k]
            r.frames = r.frames + 1
            r.bytes = r.bytes + l + flows.FCS
          end
        end
      end
    end
    if not busy then C.surge_sleep_us(IDLE_US) end
  end
  for i = 1, ns do sending[i].burst:free() end   -- allocated when the run stopped: never sent
  rxb:free()
  return true
end

return M
