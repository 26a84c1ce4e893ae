-- rfc9693_logic.lua
-- The old name of surge.scenario.rfc9693.logic (kept: scripts and tests require it by this name).
return require("surge.scenario.rfc9693.logic")
