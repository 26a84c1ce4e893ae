-- core.lua - the FFI namespace and the error convention shared by modules.
--
-- C calls return 0 or a count on success and -errno on failure, with the
-- message in surge_last_error(). check() turns a failure into a Lua error
-- raised at the caller's caller, so it names the user's file:line.
local ffi = require "ffi"
require "surge.cdef"

local C = ffi.C
local M = { C = C }

function M.last_error()
  return ffi.string(C.surge_last_error())
end

local raise = require("surge.check").raise

function M.check(rc)
  if rc < 0 then raise(M.last_error()) end
  return rc
end

return M
