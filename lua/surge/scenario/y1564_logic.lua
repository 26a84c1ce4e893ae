-- y1564_logic.lua
-- The old name of surge.scenario.y1564.logic (kept: scripts and tests require it by this name).
return require("surge.scenario.y1564.logic")
