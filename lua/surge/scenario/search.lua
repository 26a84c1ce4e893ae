-- search.lua
-- The old name of surge.scenario.kit.search (kept: scripts and tests require it by this name).
return require("surge.scenario.kit.search")
