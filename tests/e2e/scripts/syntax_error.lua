-- syntax_error.lua - does not compile: the parser must name this file and line.
local surge = require("surge")

function master()
  local x = = 1 -- SYNTAX_LINE
end
