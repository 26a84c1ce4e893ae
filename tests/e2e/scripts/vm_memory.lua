-- vm_memory.lua - a task (or master) that allocates forever in a loop the
-- JIT compiles, in one of several shapes; it must end with surge's "not
-- enough memory" error, never a crash (issue 31 item 19).
local ffi = require("ffi")
local surge = require("surge")
function configure(p)
  p:option("--where", "task | master", "task")
  p:option("--shape", "tables | strings | cdata | array | stitched", "tables")
end
local shapes = {}
function shapes.tables()
  local t, i = {}, 0
  while true do i = i + 1 t[i] = { i, i } end      -- TABLES_LINE
end
-- (long strings: as many short ones take LuaJIT many seconds on a loaded machine)
local long = ("s"):rep(200)
function shapes.strings()
  local t, i = {}, 0
  while true do i = i + 1 t[i] = long .. i end      -- STRINGS_LINE
end
function shapes.cdata()
  local t, i = {}, 0
  while true do i = i + 1 t[i] = ffi.new("uint8_t[?]", 100) end   -- CDATA_LINE
end
function shapes.array()
  local t, i = {}, 0
  while true do i = i + 1 t[i] = i end             -- ARRAY_LINE
end
-- os.time() is not compiled: the trace ends at the call and another starts
-- after it (stitching), so the allocation fails in a trace entered after a
-- C call
function shapes.stitched()
  local t, i = {}, 0
  while true do i = i + 1 t[i] = { os.time(), i } end   -- STITCHED_LINE
end
function hog(shape) shapes[shape]() end
function master(args)
  if args.where == "master" then hog(args.shape) end
  surge.launch("hog", args.shape)
  surge.wait()
end
