-- A registry of objects made by id (core/base's registry_add: latency
-- receivers here, connection engines and host tables alike) takes
-- SURGE_LATENCY_MAX entries; the next is refused with -ENOSPC and an error
-- naming the limit, and every entry made before stays reachable by its id.
local ffi = require("ffi")
local surge = require("surge")
local core = require("surge.core")

local T = {}

function T.the_entry_past_the_limit_is_refused()
  local C = ffi.C
  local made = {}
  for _ = 1, 64 do made[#made + 1] = surge.latency.receiver{ offset = 44 } end
  for i, r in ipairs(made) do assert(r.id == i - 1, ("receiver %d has id %d"):format(i, r.id)) end
  assert(C.surge_latency_count() == 64, "64 receivers: " .. C.surge_latency_count())
  assert(C.surge_latency_new() == -28, "the 65th is -ENOSPC")
  assert(core.last_error() == "too many latency receivers (at most 64)", core.last_error())
  local ok, err = pcall(surge.latency.receiver, { offset = 44 })
  assert(not ok and tostring(err):find("too many latency receivers (at most 64)", 1, true), tostring(err))
  assert(C.surge_latency_count() == 64, "the refusals added none: " .. C.surge_latency_count())
  local out = ffi.new("struct surge_latency")
  for id = 0, 63 do assert(C.surge_latency_get(id, out) == 0, "receiver " .. id .. " reachable") end
end

return T
