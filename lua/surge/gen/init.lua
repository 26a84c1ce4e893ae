-- gen/init.lua (surge.gen) - what the code generators share: the template's
-- layout, the emitted pieces, the one loop skeleton and the one seed stream.
-- The generators themselves are surge.gen.flow and surge.gen.size.
return {
  layout = require("surge.gen.layout"),
  emit = require("surge.gen.emit"),
  loop = require("surge.gen.loop"),
  seed = require("surge.gen.seed"),
}
