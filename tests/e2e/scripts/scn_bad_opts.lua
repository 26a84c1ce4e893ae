-- scn_bad_opts.lua - scenarios run from Lua check their options as the
-- command line does (each option's kind and range), before opening a port:
-- each bad call fails at this file's line. Prints "bad: LINE MESSAGE" per
-- case; the last call is not caught (the run fails, exit 1, at its line).
local cases = {
  { "rfc2544", { trial = -1 } },
  { "rfc2544", { tolerance = 101 } },
  { "rfc2544", { confirm = "yes" } },
  { "rfc2544", { bogus = 1 } },
  { "flood", { flows = 0 } },
  { "flood", { vlan = 5000 } },
  { "flood", { link_timeout = 1e9 } },
  { "flood", { flows = 30000, sizes = "imix" } },
  { "load_latency", { probes = 0 } },
  { "qos", { settle = -1 } },
  { "replay", { loop = 0 } },
  { "load_latency", "x" },
  { "rfc2544", { sizes = "64", max_rate = "200%" } },
  { "rfc2544", { sizes = "64", max_rate = 0 } },
  { "rfc2544", { sizes = "64", max_rate = "10kpps", min_rate = "20kpps" } },
  { "rfc2544", { tests = "" } },
  { "rfc2544", { sizes = "64,x" } },
  { "rfc2544", { tx = 5 } },
  { "load_latency", { rates = "0" } },
  { "load_latency", { rates = "10kpps,200%" } },
  { "flood", { sizes = "imix", rate = "500%" } },
  { "flood", { sizes = "9000" } },
  { "qos", { classes = "ef:46:10mpps,be:0:10mpps" } },
}

function master()
  for _, c in ipairs(cases) do
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, e = pcall(require("surge.scenario." .. c[1]).run, c[2])
    print(ok and "bad: accepted" or ("bad: %d %s"):format(line, tostring(e)))
  end
  require("surge.scenario.flood").run{ trial = 0 }
end
