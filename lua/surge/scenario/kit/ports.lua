-- scenario/kit/ports.lua - the ports a scenario sends on: the one check of
-- a port option (--tx, --rx, a server's port: a number of a port that
-- exists, or a port opened from Lua) and the DUT session of the options.
local surge = require("surge")
local dut = require("surge.dut")
local check = require("surge.check")
local numbers = require("surge.scenario.kit.numbers")
local options = require("surge.scenario.kit.options")
local state = require("surge.scenario.kit.state")

local M = {}

-- The one port check, in two steps: port_number when the options are
-- checked (no port needed), port_exists once surge has its ports (the dry
-- run has none: any number exists there). Refused naming the option.
function M.port_number(v, option)
  local id = numbers.finite(v)
  if id == nil or id ~= math.floor(id) or id < 0 then
    options.refuse(option, "expected a port number, got %s", type(v) == "string" and "'" .. v .. "'" or check.show(v))
  end
  return id
end

function M.port_exists(id, option)
  local n = surge.ports()
  if id >= n and not state.dry then
    options.refuse(option, "port %d does not exist (%d port%s: give devices with --vdev or --pci)", id, n,
      n == 1 and "" or "s")
  end
  return id
end

-- --tx / --rx: a port number (text from the command line) that exists, or
-- a port opened from Lua.
function M.port(v, option)
  if type(v) == "table" then return v end
  return M.port_exists(M.port_number(v, option), option)
end

-- A surge.dut session from those options (tx/rx may be opened ports).
function M.session(o)
  local rx = o.rx
  if rx == "" or rx == nil then rx = o.tx end
  return dut.session{ tx = M.port(o.tx, "--tx"), rx = M.port(rx, o.rx ~= "" and o.rx ~= nil and "--rx" or "--tx"),
                      src = o.src, dst = o.dst,
                      gateway = (o.gateway ~= "" and o.gateway) or nil,
                      rx_gateway = (o.rx_gateway ~= "" and o.rx_gateway) or nil,
                      dst_mac = (o.dst_mac ~= "" and o.dst_mac) or nil,
                      vlan = (o.vlan and o.vlan ~= 0) and o.vlan or nil,
                      resolve_timeout = o.resolve_timeout, link_timeout = o.link_timeout }
end

return M
