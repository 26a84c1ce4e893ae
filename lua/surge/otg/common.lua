-- otg/common.lua - the modules the OTG server's own modules (otg/main.lua,
-- config.lua, traffic.lua, task.lua) share at their heads, in one place:
-- each takes the ones it uses from here (local surge, C = common.surge,
-- common.C), and requires itself only what is its alone. The otg modules
-- here require none of those four (no require cycle).
local core = require("surge.core")

return {
  ffi = require("ffi"),
  surge = require("surge"),
  core = core,
  C = core.C,
  pool = require("surge.pool"),
  schema = require("surge.otg.schema"),
  model = require("surge.otg.model"),
  stats = require("surge.otg.stats"),
  flows = require("surge.otg.flows"),
  devices = require("surge.otg.devices"),
  capture = require("surge.otg.capture"),
  l1 = require("surge.otg.ports"),       -- the ports' layer 1 (link, mtu, promiscuous)
}
