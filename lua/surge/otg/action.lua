-- otg/action.lua - what the OTG API does with the devices' protocols
-- (docs/otg.md): /control/action's protocol.ipv4.ping and
-- protocol.ipv6.ping, and /control/state's protocol.all start and stop.
--
-- Devices start with their config (the model's auto_start_all, surge's
-- only way): each port with device addresses has a neighbour task
-- (otg/task.lua's neigh) that resolves the gateways and answers ARP,
-- neighbour solicitations and echo requests. protocol.all stop ends those
-- tasks and forgets what they resolved (the devices answer nothing, flows
-- through a gateway cannot start); start launches them again (they resolve
-- anew). Both wait for no traffic to run: the run's tasks answer for the
-- devices while it does.
--
-- A ping runs between traffic runs: the neighbour tasks give their ports'
-- queues to a ping task each (otg/ping.lua: it sends the port's requests,
-- or answers for the port's devices) and come back when the pings are
-- done; all ports' requests go out together.
local ffi = require("ffi")
local surge = require("surge")
local config = require("surge.otg.config")
local devices = require("surge.otg.devices")
local traffic = require("surge.otg.traffic")
local ping = require("surge.otg.ping")
local ip6 = require("surge.proto.ip6")

local M = {}

local ident = 0         -- the last ping's ICMP identifier: a late reply to an earlier one is no answer

local function fail(status, errs) error({ status = status, errors = errs }, 0) end

local function no_traffic(what)
  if traffic.busy() then
    fail(409, { what .. ": traffic runs (its tasks answer for the devices): stop the flows or let them end first" })
  end
end

-- protocol.all (checked by otg/model.lua's CONTROL_STATE): start or stop the devices.
function M.protocol(all)
  local c = config.compiled()
  if not c or not c.devices or #c.devices.entries == 0 then return end    -- nothing to start or stop
  local stop = all.state == "stop"
  if stop == (c.devices_off == true) then return end     -- the model: a start of started protocols is none
  no_traffic("protocol.all.state: " .. all.state)
  c.devices_off = stop or nil     -- (otg/traffic.lua serves no device of a config whose devices are off)
  traffic.stop()                  -- the neighbour tasks, a finished run's tasks (its counts stay)
  local b = c.devices.block.cdata
  ffi.fill(b, ffi.sizeof(b))      -- resolved anew on a start
  traffic.serve_neigh()
end

-- The 200 reply of an action: its responses under choice's ping.
local function ping_reply(choice, rows)
  return { warnings = setmetatable({}, { __json = "array" }),
           response = { choice = "protocol", protocol = { choice = choice,
             [choice] = { choice = "ping", ping = { responses = setmetatable(rows, { __json = "array" }) } } } } }
end

-- /control/action (checked by otg/model.lua's CONTROL_ACTION): the reply's table.
function M.action(act)
  local choice = act.protocol.choice
  local kind = choice == "ipv4" and 4 or 6
  local path = ("protocol.%s.ping.requests"):format(choice)
  local reqs = act.protocol[choice].ping.requests or {}
  local c = config.compiled()
  local errs = {}
  for i, rq in ipairs(reqs) do
    local en = c and c.devices and c.devices.by_name[rq.src_name]
    if not en or en.kind ~= kind then
      errs[#errs + 1] = ("%s[%d].src_name: '%s' is not the name of a device's IPv%d address in the config"):format(
        path, i - 1, rq.src_name, kind)
    end
  end
  if #errs > 0 then fail(400, errs) end
  if #reqs == 0 then return ping_reply(choice, {}) end
  if c.devices_off then fail(409, { path .. ": the devices are stopped (protocol.all stop): start them first" }) end
  no_traffic(path)
  ident = ident % 0xffff + 1
  local per = {}              -- port name -> the task's requests
  for i, rq in ipairs(reqs) do
    local en = c.devices.by_name[rq.src_name]
    local at
    for j, e in ipairs(c.devices.ports[en.port]) do if e == en then at = j end end
    local dst = kind == 6 and ip6.addr_text(ip6.addr(rq.dst_ip, path, 1)) or rq.dst_ip
    per[en.port] = per[en.port] or {}
    table.insert(per[en.port], { i = at, dst = dst, on_link = devices.on_link(en, dst), seq = i })
  end
  traffic.stop()      -- the ports' queues: the neighbour tasks' (a finished run's tasks', its counts stay)
  local ok_seq, ids, servers = {}, {}, {}
  local ok, e = pcall(function()
    -- every port with devices answers meanwhile (a destination may be a device of another port):
    -- those without requests first, so that they listen before the others ask
    for pass = 1, 2 do
      for _, p in ipairs(c.ports) do
        local mine, nb = per[p.name], traffic.neigh_arg(c, p.name)
        if nb and (pass == 1) == (mine == nil) then
          local port = surge.port(p.id)      -- open: its neighbour task had it
          local id = surge.launch("surge.otg.ping:task", { rxq = port:rxq(0), txq = port:txq(0), neigh = nb,
            ident = ident, reqs = mine or {} })
          if mine then ids[#ids + 1] = { id = id, limit = ping.RESOLVE_S + ping.WAIT_S + 5 }
          else servers[#servers + 1] = { id = id } end
        end
      end
    end
    for _, t in ipairs(ids) do
      local got = surge.wait(t.id, t.limit)
      if got == nil then pcall(surge.stop_task, t.id) pcall(surge.wait, t.id, 5) end
      for _, s in ipairs(got or {}) do ok_seq[s] = true end
    end
    for _, t in ipairs(servers) do surge.stop_task(t.id) end
    for _, t in ipairs(servers) do surge.wait(t.id, 5) end
  end)
  if not ok then
    for _, list in ipairs({ ids, servers }) do
      for _, t in ipairs(list) do pcall(surge.stop_task, t.id) pcall(surge.wait, t.id, 5) end
    end
  end
  traffic.serve_neigh()
  if not ok then error(e, 0) end
  local rows = {}
  for i, rq in ipairs(reqs) do
    rows[i] = { src_name = rq.src_name, dst_ip = rq.dst_ip, result = ok_seq[i] and "succeeded" or "failed" }
  end
  return ping_reply(choice, rows)
end

return M
