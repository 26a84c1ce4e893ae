-- repl/init.lua (surge.repl) - the prompt: read, evaluate in the master VM, print.
--
-- `surge repl` opens it after loading the script's functions; `surge run -i`
-- opens it from surge.wait() with the tasks running; `--control PATH` serves
-- the same evaluation to `surge attach` clients from the master's loop. Each
-- line is tried first as `return LINE` (an expression prints its value),
-- then as a statement; a statement Lua reports as unfinished at <eof> waits
-- for more lines. Errors print one line and the session goes on.
local surge = require("surge")
local replio = require("surge.replio")
local show = require("surge.repl.show")
local helpers = require("surge.repl.helpers")
local trace = require("surge.base.trace")
local core = require("surge.core")
local results = require("surge.results")
local ffi = require("ffi")
local M = {}

-- What the loop itself uses is taken now, as upvalues: typed code runs in
-- `env` below, and whatever it replaces or deletes there (print, tostring,
-- pcall, string, require, _G.x, string.format, ...) cannot reach the loop
-- (docs/guarantees.md, "Scenarios, modules and the install refuse clearly").
local tostring, select, type, pairs, ipairs, pcall, xpcall, error, unpack =
  tostring, select, type, pairs, ipairs, pcall, xpcall, error, unpack
local setmetatable, getmetatable, rawget, setfenv, require =
  setmetatable, getmetatable, rawget, setfenv, require
local concat, maxn, sort = table.concat, table.maxn, table.sort
local jit_off, tonumber, io_write, io_flush, package = jit.off, tonumber, io.write, io.flush, package
local surge_tasks, surge_collect, surge_running, surge_stop_task, surge_tsc_hz =
  surge.tasks, surge.collect, surge.running, surge.stop_task, surge.tsc_hz

local LEAVE = {}                 -- raised by exit()
local sink = io_write            -- where print() and results go right now
local leave_mode                 -- exit()'s argument

local function out(s) sink(s) end

-- The prompt's globals: its own table, falling back to the script's. Its
-- _G is itself, and it has its own copies of the standard library tables,
-- so typed code that assigns a global or a library field (`_G.tostring =
-- 1`, `string.format = nil`) changes only the prompt's view: the real
-- globals, which surge's modules and the script use, stay as they were.
local real_G = _G
local env = setmetatable({}, { __index = function(_, k) if k ~= "_G" then return rawget(real_G, k) end end })
for _, lib in ipairs({ "string", "table", "math", "io", "os", "coroutine", "bit", "jit", "debug" }) do
  local t = rawget(real_G, lib)
  if type(t) == "table" then
    local c = {}
    for k, v in pairs(t) do c[k] = v end
    env[lib] = c
  end
