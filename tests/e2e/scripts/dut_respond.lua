-- dut_respond.lua - surge.dut's stand-alone responder: answers ARP/NDP for
-- surge's addresses on both ports for --seconds, prints how many it answered.
local surge = require("surge")

function configure(p)
  p:option("--seconds", "how long to answer", 3, "number")
end

function master(args)
  local s = require("surge.dut").session{ tx = 0, rx = 1, src = "10.0.0.2", dst = "10.1.0.2" }
  local id = s:respond(args.seconds)
  print(("responder: answered %d"):format(surge.wait(id)))
end
