-- repl/helpers.lua - the functions the prompt offers besides surge.*.
--
--   tasks()                 the tasks: lcore, function, state, packets, rate, idle %
--   launch(f_or_name, ...)  start a task: a script function by name, or a function typed here
--   stop([task])            stop one task (id or handle), or all of them
--   stats()                 one line per open port: packets and rates
--   watch([seconds])        a stats line a second until a key is pressed (or seconds pass)
--   show(template|flow, n)  the first n packets, decoded and as hex
--   help()                  this list
--   exit(["wait"])          leave the prompt: stop the tasks, or with "wait" let them finish
-- Everything runs in the master VM, between polls of the tasks.
local surge = require "surge"
local show = require "surge.repl.show"
local replio = require "surge.replio"
local M = {}

local Task = require("surge.class").new("task", { "id", "name" }, show.Task)

local function entry(id)
  local found
  for _, t in ipairs(surge.tasks()) do if t.id == id then found = t end end
  return found
end

local function state(t)
  if t.ok == nil then return t.stopping and "stopping" or "running" end
  return t.ok and "done" or "failed"
end

-- Packets moved by the queues each lcore owns (tx + rx), from surge's counters.
local function per_lcore()
  local out = {}
  for p = 0, surge.ports() - 1 do
    local port = surge.handles.port(p)
    local ok, info = pcall(port.info, port)
    if ok then
      for i = 0, info.txq - 1 do
        local s = port:txq(i):stats()
        if s.lcore >= 0 then out[s.lcore] = (out[s.lcore] or 0) + s.packets end
      end
      for i = 0, info.rxq - 1 do
        local s = port:rxq(i):stats()
        if s.lcore >= 0 then out[s.lcore] = (out[s.lcore] or 0) + s.packets end
      end
    end
  end
  return out
end

-- Two samples `sec` apart (the tasks keep running meanwhile).
local function sample(fn, sec)
  local a, t0 = fn(), surge.tsc()
  surge.sleep(sec)
  local b = fn()
  return a, b, tonumber(surge.tsc() - t0) / surge.tsc_hz()
end

function Task:text()
  local t = entry(self.id) or {}
  local a, b, dt = sample(per_lcore, 0.1)
  local pps = ((b[self.id] or 0) - (a[self.id] or 0)) / dt
  local idle = t.ok == nil and ("%.0f%%"):format(surge.lcore_stats(self.id).idle_pct) or "-"
  return ("task %d '%s': %s, %d packets, %.3f Mpps, idle %s"):format(self.id, self.name, state(t),
    b[self.id] or 0, pps / 1e6, idle)
end
function Task:stop() return M.stop(self.id) end
-- Waits for the task to end and returns its first value (a failure raises).
function Task:wait(timeout) return surge.wait(self.id, timeout) end
function Task:state() return state(entry(self.id) or {}) end

local function handle(t) return setmetatable({ id = t.id, name = t.fn:gsub("^=", "") }, Task) end

function M.tasks(out)
  local list = surge.tasks()
  if #list == 0 then out("no tasks\n") return end
  local a, b, dt = sample(per_lcore, 0.2)
  local lines = { ("%-5s %-14s %-9s %14s %10s %6s"):format("lcore", "function", "state", "packets", "Mpps", "idle") }
  for _, t in ipairs(list) do
    local running = t.ok == nil
    lines[#lines + 1] = ("%-5d %-14s %-9s %14s %10s %6s"):format(t.id, t.fn:gsub("^=", ""), state(t),
      running and tostring(b[t.id] or 0) or "-",
      running and ("%.3f"):format(((b[t.id] or 0) - (a[t.id] or 0)) / dt / 1e6) or "-",
      running and ("%.0f%%"):format(surge.lcore_stats(t.id).idle_pct) or "-")
  end
  out(table.concat(lines, "\n") .. "\n")
end

-- launch("tx", q) runs the script's tx; launch(f, q) a function typed here.
function M.launch(env, f, ...)
  local name = f
  if type(f) == "string" then
    if rawget(_G, f) == nil and type(rawget(env, f)) == "function" then f = rawget(env, f) else
      return handle(entry(surge.launch(f, ...))) end
  end
  if type(f) ~= "function" then
    error("launch: give a function or the name of one, e.g. launch(\"tx\", q) or launch(mytx, q)", 0)
  end
  if type(name) ~= "string" then
    name = "?"
    for k, v in pairs(env) do if v == f then name = k end end
  end
  local packed = require("surge.repl.task").pack(f, name, env)
  return handle(entry(surge.launch("=" .. name, packed, ...)))
end

-- stop(id or task): that one; stop(): every running task. Returns how many.
function M.stop(which)
  if type(which) == "table" then which = which.id end
  local n = 0
  for _, t in ipairs(surge.tasks()) do
    if t.ok == nil and not t.stopping and (which == nil or t.id == which) then
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
  for p = 0, surge.ports() - 1 do
    local port = surge.handles.port(p)
    local ok, s = pcall(port.stats, port)
    if ok then out[p] = s end
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
  local decode = require "surge.proto.decode"
  for i, f in ipairs(require("surge.vm.show").frames(what, n or 4)) do
    out(("packet %d, %d bytes: %s\n%s\n"):format(i, #f, decode.decode(f), decode.hex(f)))
  end
end

M.help_text = [[
helpers (besides everything in surge.*):
  tasks()                  the tasks: lcore, function, state, packets, Mpps, idle %
  launch(f_or_name, ...)   start a task: launch("tx", q) or launch(f, q) for a function typed here
  stop([task])             stop one task (id or handle from launch), or all
  stats()                  packets and rates of every open port
  watch([seconds])         a stats line a second until a key is pressed
  show(template|flow, n)   the first n packets, decoded and as hex
  q:set_rate("2mpps")      re-rate a queue now (any queue a task sends on)
  p:close([{remove=true}]) close port p (stop its tasks first); surge.port() opens it again
  exit(["wait"])           leave: stop the tasks (default) or let them finish ("wait")
Ctrl-C cancels the line; twice at an empty prompt stops the tasks; Ctrl-D leaves.]]

return M
