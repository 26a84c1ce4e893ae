-- scenario/kit/dry.lua - the dry run of a built-in scenario before EAL.
local surge = require("surge")
local pcap = require("surge.pcap")
local args = require("surge.args")
local dut = require("surge.dut")
local state = require("surge.scenario.kit.state")

local M = {}

-- The dry run: `surge run NAME` checks a built-in scenario's options before
-- EAL starts by running the scenario itself (scenario/check.lua) against
-- stand-ins for what needs EAL: ports (the largest MTU, any port number
-- exists), pools, tasks, pcap readers. Every refusal its run() makes before
-- it sends a frame is so made before EAL, by the code that makes it after:
-- one mechanism for every option of every scenario, none to keep in step.
-- The run stops (DRY) at the first thing only a real port can answer: a
-- trial, a resolution, a stand-in's unknown field. It runs twice, the
-- stand-in port's link speed 10 Mbit/s and 1 Tbit/s: a refusal both make
-- in the same words does not depend on the link (a rate of % of it, what
-- fits it), one that differs or only one makes waits for the real port,
-- as do those on the MTU and the number of ports. Any error of the dry run
-- other than a refusal is left to the real run to report.
local DRY = setmetatable({}, { __tostring = function() return "the dry run needs a port from here on" end })
M.DRY = DRY

local function dry_end() error(DRY, 0) end
-- An object every use of which ends the dry run.
local function standin()
  return setmetatable({}, { __index = dry_end, __newindex = dry_end, __call = dry_end })
end
-- A port: its id, its info (a MAC, no link speed, the largest MTU; other
-- fields unknown), stand-in queues.
local function standin_port(id, mbps)
  local info = setmetatable({ mac = "02:00:00:00:00:00", speed_mbps = mbps, mtu = 65535 - 26 }, { __index = dry_end })
  return setmetatable({ id = id, info = function() return info end, rxq = function() return standin() end,
                        txq = function() return standin() end }, { __index = dry_end })
end

-- Runs mod.run(opts) (the options as parsed) dry, the stand-in ports'
-- link at mbps; returns nil, or the refusal (an args.OptionError) it made.
local function dry_once(mod, opts, mbps)
  local stubs = { port = function(id) return standin_port(id, mbps) end, ports = function() return 65536 end,
                  pool = function() return standin() end, launch = dry_end, wait = dry_end, sleep = dry_end,
                  tsc_hz = dry_end, progress = standin() }
  local saved, saved_reader = {}, pcap.reader
  for k, f in pairs(stubs) do saved[k], surge[k] = surge[k], f end
  pcap.reader = dry_end
  local saved_cli = state.current.cli
  dut.forget_standins()
  state.dry, state.current.cli = true, true
  local ok, e = pcall(mod.run, opts)
  state.dry, state.current.cli = false, saved_cli
  for k in pairs(stubs) do surge[k] = saved[k] end
  pcap.reader = saved_reader
  if not ok and getmetatable(e) == args.OptionError then return e end
  return nil
end

function M.dry_run(mod, opts)
  local copy = {}
  for k, v in pairs(opts) do copy[k] = v end
  local slow = dry_once(mod, copy, 10)
  if not slow then return nil end
  local fast = dry_once(mod, opts, 1e6)
  if fast and tostring(fast) == tostring(slow) then return fast end
  return nil
end

return M
