-- remote.lua (surge.remote) - what the Python client (python/surge) runs in an
-- instance, over its control socket (`surge run --control PATH`).
--
-- Each Python call is one request, always the same line:
--
--   require("surge.remote").run('{"fn": "tasks", "args": {...}}' [, code])
--
-- a JSON text (as a Lua string literal: data, never spliced as code) naming
-- one function of API below and its arguments. The reply is what the prompt
-- printed (the user's own print()s, in eval), then MARK, then the function's
-- value as JSON. The Python side is data in, data out; the Lua it needs
-- lives here, where tests/lua/test_remote.lua sees it.
--
-- Values, both ways (docs/python.md, "How values come back"):
--   Lua -> JSON   numbers, strings, booleans as they are, except what JSON
--                 cannot hold exactly, tagged as the other way: NaN and the
--                 infinities { [FLOAT] = "nan" }, a string that is not UTF-8
--                 { [HEX] = "ff" } (bytes in Python); nil null; a table
--                 with keys 1..n an array; a table whose keys are all strings
--                 an object; any other table { [PAIRS] = [[key, value], ...] }
--                 so that keys 1 and "1" both come back (Python rebuilds a
--                 dict with those keys; keys are tagged as values are, so a
--                 key of math.huge or of bytes that are not UTF-8 comes back
--                 as such); a handle the text the prompt shows;
--                 a 64-bit counter a number.
--   JSON -> Lua   null nil; { [LUA] = "expr" } that expression's value in the
--                 prompt's environment; { [HEX] = "0aff" } those bytes;
--                 { [FLOAT] = "nan" | "inf" | "-inf" }; { [PAIRS] = ... } a
--                 table with those keys.
local json = require("surge.results.json")
local repl = require("surge.repl")
local replio = require("surge.replio")
local show = require("surge.repl.show")
local helpers = require("surge.repl.helpers")
local progress = require("surge.results.progress")
local results = require("surge.results")
local surge = require("surge")
local counter = require("surge.counter")
local fleet = require("surge.fleet")

local M = {}

M.MARK = "\0surge-py\0"          -- separates what the code printed from the value
local PAIRS, LUA, HEX, FLOAT = "\0surge:pairs", "\0surge:lua", "\0surge:hex", "\0surge:float"
M.PAIRS, M.LUA, M.HEX, M.FLOAT = PAIRS, LUA, HEX, FLOAT

-- Loads typed code as the prompt does: first as an expression (through a
-- call, so a call in it keeps its frame and its errors say "prompt:1:"),
-- then as statements; Lua source only (never bytecode), under the name
-- "prompt", in the prompt's environment, interpreted (so that the prompt's
-- evaluation hook can interrupt a loop in it).
local function compile(code)
  local fn = load("return (function(...) return ... end)(" .. code .. "\n)", "=prompt", "t")
  local err
  if not fn then fn, err = load(code, "=prompt", "t") end
  if not fn then error(err, 0) end
  setfenv(fn, repl.env)
  jit.off(fn, true)
  return fn
end

