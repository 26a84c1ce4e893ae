-- core.lua - the FFI namespace and the error convention shared by modules.
--
-- C calls return 0 or a count on success and -errno on failure, with the
-- message in surge_last_error(). check() turns a failure into a Lua error
-- raised at the caller's caller, so it names the user's file:line.
local ffi = require "ffi"
require "surge.cdef"

local C = ffi.C
local M = { C = C }

local ESHUTDOWN = 108

-- The error a call into surge raises once the run stopped (after
-- --duration, a signal or surge.stop()) and the calling loop kept going:
-- task and master code end on it as they would at the end of their loop.
M.STOPPED = setmetatable({}, { __tostring = function() return "run stopped" end })

function M.last_error()
  return ffi.string(C.surge_last_error())
end

local raise = require("surge.check").raise

-- A failed call: "run stopped" (see M.STOPPED) or its error at the user's line.
function M.check(rc)
  if rc < 0 then
    if rc == -ESHUTDOWN then error(M.STOPPED, 0) end
    raise(M.last_error())
  end
  return rc
end

-- Raises M.STOPPED when the run stopped a while ago (see core/stop.c).
function M.check_run()
  if C.surge_running() == 0 and C.surge_run_check() ~= 0 then error(M.STOPPED, 0) end
end

-- Loads the script main() read (a file or a pipe): every VM runs that text.
function M.load_script(script)
  local s = package.loaded["surge.script"]
  if type(s) ~= "table" then return loadfile(script) end
  return loadstring(s.text, s.name)
end

return M
