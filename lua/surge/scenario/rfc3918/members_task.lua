-- scenario/rfc3918/members_task.lua - rfc3918 with --member-hosts: every
-- test in one task (surge.launch("surge.scenario.rfc3918.members_task:run")),
-- which makes the member hosts' tables and so owns them (a table is polled
-- by the lcore that made it only): the tests are init.lua's, each trial
-- run here by surge.dut.mcast (members.lua says how the hosts join).
local members = require("surge.scenario.rfc3918.members")
local rfc3918 = require("surge.scenario.rfc3918")
local scenario = require("surge.scenario")

local M = {}

-- spec: ifaces, ctrl_pool, opts, plan (init.lua's), member (each --rx
-- port's mac, ip4, ip6), txmac, pool (for the test frames, all of one
-- size with --member-hosts: the capacity test is refused). Returns { rows, member_hosts }.
function M.run(spec)
  local env = { opts = spec.opts, plan = spec.plan, member = spec.member, ifaces = spec.ifaces,
                ctrl_pool = spec.ctrl_pool, txmac = spec.txmac, pool = spec.pool }
  rfc3918.frames(env)
  members.make(env)
  local rows = {}
  scenario.steps(#env.plan.tests, "rfc3918")
  for _, t in ipairs(env.plan.tests) do
    for _, row in ipairs(rfc3918.run_test[t](env)) do rows[#rows + 1] = row end
    scenario.step()
  end
  return { rows = rows, member_hosts = members.summary(env) }
end

return M