-- Lua value -> JSON-ready value (above). seen: the tables being converted,
-- so that a table containing itself shows "<cycle>" there.
local function to_json(v, seen)
  local t = type(v)
  if t == "number" then
    if v ~= v then return { [FLOAT] = "nan" } end
    if v == math.huge or v == -math.huge then return { [FLOAT] = v > 0 and "inf" or "-inf" } end
    return v
  end
  if t == "string" then
    if json.utf8(v) ~= v then return { [HEX] = (v:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) } end
    return v
  end
  if t == "boolean" then return v end
  if v == nil or v == json.null then return json.null end
  if t == "cdata" then
    local n = tonumber(v)
    if n then return n end
    return tostring(v)
  end
  if t ~= "table" then return tostring(v) end
  local mt = getmetatable(v)
  if type(mt) == "table" and rawget(mt, "__json") == "array" then
    local a = json.array()
    for i = 1, #v do a[i] = to_json(v[i], seen) end
    return a
  end
  if mt ~= nil then return show.format(v, 1) end      -- a handle, or a user's object
  if seen[v] then return "<cycle>" end
  seen[v] = true
  local n, max, strings = 0, 0, true
  for k in pairs(v) do
    n = n + 1
    if type(k) == "number" and k >= 1 and k == math.floor(k) then max = math.max(max, k) end
    if type(k) ~= "string" or json.utf8(k) ~= k then strings = false end
  end
  local out
  if n == max then
    out = json.array()
    for i = 1, n do out[i] = to_json(v[i], seen) end
  elseif strings then
    out = {}
    for k, x in pairs(v) do out[k] = to_json(x, seen) end
  else
    -- keys of several types: as pairs, so that none replaces another
    local list = json.array()
    for k, x in pairs(v) do
      local key = k
      if type(k) == "number" or type(k) == "string" then key = to_json(k, seen)
      elseif type(k) ~= "boolean" then key = show.format(k, 1) end
      list[#list + 1] = json.array({ key, to_json(x, seen) })
    end
    out = { [PAIRS] = list }
  end
  seen[v] = nil
  return out
end
M.to_json = to_json

-- JSON value (decoded) -> Lua value (above).
local function from_json(v)
  if v == json.null then return nil end
  if type(v) ~= "table" then return v end
  if getmetatable(v) ~= nil then        -- an array (json.array)
    local out, n = {}, #v
    for i = 1, n do out[i] = from_json(v[i]) end
    return out
  end
  local tag = next(v)
  if tag ~= nil and next(v, tag) == nil and type(v[tag]) == "string" then
    local s = v[tag]
    if tag == LUA then return compile("return " .. s)() end
    if tag == HEX then
      if not s:match("^%x*$") or #s % 2 ~= 0 then error("surge.remote: bad hex bytes", 0) end
      return (s:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end))
    end
    if tag == FLOAT then
      if s == "nan" then return 0 / 0 end
      if s == "inf" then return math.huge end
      if s == "-inf" then return -math.huge end
      error("surge.remote: bad float " .. s, 0)
    end
  end
  if tag == PAIRS and next(v, tag) == nil then
    local out = {}
    for _, kv in ipairs(v[PAIRS]) do
      local k = from_json(kv[1])
      if k == nil then error("surge.remote: a table key cannot be nil", 0) end
      out[k] = from_json(kv[2])
    end
    return out
  end
  local out = {}
  for k, x in pairs(v) do out[k] = from_json(x) end
  return out
end
M.from_json = from_json

-- A task's state, the one place it is worked out.
local function state_of(t)
  if t.ok == nil then return t.stopping and "stopping" or "running" end
  return t.ok and "done" or "failed"
end

local function first_line(v) return (tostring(v):match("^[^\n]*")) end

-- The error of a failed task (not one the run's stop ended), or nil.
local function failure()
  for _, t in ipairs(surge.tasks()) do
    if t.ok == false and not tostring(t.value):match("run stopped") then return first_line(t.value) end
  end
  return nil
end

local function find_task(id)
  for _, t in ipairs(surge.tasks()) do if t.id == id then return t end end
  return nil
end

-- Values with their count: a trailing nil counts (`1, nil` is two values).
local function pack(...) return { n = select("#", ...), ... } end

-- Sends progress lines to the requesting client (frames 'p') while fn runs.
local function with_progress(on, fn, ...)
  local id = on and repl.requester() or nil
  if not id then return fn(...) end
  local old = progress.tap(function(s) pcall(replio.reply, id, "p", s) end)
  local res = pack(pcall(fn, ...))
  progress.tap(old)
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, res.n)
end

-- Errors raised without a line get the line of the innermost frame of the
-- user's code, as at the prompt.
local function where(e)
  if type(e) ~= "string" then return e end
  return repl.located(e)
end

local API = {}

