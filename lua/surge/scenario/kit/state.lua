-- scenario/kit/state.lua - the one piece of state the scenario kit shares:
-- the scenario running now (defaults() names it; cli: its options came from
-- the command line, what refuse() needs; active: the run from Lua a stop
-- cuts), what it measured so far (partial) and whether this is the dry run.
return { current = { name = nil, cli = false, active = nil }, partial = nil, dry = false }
