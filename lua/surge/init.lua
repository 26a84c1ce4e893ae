-- surge - the Lua API scripts use.
--
--   local surge = require "surge"
--   function master(args)
--     local port = surge.port(0)
--     surge.launch("tx", port:txq(0), args)
--     surge.wait()
--   end
--   function tx(q, args)
--     local burst = surge.pool{ template = surge.proto.udp{} }:burst(32)
--     while surge.running() do burst:alloc(); q:send(burst) end
--   end
local ffi = require "ffi"
local core = require "surge.core"
local serial = require "surge.serial"
local port = require "surge.port"
local pool = require "surge.pool"

local C, check = core.C, core.check
local surge = {
  version = ffi.string(C.surge_version()),
  proto = require "surge.proto",
  port = port.open,
  pool = pool.new,
}

local launched = {}   -- tasks started by this master, in launch order

function surge.running() return C.surge_running() ~= 0 end
function surge.stop() C.surge_stop() end
function surge.lcore() return C.surge_lcore_id() end
function surge.is_master() return C.surge_is_main() ~= 0 end
function surge.tsc() return C.surge_tsc() end
function surge.tsc_hz() return tonumber(C.surge_tsc_hz()) end
function surge.sleep(seconds) C.surge_sleep_us(math.floor(seconds * 1e6)) end
function surge.ports() return C.surge_port_count() end
function surge.last_error() return core.last_error() end

-- Starts fn (a global function of the script) on a free lcore in a fresh VM,
-- with the arguments copied as plain data. Returns the task's id (its lcore).
function surge.launch(fn, ...)
  if type(fn) ~= "string" then
    error("surge.launch: the first argument is the name of a global function, e.g. \"tx\"", 2)
  end
  local n = select("#", ...)
  local ok, text = pcall(serial.encode, { ... }, n)
  if not ok then error("surge.launch(\"" .. fn .. "\"): " .. text, 2) end
  local id = check(C.surge_task_launch(fn, text, #text), 2)
  launched[#launched + 1] = { id = id, fn = fn }
  return id
end

-- Handles rebuilt from ids when task data is decoded.
surge.handles = {
  port = port.wrap, txq = port.txq, rxq = port.rxq, pool = pool.wrap,
}

local TaskFailure = {}
TaskFailure.__tostring = function(e) return e.msg end
surge.TaskFailure = TaskFailure

-- Waits for every launched task, printing a stats line each interval.
-- Returns a list with each task's first return value, in launch order. If a
-- task failed, raises its error (file:line and traceback).
function surge.wait()
  while C.surge_task_poll(100) > 0 do end
  local results, failures = {}, {}
  local text, len = ffi.new("const char *[1]"), ffi.new("size_t[1]")
  for i, t in ipairs(launched) do
    local rc = check(C.surge_task_result(t.id, text, len), 2)
    local s = ffi.string(text[0], len[0])
    if rc == 1 then
      failures[#failures + 1] = s
    else
      local vals = serial.decode(s, surge.handles)
      results[i] = vals[1]
    end
  end
  launched = {}
  if #failures > 0 then
    error(setmetatable({ msg = table.concat(failures, "\n") }, TaskFailure), 0)
  end
  return results
end

return surge
