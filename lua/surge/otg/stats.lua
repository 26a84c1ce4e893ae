-- otg/stats.lua - the counts of a traffic run, in memory master owns and
-- the port tasks write (otg/task.lua): per flow what was sent, per port
-- and flow what was received. Master keeps the block alive until the tasks
-- have ended (otg/traffic.lua) and hands its address to them: tasks run in
-- the same process, each in its own VM. run: each task says it is ready
-- (its templates built, its port receiving) and master says go once all
-- are: no flow sends before every port receives. A flow's paused is
-- master's (pause, resume), gen counts master's changes of them: a task
-- re-paces its queues when it moves.
local ffi = require("ffi")
require("surge.cdef")    -- struct surge_otg_count: core/dataplane/tag_count.c counts into rx and tags

local M = {}

ffi.cdef [[
struct otg_flow_stats { double tx_frames, tx_bytes, done, paused; };
struct otg_run { double go, gen; double ready[64]; };
struct otg_neigh { uint8_t mac[6]; uint8_t resolved, pad; };
]]

-- A zeroed block for nflows flows, nports ports and ntags tag slots (the
-- tagged flows' counts per tag value: otg/flows.lua's tag_readers; the
-- sending task writes a flow's sent row, each port's task its own received
-- row): { flow, rx, run, tags, addr }.
function M.new(nflows, nports, ntags)
  local s = { flow = ffi.new("struct otg_flow_stats[?]", math.max(nflows, 1)),
              rx = ffi.new("struct surge_otg_count[?]", math.max(nflows * nports, 1)),
              run = ffi.new("struct otg_run[1]"), tags = ffi.new("struct surge_otg_count[?]", math.max(ntags or 0, 1)) }
  s.addr = { tonumber(ffi.cast("uintptr_t", s.flow)), tonumber(ffi.cast("uintptr_t", s.rx)),
             tonumber(ffi.cast("uintptr_t", s.run)), tonumber(ffi.cast("uintptr_t", s.tags)) }
  return s
end

-- The block at addr (M.new's addr), in a task.
function M.view(addr)
  return { flow = ffi.cast("struct otg_flow_stats *", addr[1]),
           rx = ffi.cast("struct surge_otg_count *", addr[2]), run = ffi.cast("struct otg_run *", addr[3]),
           tags = ffi.cast("struct surge_otg_count *", addr[4]) }
end

-- The neighbour block: per device address (otg/devices.lua's entries, k
-- from 1) the gateway MAC its port's task resolved. The task writes the MAC
-- before the resolved byte; master reads the byte first.
function M.neigh_new(n)
  local b = ffi.new("struct otg_neigh[?]", n + 1)
  return { cdata = b, addr = tonumber(ffi.cast("uintptr_t", b)) }
end

function M.neigh_view(addr) return ffi.cast("struct otg_neigh *", addr) end

-- The MAC resolved for entry k as text, or nil.
function M.neigh_mac(block, k)
  local e = block.cdata[k]
  if e.resolved == 0 then return nil end
  local m = e.mac
  return ("%02x:%02x:%02x:%02x:%02x:%02x"):format(m[0], m[1], m[2], m[3], m[4], m[5])
end

return M
