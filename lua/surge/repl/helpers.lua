-- repl/helpers.lua - the functions the prompt offers besides surge.*.
--
--   tasks(["clear"])        the session's tasks: lcore, function, state, own packets, drops, rate, idle %
--   launch(f_or_name, ...)  start a task: a script function by name, or a function typed here
--   stop([task])            stop one task (id or handle), or all of them
--   stats()                 one line per open port: packets and rates
--   watch([seconds])        a stats line a second until a key is pressed (or seconds pass)
--   show(template|flow, n)  the first n packets, decoded and as hex
--   hosts([i [, table]])    the host tables (surge.hosts): hosts by state; host i's detail
--   help()                  this list
--   exit(["wait"])          leave the prompt: stop the tasks, or with "wait" let them finish
-- Everything runs in the master VM, between polls of the tasks.
local surge = require("surge")
local show = require("surge.repl.show")
local replio = require("surge.replio")
local M = {}

local Task = require("surge.class").new("task", { "id", "name", "entry" }, show.Task)
local ports = require("surge.port")
local repl_task = require("surge.repl.task")
local decode = require("surge.proto.decode")
local frames = require("surge.base.frames")
local hostsmod = require("surge.hosts")

-- Every task this session started (the prompt's launch and the script's
-- surge.launch alike), in launch order, with its state, until
-- tasks("clear") drops the ended ones: surge.wait() collecting a task, or
-- the prompt reporting it, leaves it here as done or failed. Each entry is
-- surge.tasks()'s own (state and result are written there by collect),
-- with `base`, the queue counters when it was launched.
local session = {}

-- Packets and drops of every queue of the open ports, with its owner:
-- { ["0 tx 1"] = { lcore, packets, drops } } (never opens a port).
local function queue_counts()
  local out = {}
  for _, port in ipairs(ports.opened()) do
    local ok, info = pcall(port.info, port)
    if ok then
      for dir, n in pairs({ tx = info.txq, rx = info.rxq }) do
        for i = 0, n - 1 do
          local q = dir == "tx" and port:txq(i) or port:rxq(i)
          local s = q:stats()
          out[port.id .. " " .. dir .. " " .. i] = { lcore = s.lcore, packets = s.packets, drops = s.drops }
        end
      end
    end
  end
  return out
end