-- Runs fn(...) as the prompt runs a line (errors at the user's line) and
-- returns its values as a JSON array.
local function values(progress_on, fn, ...)
  local r = pack(with_progress(progress_on, xpcall, fn, where, ...))
  if not r[1] then error(r[2], 0) end
  local vals = json.array()
  for i = 2, r.n do vals[i - 1] = to_json(r[i], {}) end
  return vals
end

-- { code, progress } -> the code's values (an array).
function API.eval(a)
  if type(a.code) ~= "string" then error("surge.remote: eval needs code (a string)", 0) end
  return values(a.progress, compile(a.code))
end

-- { fn, args, n } -> the values of fn(args...), fn a name or an expression
-- (string.rep, surge.port(0).stats) evaluated in the prompt's environment.
-- The call is made from a chunk named "prompt", so errors read as if typed.
function API.call(a)
  if type(a.fn) ~= "string" then error("surge.remote: call needs fn (a string)", 0) end
  local args = a.args or {}
  return values(false, compile("(" .. a.fn .. ")(...)"), unpack(args, 1, a.n or table.maxn(args)))
end

-- { fn, args } -> { id, name } of the task launched (the prompt's launch()).
function API.launch(a)
  local args = a.args or {}
  local t = helpers.launch(repl.env, a.fn, unpack(args, 1, a.n or table.maxn(args)))
  return { id = t.id, name = t.name }
end

function API.state(a)
  local t = find_task(a.id)
  return t and state_of(t) or "gone"
end

function API.stop(a) return helpers.stop(a.id) end

-- { id, slice } -> { done = true, value } or { done = false } after slice
-- seconds: a long wait is several requests, each shorter than the client's
-- socket timeout, so that none is cut (and the task with it).
function API.wait(a)
  local v, why = surge.wait(a.id, a.slice)
  if v == nil and why == "timeout" then return { done = false } end
  return { done = true, value = to_json(v, {}) }
end

function API.tasks()
  local out = json.array()
  for _, t in ipairs(surge.tasks()) do
    out[#out + 1] = { id = t.id, fn = (t.fn:gsub("^=", "")), state = state_of(t),
                      error = t.ok == false and first_line(t.value) or nil }
  end
  return out
end

function API.set_rate(a)
  return show.format(surge.port(a.port):txq(a.queue):set_rate(a.rate), 1)
end

function API.stats()
  local ports, queues = json.array(), json.array()
  for p = 0, surge.ports() - 1 do
    local port = surge.handles.port(p)
    local ok, s = pcall(port.stats, port)
    if ok then
      s.port = p
      ports[#ports + 1] = to_json(s, {})
      local info = port:info()
      for i = 0, info.txq - 1 do
        local q = port:txq(i):stats()
        q.port, q.queue, q.dir = p, i, "tx"
        queues[#queues + 1] = to_json(q, {})
      end
      for i = 0, info.rxq - 1 do
        local q = port:rxq(i):stats()
        q.port, q.queue, q.dir = p, i, "rx"
        queues[#queues + 1] = to_json(q, {})
      end
    end
  end
  return { ports = ports, queues = queues, counters = json.array(counter.all()) }
end

function API.results() return results.collect() end

-- { name, options, progress } -> the scenario's results.
function API.scenario(a)
  local name = a.name
  local mod = name:find(".", 1, true) and name or "surge.scenario." .. name:gsub("-", "_")
  local ok, m = pcall(require, mod)
  if not ok then ok, m = pcall(require, name) end
  if not ok then error(("unknown scenario %q"):format(name), 0) end
  return to_json(with_progress(a.progress, m.run, a.options or {}), {})
end

-- Fleets (python/surge/fleet.py): the first failed task's error, or false.
function API.health() return failure() or false end

-- Stops the tasks, waits for them (their counters are final then) and returns
-- the results as --output would write them (a failed task: "failed", its error).
function API.stop_collect()
  helpers.stop()
  pcall(surge.wait, nil, 5)
  local err = failure()
  return results.collect(err and "failed" or "ok", err and 1 or 0, err)
end

function API.arm(a) return fleet.arm(a.t) end

function API.stop_run() surge.stop() return json.null end

-- Positions inside this file say nothing to the caller: the message alone.
local function strip(e)
  if type(e) == "string" then return (e:gsub("^[^\n:]*remote%.lua:%d+: ", "")) end
  return e
end

-- The one entry point: a JSON request, the reply printed after MARK. code:
-- eval's code, when the client sends it apart from the JSON (as a string
-- literal of its own, which Lua's lexer reads faster than the JSON decoder).
function M.run(text, code)
  local req, err = json.decode(text)
  if type(req) ~= "table" or type(req.fn) ~= "string" or API[req.fn] == nil then
    error("surge.remote: not a request (" .. (err or "no known fn") .. ")", 0)
  end
  local args = req.args ~= nil and from_json(req.args) or {}
  if type(args) ~= "table" then error("surge.remote: not a request (args is not an object)", 0) end
  if code ~= nil then args.code = code end
  local ok, v = xpcall(API[req.fn], strip, args)
  if not ok then error(v, 0) end
  repl.output(M.MARK .. json.encode(v))
end

M.API = API
M.state_of = state_of
return M
