-- rfc2889_logic.lua
-- The old name of surge.scenario.rfc2889.logic (kept: scripts and tests require it by this name).
return require("surge.scenario.rfc2889.logic")
