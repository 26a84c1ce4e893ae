-- stop_master_sleep.lua - master-only: loops on surge.sleep and never asks
-- surge.running(); --duration, signals and the stats lines still work
-- (issue 7.5, 7.7). A pcap writer it fills is flushed at the end.
local surge = require("surge")
function configure(p) p:option("--pcap", "file to write", "") end
function master(args)
  local port = surge.port(0, { txq = 1 })
  local q = port:txq(0)
  local b = surge.pool{ template = surge.proto.udp{}, size = 255 }:burst(4)
  local w = args.pcap ~= "" and surge.pcap.writer(args.pcap) or nil
  while true do
    b:alloc()
    if w then w:write(b) end
    q:send(b)
    surge.sleep(0.01)
  end
end
