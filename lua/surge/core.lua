-- core.lua - the FFI namespace and the error convention shared by modules.
--
-- C calls return 0 or a count on success and -errno on failure, with the
-- message in surge_last_error(). check() turns a failure into a Lua error
-- raised at the caller's caller, so it names the user's file:line.
local ffi = require("ffi")
require("surge.cdef")

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
local check = require("surge.check")

-- A failed call: "run stopped" (see M.STOPPED) or its error at the user's line.
function M.check(rc)
  if rc < 0 then
    if rc == -ESHUTDOWN then error(M.STOPPED, 0) end
    raise(M.last_error())
  end
  return rc
end

-- Raises M.STOPPED when the run stopped a while ago (see core/base/run_state.c).
function M.check_run()
  if C.surge_running() == 0 and C.surge_run_check() ~= 0 then error(M.STOPPED, 0) end
end

-- An exit status given by a script (os.exit, master's return value): nothing
-- or true is 0, false is 1, else an integer 0..255. `who` names the giver.
function M.exit_status(v, who)
  if v == nil or v == true then return 0 end
  if v == false then return 1 end
  if type(v) ~= "number" or v ~= v or v < 0 or v > 255 or v % 1 ~= 0 then
    raise(("%s: expected true, false, nothing or an integer in 0..255, got %s"):format(who,
      check.show(v)))
  end
  return v
end

-- os.exit(status) anywhere (master, a task, the prompt, the top level) ends
-- the run as surge.stop() does and then the process with that status: the
-- summary, the pool check and the pcap writers' flush still happen, which
-- a real exit from inside a VM would skip (core/base/run_state.c surge_exit).
-- The calling code unwinds as on "run stopped".
os.exit = function(status)
  C.surge_exit(M.exit_status(status, "os.exit: status"))
  error(M.STOPPED, 0)
end

-- Loads the script main() read (a file or a pipe): every VM runs that text.
function M.load_script(script)
  local s = package.loaded["surge.script"]
  if type(s) ~= "table" then return loadfile(script) end
  return loadstring(s.text, s.name)
end

return M
