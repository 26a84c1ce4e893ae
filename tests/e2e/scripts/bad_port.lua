-- bad_port.lua - master opens a port that does not exist.
local surge = require("surge")

function master()
  local port = surge.port(7) -- PORT_LINE
end