end
env._G = env
env.surge = surge
env.print = function(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
  out(concat(parts, "\t") .. "\n")
end
env.exit = function(mode)
  if mode ~= nil and mode ~= "wait" and mode ~= "stop" then
    error("exit: give nothing, \"stop\" or \"wait\"", 2)
  end
  leave_mode = mode
  error(LEAVE, 0)
end
env.tasks = function(what) return helpers.tasks(out, what) end
env.launch = function(f, ...) return helpers.launch(env, f, ...) end
env.stop = helpers.stop
env.stats = function() return helpers.stats(out) end
local remote, tty = false, false   -- evaluating a client's request; the prompt has a terminal
env.watch = function(seconds)
  -- without a key to press (a client, or no terminal) watch ends by time
  if seconds == nil and (remote or not tty) then seconds = 5 end
  return helpers.watch(out, seconds)
end
env.show = function(what, n) return helpers.show(out, what, n) end
env.hosts = function(i, t) return helpers.hosts(out, i, t) end
env.help = function() out(helpers.help_text .. "\n") end
M.env = env

-- Typed code, and showing what it returned, run the user's own
-- metamethods (__tostring, __index, ...): whatever they raise, the session
-- and the run go on. This message handler turns any error value into one
-- line and cannot fail itself (trace.message describes a broken
-- __tostring, and the position it gives is the prompt's line).
-- A message raised without a position (error(msg, 0) in a helper, LuaJIT's
-- "stack overflow") gets the line of the innermost frame typed here, as every
-- other error at the prompt has; an interrupt says why, not where (repl.c).
-- surge.remote's calls get the same (its handler's errors are the prompt's).
local function located(text)
  if text:match("^[^\n]-:%d+: ") or text:match("^interrupted %(") then return text end
  for level = 2, 400 do                 -- from the caller: surge's frames are never the prompt's
    local info = debug.getinfo(level, "Sl")
    if info == nil then break end
    if info.source == "=prompt" and info.currentline > 0 then
      return ("prompt:%d: %s"):format(info.currentline, text)
    end
  end
  return text
end
M.located = located

local function describe(e)
  if e == LEAVE then return e end
  -- os.exit(N) typed here: the run ends (then surge exits N), no error
    if e == core.STOPPED and core.C.surge_exit_status() >= 0 then return LEAVE end
  local ok, text = pcall(trace.message, e)
  if ok and type(text) == "string" then
    local ok2, where = pcall(located, text)
    return ok2 and where or text
  end
  return "error raised with a value that cannot be shown (a " .. type(e) .. ")"
end

local function results_text(...)
  local n = select("#", ...)
  if n == 0 then return nil end
  local parts = {}
  for i = 1, n do parts[i] = show.format((select(i, ...)), 2) end
  return concat(parts, "\t") .. "\n"
end

-- A line is being evaluated: master's waits in it (surge.sleep, poll) must
-- not serve another client's line in the middle of this one.
local evaluating = false

-- The code a line runs. An expression is returned through a call, so that
-- a call in it is not a tail call: its frame stays on the stack and errors
-- raised at the caller's line (check.raise) say "prompt:1:".
--
-- Typed code is Lua source only: loadstring also takes LuaJIT bytecode, which
-- LuaJIT does not verify (crafted bytecode corrupts memory), and a line or a
-- client's request that began with byte 27 (ESC, bytecode's first byte) was
-- loaded as such.
local function source(text)
  local fn, err = load(text, "=prompt", "t")
  if not fn and err == "attempt to load chunk with wrong mode" then
    err = "prompt:1: the line starts with byte 27, as LuaJIT bytecode does: only Lua source is run here"
  end
  return fn, err
end

local function compile(st, src)
  if not st.buf then
    local fn = source("return " .. src)
    -- (the ")" on the line itself keeps error positions on line 1; after a
    -- newline it survives a trailing comment)
    local pass = "return (function(...) return ... end)("
    if fn then return source(pass .. src .. ")") or source(pass .. src .. "\n)") or fn end
  end
  return source(src)
end

-- Tasks a command started stop with it when it is interrupted (Ctrl-C, the
-- run stopping, its client leaving): nobody can wait for them any more.
-- Those started before it keep running. They end quietly (their values
-- would be a scenario's internals); a scenario the command ran keeps what
-- it measured in the results, marked partial, as a stop does in M.main.
local function abandon(before, why)
  local mine = {}
  for _, t in ipairs(surge_tasks()) do
    if not before[t] and t.ok == nil then
      mine[#mine + 1] = t
      t.reported = true
      if not t.stopping then pcall(surge_stop_task, t.id); t.stopping = true end
    end
  end
  local scenario = package.loaded["surge.scenario"]
  local res = type(scenario) == "table" and scenario.take_partial and scenario.take_partial(why)
  if #mine > 0 then
    out(("stopped %d task(s) the command started\n"):format(#mine))
    -- their lcores are free again for the next command (a task that ignores
    -- the stop is left to the run's own stop and watchdog)
    local C = core.C
    local deadline = tonumber(C.surge_tsc()) + 2 * surge_tsc_hz()
    for _, t in ipairs(mine) do
      while t.ok == nil and tonumber(C.surge_tsc()) < deadline do
        -- the interrupt may have come between the command's own collect
        -- of this task and its keeping the result: then it is gone
        local ok, done = pcall(surge_collect, t)
        if not ok then t.ok, t.value = false, "interrupted" end
        if done == nil then C.surge_task_poll(10) end
      end
    end
  end
  if res then
    results.scenario_done(res.scenario or "scenario", res)
    out(("%s: %s: the results so far are partial\n"):format(res.scenario or "scenario", why))
  end
end

-- One line from a source (the terminal or a client, each with its own
-- unfinished statement in st.buf). Returns "ok", "more", "error" or "leave".
local function eval_line(st, line, client)
  local src = st.buf and (st.buf .. "\n" .. line) or line
  local fn, err = compile(st, src)
  if not fn then
    if err:match("'<eof>'$") then st.buf = src return "more" end
    st.buf = nil
    out("error: " .. err .. "\n")
    return "error"
  end
  st.buf = nil
  setfenv(fn, env)
  -- interpreted, so that the evaluation hook (core/front/repl.c) can end a loop
  -- typed here; a typed function launched as a task is compiled as usual
  jit_off(fn, true)
  local before = {}
  for _, t in ipairs(surge_tasks()) do before[t] = true end
  local scenario = package.loaded["surge.scenario"]
  if type(scenario) == "table" and scenario.take_partial then scenario.take_partial() end
  -- the results are shown under the hook too: a __tostring may loop
  replio.evaluating(true, client)
  evaluating = true
  local res = { xpcall(fn, describe) }
  local ok, text = res[1], res[2]
  if ok then ok, text = xpcall(results_text, describe, unpack(res, 2, maxn(res))) end
  evaluating = false
  local why = replio.evaluating(false)
  if not ok and text == LEAVE then return "leave" end
  if not ok then out("error: " .. text .. "\n") end
  if why then abandon(before, why) end
  if not ok then return "error" end
  if text then out(text) end
  return "ok"
end

-- For tests: evaluates a line, returns its status and what it printed.
function M.eval(st, line)
  local buf = {}
  sink = function(s) buf[#buf + 1] = s end
  local ok, status = pcall(eval_line, st, line)
  sink = io_write
  if not ok then error(status, 0) end
  return status, concat(buf)
end

-- Names completing `text`: globals, or fields of the table (or handle) the
-- dotted path before the last '.' or ':' names.
local keywords = { "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if",
                   "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while" }
local function complete(text)
  local head, sep, last = text:match("^(.*)([%.:])([%w_]*)$")
  local names, seen = {}, {}
  local function add(k, prefix)
    -- names starting with "_" are internals (q:__handle, surge._wait_all):
    -- offered only when the word typed starts with "_" itself (_G, _VERSION)
    if type(k) == "string" and k:match("^[%a_][%w_]*$") and k:sub(1, #last) == last and not seen[k]
      and (k:sub(1, 1) ~= "_" or last:sub(1, 1) == "_") then
      seen[k] = true
      names[#names + 1] = prefix .. k
    end
  end
  if head then
    local obj = env
    for part in head:gmatch("[^%.]+") do
      if type(obj) ~= "table" or not part:match("^[%a_][%w_]*$") then return {} end
      local ok, v = pcall(function() return obj[part] end)
      obj = ok and v or nil
    end
    local hops = 0    -- an __index chain may loop
    while type(obj) == "table" and hops < 16 do
      hops = hops + 1
      -- a module's internals it lists in _internals (surge.handles) are not offered
      local internal = rawget(obj, "_internals")
      internal = type(internal) == "table" and internal or {}
      for k, v in pairs(obj) do
        if (sep == "." or type(v) == "function") and not internal[k] then add(k, head .. sep) end
      end
      local mt = getmetatable(obj)   -- (a __metatable field may make it any value)
      obj = type(mt) == "table" and type(rawget(mt, "__index")) == "table" and rawget(mt, "__index") or nil
    end
    if type(obj) == "cdata" and ffi.istype("struct surge_burst", obj) then
      local names_of = sep == ":" and { "alloc", "free", "bytes", "refcnt" }
        or { "n", "cap", "pool", "probes", "tsc", "data", "len", "gap_ns" }
      for _, k in ipairs(names_of) do add(k, head .. sep) end
    end
  else
    last = text
    for k in pairs(env) do add(k, "") end
    for k in pairs(_G) do add(k, "") end
    for _, k in ipairs(keywords) do add(k, "") end
  end
  sort(names)
  return names
end
-- For the terminal and the clients: a user's value met on the way (its
-- __pairs, __index) must not end the session; no names then.
M.complete = function(text)
  local ok, names = pcall(complete, text)
  return ok and names or {}
end

-- Reaps finished tasks and says how they ended, once each.
local function report_tasks(notify)
  for _, t in ipairs(surge_tasks()) do
    -- a command interrupted between collecting a task and keeping its
    -- result (in surge.wait) lost it: say so rather than fail here
    local ok, done = true, nil
    if t.ok == nil then ok, done = pcall(surge_collect, t) end
    if not ok then t.ok, t.value = false, "its result was lost: the command collecting it was interrupted" end
    if (not ok or done ~= nil) and not t.reported then
      t.reported = true
      local name = t.fn:gsub("^=", "")
      if t.ok then
        notify(("task %d '%s' finished%s\n"):format(t.id, name,
          t.value ~= nil and (": " .. show.format(t.value, 1)) or ""))
      elseif not t.stopping or not tostring(t.value):match("run stopped") then
        notify(("task %d '%s' failed: %s\n"):format(t.id, name, tostring(t.value):match("^[^\n]*")))
      end
    end
  end
end

local clients = {}    -- id -> { buf } of each attached client
local requester       -- the client whose request is being evaluated

-- The client whose request runs now (nil at the terminal): a client may
-- send that client extra frames before its reply (the Python client's
-- progress lines, lua/surge/remote.lua).
function M.requester() return requester end

-- Writes to where the line being evaluated prints (its client's reply, or the
-- terminal): surge.remote's replies, which typed code cannot redirect.
function M.output(s) out(s) end

local function serve_request(id, req)
  local kind, text = req:sub(1, 1), req:sub(2)
  if kind == "c" then
    replio.reply(id, "o", concat(M.complete(text), "\n"))
    return
  end
  if kind ~= "e" then
    replio.reply(id, "e", "not a surge request: the first byte must be 'e' (evaluate) or 'c' (complete)")
    return
  end
  local st = clients[id] or {}
  clients[id] = st
  local buf = {}
  sink, remote, requester = function(s) buf[#buf + 1] = s end, true, id
  local status = eval_line(st, text, id)
  sink, remote, requester = io_write, false, nil
  local C = core.C
  if status == "leave" and C.surge_exit_status() >= 0 then
    buf[#buf + 1] = ("os.exit: the instance ends (exit status %d)\n"):format(C.surge_exit_status())
  elseif status == "leave" then
    buf[#buf + 1] = "exit() leaves the prompt on the instance's terminal; here, Ctrl-D detaches\n"
  end
  replio.reply(id, status == "more" and "m" or status == "error" and "e" or "o", concat(buf))
end

-- For surge.wait() under --control without a prompt: serve clients while
-- waiting up to ms; returns the running tasks like surge_task_poll.
local listening = false
local function listen()
  local path = replio.options().control
  if path and not listening then
    local ok, err = replio.listen(path)
    if not ok then error("surge: " .. err, 0) end
    listening = true
  end
end
M.listen = listen

function M.serve(ms)
  listen()
  local C = core.C
  local n = C.surge_task_poll(0)
  local ev, id, req = replio.read(nil, ms)
  if ev == "request" then serve_request(id, req) end
  return n
end

-- Whether master's waits outside surge.wait() (surge.poll, surge.sleep)
-- serve attached clients: under --control, and not while a line is being
-- evaluated (that line's own waits only wait).
function M.serving()
  return replio.options().control ~= nil and not evaluating
end

local function history_path()
  local home = os.getenv("HOME")
  return home and home ~= "" and (home .. "/.surge_history") or nil
end

-- The session; returns how the user left: "stop" (default) or "wait".
function M.session()
  local C = core.C
  listen()
  tty = replio.start(history_path())
  replio.set_completer(M.complete)
  local term, last_intr = {}, false
  if tty then out("surge " .. surge.version .. ": Lua prompt, help() lists the helpers, Ctrl-D leaves\n") end
  local notify = function(s) if tty then replio.notify(s) else io_write(s) io_flush() end end
  leave_mode = nil
  while surge_running() do
    report_tasks(notify)
    C.surge_task_poll(0)
    local ev, a, b = replio.read(term.buf and "   >> " or "surge> ", 100)
    if ev == "line" then
      last_intr = false
      if tty and a:match("%S") then replio.history_add(a) end
      local status = eval_line(term, a)
      io_flush()
      if status == "leave" then break end
    elseif ev == "eof" then
      -- the input ended inside a statement (a file cut short, an `end`
      -- missing): Lua's own error for it, and the exit status says so
      if term.buf then
        local _, err = source(term.buf)
        out("error: " .. tostring(err) .. "\n")
        M.unfinished = true
      end
      break
    elseif ev == "intr" then
      if not tty then break end
      if a or term.buf then
        term.buf, last_intr = nil, false
      elseif last_intr then
        out(("stopping %d task(s)\n"):format(helpers.stop()))
        last_intr = false
      else
        out("(Ctrl-C again stops the tasks; Ctrl-D or exit() leaves)\n")
        last_intr = true
      end
    elseif ev == "request" then
      serve_request(a, b)
    end
  end
  report_tasks(notify)
  replio.stop()
  tty = false
  return leave_mode or "stop"
end

-- `run -i`: the prompt opens at master's first wait (for all tasks or one),
-- with the tasks running; leaving stops them unless the user said
-- exit("wait"); then the wait goes on as usual.
local opened = false
local function at_wait()
  if opened or not replio.options().interactive then return end
  opened = true
  if M.session() == "stop" then helpers.stop() end
end

-- Master's waits (surge.wait, poll, sleep) reach the prompt through this
-- hook: the task code sits below the prompt and never requires it.
require("surge.tasks").set_prompt{ serving = M.serving, serve = M.serve, at_wait = at_wait,
                                   launched = helpers.track }

return M
