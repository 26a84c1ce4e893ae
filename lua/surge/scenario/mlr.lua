-- mlr.lua
-- The old name of surge.scenario.mlrsearch.logic (kept: scripts and tests require it by this name).
return require("surge.scenario.mlrsearch.logic")
