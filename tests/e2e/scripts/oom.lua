-- oom.lua - a loop that allocates without bound, in a task or in master,
-- ends with "not enough memory" from the VM's budget (issue 7.4).
local surge = require("surge")
function configure(p) p:option("--where", "task | master", "task") end
function hog()
  local t, i = {}, 0
  while true do i = i + 1 t[i] = { i, i } end   -- HOG_LINE
end
function master(args)
  local q = surge.port(0, { txq = 1 }):txq(0)
  surge.launch("tx", q)
  if args.where == "master" then hog() end
  surge.launch("hog")
  surge.wait()
end
function tx(q)
  local b = surge.pool{ template = surge.proto.udp{}, size = 1023 }:burst(32)
  while surge.running() do b:alloc() q:send(b) end
end
