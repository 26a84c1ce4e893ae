-- scn_results.lua - every scenario called from Lua returns plain data (the
-- results-output work writes it as JSON/CSV): numbers, strings, booleans and
-- tables only, no cdata or functions; prints one line per scenario.
local surge = require("surge")

local function plain(v, path)
  local t = type(v)
  if t == "table" then
    for k, x in pairs(v) do plain(x, path .. "." .. tostring(k)) end
  elseif t ~= "number" and t ~= "string" and t ~= "boolean" then
    error(("%s is a %s, not plain data"):format(path, t), 0)
  elseif t == "number" and v ~= v then
    error(("%s is NaN"):format(path), 0)
  end
end

function master()
  local runs = {
    rfc2544 = { sizes = "64", max_rate = "5kpps", trial = 0.2, settle = 0.05, latency_trial = 0.2, b2b_max = 500,
                b2b_trials = 2, loss_step = 50 },
    load_latency = { rates = "2kpps", trial = 0.2, settle = 0.05 },
    flood = { flows = 4, trial = 0.1, settle = 0.05, rate = "5kpps" },
    qos = { classes = "a:10:1kpps,b:0:2kpps", trial = 0.2, settle = 0.05 },
  }
  for _, name in ipairs({ "rfc2544", "load_latency", "flood", "qos" }) do
    local o = runs[name]
    o.tx = 0
    local r = require("surge.scenario." .. name).run(o)
    plain(r, name)
    print(("results: %s plain data, scenario = %s"):format(name, r.scenario))
  end
  surge.wait()
end
