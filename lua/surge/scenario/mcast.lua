-- mcast.lua
-- The old name of surge.scenario.rfc3918.logic (kept: scripts and tests require it by this name).
return require("surge.scenario.rfc3918.logic")
