-- The prompt's completion hides surge's internals (names starting with "_"),
-- and port.opened() lists the open ports without opening any (the prompt's
-- views walk it). The task list, handles and counts are tested end to end
-- in tests/e2e/test_repl_tasks.sh.
local surge = require("surge")
local repl = require("surge.repl")
local T = {}

local function has(list, name)
  for _, v in ipairs(list) do if v == name then return true end end
  return false
end

function T.completion_hides_underscore_names()
  local env = repl.env
  env.cq = surge.port(0):txq(0)
  local c = repl.complete("surge.")
  assert(has(c, "surge.port") and not has(c, "surge._wait_all"), table.concat(c, " "))
  c = repl.complete("cq:")
  assert(has(c, "cq:set_rate"), table.concat(c, " "))
  for _, n in ipairs(c) do assert(not n:match("^cq:_"), n) end
  -- typed with its "_", an internal is still completed (as _G, _VERSION are)
  assert(has(repl.complete("surge._wa"), "surge._wait_all"))
  assert(has(repl.complete("_VER"), "_VERSION"))
  for _, n in ipairs(repl.complete("")) do assert(n:sub(1, 1) ~= "_", n) end
  env.cq = nil
end

function T.opened_ports_only_lists()
  local ports = require("surge.port")
  local before = #ports.opened()
  local p = surge.port(surge.vdev("net_ring7"))
  local ids = {}
  for _, h in ipairs(ports.opened()) do ids[h.id] = true end
  assert(#ports.opened() == before + 1 and ids[p.id])
  p:close()
  assert(#ports.opened() == before, "a closed port is not listed")
  for _, h in ipairs(ports.opened()) do assert(h.id ~= p.id) end
  assert(#ports.opened() == before, "listing never reopens it")
  surge.port(p.id):close{ remove = true }
end

return T