-- surge.launch's hook (tasks.lua, through the prompt's set_prompt).
function M.track(t)
  t.base = queue_counts()
  session[#session + 1] = t
end

local function state(t)
  if t.ok == nil then return t.stopping and "stopping" or "running" end
  return t.ok and "done" or "failed"
end

-- A task's own counts: packets and drops of the queues its lcore owns now,
-- less what those queues had counted when the task was launched (a queue
-- keeps its counts over its life, across the tasks that used it).
local function own(t, counts)
  local packets, drops = 0, 0
  for k, c in pairs(counts) do
    if c.lcore == t.id then
      local b = t.base and t.base[k]
      packets = packets + c.packets - (b and b.packets or 0)
      drops = drops + c.drops - (b and b.drops or 0)
    end
  end
  return packets, drops
end

-- Two samples `sec` apart (the tasks keep running meanwhile).
local function sample(fn, sec)
  local a, t0 = fn(), surge.tsc()
  surge.sleep(sec)
  local b = fn()
  return a, b, tonumber(surge.tsc() - t0) / surge.tsc_hz()
end

function Task:text()
  local t = self.entry
  local a, b, dt = sample(queue_counts, 0.1)
  local pa = own(t, a)
  local pb, drops = own(t, b)
  if t.ok ~= nil then
    return ("task %d '%s': %s"):format(self.id, self.name, state(t))
  end
  return ("task %d '%s': %s, %d packets, %d drops, %.3f Mpps, idle %.0f%%"):format(self.id, self.name,
    state(t), pb, drops, (pb - pa) / dt / 1e6, surge.lcore_stats(self.id).idle_pct)
end
function Task:stop() return M.stop(self) end
-- Waits for the task to end and returns its first value (a failure raises).
-- Collected here or elsewhere, the handle then says done or failed.
function Task:wait(timeout)
  local t = self.entry
  if t.ok ~= nil then
    if not t.ok then error(setmetatable({ msg = t.value }, surge.TaskFailure), 0) end
    return t.value
  end
  return surge.wait(self.id, timeout)
end
function Task:state() return state(self.entry) end

local function handle(t) return setmetatable({ id = t.id, name = t.fn:gsub("^=", ""), entry = t }, Task) end

-- The entry surge.launch just added (launch order: the last one).
local function launched()
  local list = surge.tasks()
  return list[#list]
end

-- tasks(): one line per task of the session; tasks("clear"): forget the
-- ended ones (returns how many).
function M.tasks(out, what)
  if what ~= nil and what ~= "clear" then error("tasks: give nothing, or \"clear\" to drop the ended tasks", 0) end
  if what == "clear" then
    local keep, n = {}, 0
    for _, t in ipairs(session) do
      if t.ok == nil then keep[#keep + 1] = t else n = n + 1 end
    end
    session = keep
    return n
  end
  if #session == 0 then out("no tasks\n") return end
  local a, b, dt = sample(queue_counts, 0.2)
  local row = "%-5s %-14s %-9s %14s %10s %10s %6s"
  local lines = { row:format("lcore", "function", "state", "packets", "Mpps", "drops", "idle") }
  for _, t in ipairs(session) do
    local running = t.ok == nil
    local pa = own(t, a)
    local pb, drops = own(t, b)
    lines[#lines + 1] = row:format(tostring(t.id), (t.fn:gsub("^=", "")), state(t),
      running and tostring(pb) or "-", running and ("%.3f"):format((pb - pa) / dt / 1e6) or "-",
      running and tostring(drops) or "-",
      running and ("%.0f%%"):format(surge.lcore_stats(t.id).idle_pct) or "-")
  end
  out(table.concat(lines, "\n") .. "\n")
end

-- The name a function has at the prompt: a global (tx), or a field of a
-- global table (string.rep, surge.sleep); "?" for an anonymous one.
function M.fn_name(env, f)
  for k, v in pairs(env) do if v == f and type(k) == "string" then return k end end
  for _, where in ipairs({ env, _G }) do
    for k, t in pairs(where) do
      if type(k) == "string" and type(t) == "table" and k ~= "_G" and k ~= "package" then
        for j, v in pairs(t) do if v == f and type(j) == "string" then return k .. "." .. j end end
      end
    end
  end
  for k, v in pairs(_G) do if v == f and type(k) == "string" then return k end end
  return "?"
end

-- launch("tx", q) runs the script's tx; launch(f, q) a function typed here.
function M.launch(env, f, ...)
  local name = f
  if type(f) == "string" then
    if rawget(_G, f) == nil and type(rawget(env, f)) == "function" then f = rawget(env, f) else
      surge.launch(f, ...)
      return handle(launched())
    end
  end
  if type(f) ~= "function" then
    error("launch: give a function or the name of one, e.g. launch(\"tx\", q) or launch(mytx, q)", 0)
  end
  if type(name) ~= "string" then name = M.fn_name(env, f) end
  local info = debug.getinfo(f, "S")
  if info.source ~= "=prompt" then
    -- a script's global runs by its name, in the task's VM as surge.launch does
    if info.what ~= "C" and rawget(_G, name) == f then
      surge.launch(name, ...)
      return handle(launched())
    end
    error(("launch: %s is %s, not a function typed at the prompt or a global of the script: launch "
      .. "one of those, e.g. launch(\"tx\", q), or wrap the call in a function typed here, e.g. "
      .. "launch(function(...) return %s(...) end, ...)"):format(name,
      info.what == "C" and "a C function" or "one of surge's own", name ~= "?" and name or "f"), 0)
  end
  local packed = repl_task.pack(f, name, env)
  surge.launch("=" .. name, packed, ...)
  return handle(launched())
end

-- stop(id or task): that one; stop(): every running task. Returns how many.
function M.stop(which)
  -- a handle names its own task (its lcore may run a later one by now)
  local only = type(which) == "table" and which.entry or nil
  if only then which = only.id end
  local n = 0
  for _, t in ipairs(surge.tasks()) do
    if t.ok == nil and not t.stopping and (which == nil or t.id == which) and (only == nil or t == only) then
      surge.stop_task(t.id)
      t.stopping = true
      n = n + 1
    end
  end
  if which ~= nil and n == 0 then error(("stop: no running task %s"):format(tostring(which)), 0) end
  return n
end

local function port_counts()
  local out = {}
  for _, port in ipairs(ports.opened()) do
    local ok, s = pcall(port.stats, port)
    if ok then out[port.id] = s end
  end
  return out
end

local function stats_lines(sec)
  local a, b, dt = sample(port_counts, sec)
  local lines = {}
  for p = 0, surge.ports() - 1 do
    if b[p] then
      lines[#lines + 1] = ("port %d  TX %d packets %8.3f Mpps  RX %d packets %8.3f Mpps  drops %d"):format(p,
        b[p].tx_packets, (b[p].tx_packets - a[p].tx_packets) / dt / 1e6,
        b[p].rx_packets, (b[p].rx_packets - a[p].rx_packets) / dt / 1e6, b[p].tx_drops)
    end
  end
  return lines
end

function M.stats(out)
  local lines = stats_lines(0.5)
  out((#lines > 0 and table.concat(lines, "\n") or "no open ports") .. "\n")
end

-- watch([seconds]): a line a second until a key is pressed (or seconds pass).
function M.watch(out, seconds)
  local t_end = seconds and (tonumber(surge.tsc()) + seconds * surge.tsc_hz())
  local first = port_counts()
  local t0 = surge.tsc()
  out(seconds and ("(for %g s; a key stops it sooner)\n"):format(seconds) or "(press a key to stop)\n")
  while not replio.key(1000) do
    local now, cur = surge.tsc(), port_counts()
    local dt = tonumber(now - t0) / surge.tsc_hz()
    for p, s in pairs(cur) do
      if first[p] then
        out(("port %d  TX %8.3f Mpps  RX %8.3f Mpps  TX %d RX %d\n"):format(p,
          (s.tx_packets - first[p].tx_packets) / dt / 1e6, (s.rx_packets - first[p].rx_packets) / dt / 1e6,
          s.tx_packets, s.rx_packets))
      end
    end
    first, t0 = cur, now
    if t_end and tonumber(now) >= t_end then break end
    surge.poll()
  end
end

function M.show(out, what, n)
  for i, f in ipairs(frames.frames(what, n or 4)) do
    out(("packet %d, %d bytes: %s\n%s\n"):format(i, #f, decode.decode(f), decode.hex(f)))
  end
end

-- hosts(): a line per host table of the run (whichever task made it): its
-- kind, hosts, the hosts in each state; hosts(i [, table]): host i of
-- table `table` (default 0), its state, addresses, lease
function M.hosts(out, i, tid)
  local list = hostsmod.tables()
  if i == nil then
    if #list == 0 then out("no host tables\n") return end
    for _, t in ipairs(list) do
      local st = t.stats
      local extra = t.mode == "dhcp" and (", bind time mean %.1f ms"):format(st.bind_ms_sum / math.max(st.state.bound, 1))
        or t.mode == "server" and (", %d acks, %d naks, %d unanswered (pool taken)"):format(st.dhcps_ack_tx,
          st.dhcps_nak_tx, st.dhcps_no_address) or ""
      out(("table %d  %-6s %d hosts: %s%s\n"):format(t.id, t.mode, t.count, hostsmod.format_states(st), extra))
    end
    return
  end
  tid = tid or 0
  if type(tid) ~= "number" or tid % 1 ~= 0 or tid < 0 or tid >= #list then
    error(("hosts: table: expected a table id 0..%d, got %s"):format(#list - 1, tostring(tid)), 0)
  end
  local n = list[tid + 1].count
  if type(i) ~= "number" or i % 1 ~= 0 or i < 0 or i >= n then
    error(("hosts: i: expected a host 0..%d of table %d, got %s"):format(n - 1, tid, tostring(i)), 0)
  end
  local h = hostsmod.host_of(tid, i)
  -- a DHCP host's options from its ACK, those it got
  local got = (h.mask and "  mask " .. h.mask or "") .. (h.router and "  router " .. h.router or "")
    .. (h.dns and "  dns " .. table.concat(h.dns, ",") or "")
  out(("host %d of table %d: %s  ip %s  mac %s  server %s  lease %d s  since %d ms  tries %d%s\n"):format(i, tid,
    h.state, h.ip, h.mac, h.server, h.lease, h.bound_ms, h.tries, got))
end

M.help_text = [[
helpers (besides everything in surge.*):
  tasks()                  the session's tasks: lcore, function, state, packets, drops, Mpps, idle %
  tasks("clear")           forget the tasks that ended
  launch(f_or_name, ...)   start a task: launch("tx", q) or launch(f, q) for a function typed here
  stop([task])             stop one task (id or handle from launch), or all
  stats()                  packets and rates of every open port
  watch([seconds])         a stats line a second until a key is pressed
  show(template|flow, n)   the first n packets, decoded and as hex
  hosts()                  the host tables (surge.hosts): hosts in each state
  hosts(i [, table])       host i of a table (default 0): state, addresses, lease
  q:set_rate("2mpps")      re-rate a queue now (any queue a task sends on)
  p:close([{remove=true}]) close port p (stop its tasks first); surge.port() opens it again
  exit(["wait"])           leave: stop the tasks (default) or let them finish ("wait")
Ctrl-C cancels the line; twice at an empty prompt stops the tasks; Ctrl-D leaves.]]

return M
