-- The prompt's evaluation, completion, printers and typed-function packing
-- (lua/surge/repl*.lua), without a terminal: the pty and socket sides are
-- tested end to end in tests/e2e/test_repl_*.sh.
local surge = require("surge")
local repl = require("surge.repl")
local show = require("surge.repl.show")
local rtask = require("surge.repl.task")
local T = {}

function T.expressions_statements_and_continuation()
  local st = {}
  assert(select(2, repl.eval(st, "6 * 7")) == "42\n")
  assert(repl.eval(st, "x = 5") == "ok")
  assert(select(2, repl.eval(st, "x, 'a'")) == '5\t"a"\n')
  assert(repl.eval(st, "function f(a)") == "more")
  assert(repl.eval(st, "  return a + x") == "more")
  assert(repl.eval(st, "end") == "ok" and st.buf == nil)
  assert(select(2, repl.eval(st, "f(1)")) == "6\n")
  assert(rawget(_G, "x") == nil, "prompt globals stay in the prompt's table")
end

function T.errors_are_one_line_and_reset_the_statement()
  local st = {}
  local status, text = repl.eval(st, "x = = 1")
  assert(status == "error" and text == "error: prompt:1: unexpected symbol near '='\n", text)
  status, text = repl.eval(st, "error('boom')")
  assert(status == "error" and text == "error: prompt:1: boom\n", text)
  status, text = repl.eval(st, "error({})")
  assert(status == "error" and text:match("^error: prompt:1: error raised with a table: { ?}\n$"), text)
  status, text = repl.eval(st, "error()")
  assert(status == "error" and text == "error: prompt:1: error raised with no message (nil)\n", text)
  assert(repl.eval(st, "for i = 1, 2 do") == "more")
  status = repl.eval(st, "x = = 2")
  assert(status == "error" and st.buf == nil)
  assert(repl.eval(st, "exit()") == "leave")
end

-- Showing a value or an error runs the user's metamethods: whatever they
-- raise becomes one error line; nothing reaches the caller (the session).
function T.broken_values_are_one_error_line()
  local st = {}
  for line, want in pairs{
    ['setmetatable({}, {__tostring = function() error("x") end})'] = "^error: prompt:1: x\n$",
    ['setmetatable({}, {__index = function() error("idx") end})'] = "^error: prompt:1: idx\n$",
    ['error(setmetatable({}, {__tostring = function() error("b") end}))'] = "its __tostring failed: prompt:1: b",
    ['error(setmetatable({}, {__tostring = function() return nil end}))'] = "its __tostring gave nil",
    ['setmetatable({}, {__tostring = function() return 42 end})'] = "^error: its __tostring gave a number, not a string\n$",
    ['{ [setmetatable({}, {__tostring = function() error("k") end})] = 1 }'] = "^error: prompt:1: k\n$",
  } do
    local ok, status, text = pcall(repl.eval, st, line)
    assert(ok and status == "error" and text:match(want), line .. " -> " .. tostring(text or status))
  end
  repl.env.mm = setmetatable({}, { __metatable = 1 })
  assert(#repl.complete("mm.x") == 0)
end

-- A call in an expression is not a tail call: errors raised at the
-- caller's line name the prompt's.
function T.errors_at_the_callers_line_name_the_prompt()
  local status, text = repl.eval({}, 'surge.pool{ size = "x" }')
  assert(status == "error" and text:match("^error: prompt:1: "), text)
end

function T.completion()
  local c = table.concat(repl.complete("surge.po"), " ")
  assert(c == "surge.poll surge.pool surge.port surge.ports", c)
  assert(table.concat(repl.complete("pri"), " ") == "print")
  assert(table.concat(repl.complete("whi"), " ") == "while")
  local q = surge.handles.txq(0, 0)
  repl.env.cq = q
  c = table.concat(repl.complete("cq:set_"), " ")
  assert(c == "cq:set_rate", c)
  -- internals (surge._internals) are not offered; the API around them is
  assert(#repl.complete("surge.hand") == 0 and #repl.complete("surge.TaskF") == 0)
  c = table.concat(repl.complete("surge.ta"), " ")
  assert(c == "surge.tasks", c)
  assert(#repl.complete("nosuch.x") == 0)
  assert(#repl.complete("1).x") == 0)
end

function T.printers()
  local t = surge.proto.udp{ dst = "10.0.0.2", size = 64 }
  local text = show.format(t)
  assert(text:match("^template, 64 bytes: eth / ip4 / udp\n  eth .* ip4 10%.0%.0%.1 > 10%.0%.0%.2"), text)
  local pool = surge.pool{ template = t, size = 63 }
  local b = pool:burst(8)
  assert(show.format(b) == "burst 0/8 (empty)")
  b:alloc(3)
  text = show.format(b)
  assert(text:match("^burst 3/8, packet 0 %(64 bytes%): eth .* udp 1024 > 1024"), text)
  assert(show.format(pool):match("^pool %d+ %(.*%): 60/63 mbufs free, template 64 bytes"), show.format(pool))
  repl.env.cb = b
  assert(table.concat(repl.complete("cb:al"), " ") == "cb:alloc")
  assert(table.concat(repl.complete("cb.ca"), " ") == "cb.cap")
  repl.env.cb = nil
  b:free()
  assert(show.format({ 1, "a", k = { z = true } }) == '{ 1, "a", k = { z = true } }')
  -- two levels open, the next is a place holder: a cycle below them ends
  -- there (it overflowed the stack), as do tables deeper down
  local c = {}
  c.c = { c }
  assert(show.format(c) == "{ c = { {...} } }", show.format(c))
  assert(show.format({ c }) == "{ { c = {...} } }", show.format({ c }))
  assert(show.format({ { 1, { 2, { 3 } } } }) == "{ { 1, {...} } }")
  assert(show.format({ [{}] = 1 }) == "{ [{...}] = 1 }", show.format({ [{}] = 1 }))
  assert(show.format(1 / 3) == tostring(1 / 3) and show.format(2 ^ 53 + 2) == tostring(2 ^ 53 + 2), show.format(1 / 3))
  assert(show.format(surge.port(1)):match("^port 1: .*null.*, 1 txq 1 rxq, TX 0 packets"))
  assert(show.format(surge.handles.txq(1, 0)) == "txq(1,0): unused, 0 packets, 0 drops")
  -- control bytes escaped (a packet's bytes must not drive the terminal), text as Lua writes it
  assert(show.format("a\0b\27[2J\n\t\"q\"\\\127\1" .. "2é") == [["a\000b\027[2J\n\t\"q\"\\\127\0012é"]],
    show.format("a\0b\27[2J\n\t\"q\"\\\127\1" .. "2é"))
  assert(loadstring("return " .. show.format("x\0\1\0012\255"))() == "x\0\1\0012\255", "the text reads back as the string")
  -- __tostring: used through a __metatable lock; one that gives no string is an error
  local locked = setmetatable({}, { __tostring = function() return "locked one" end, __metatable = "no" })
  assert(show.format(locked) == "locked one", show.format(locked))
  local ok, err = pcall(show.format, setmetatable({ a = 1 }, { __tostring = function() return 42 end }))
  assert(not ok and err == "its __tostring gave a number, not a string", tostring(err))
end

function T.typed_functions_pack_and_refuse_upvalues()
  local env = repl.env
  repl.eval({}, "function helper(n) return n * 2 end")
  repl.eval({}, "function job(n) return helper(n) + 1 end")
  local p = rtask.pack(env.job, "job", env)
  assert(p.helpers.helper and not p.helpers.job)
  assert(rtask.load(p)(20) == 41)
  local k = 3
  local ok, err = pcall(rtask.pack, function() return k end, "g", env)
  assert(not ok and err:match("g uses 'k', a local from outside it"), err)
  -- what launch sends must survive serialisation as task data
  local serial = require("surge.base.serial")
  local back = serial.decode(serial.encode({ p }, 1), surge.handles)[1]
  assert(rtask.load(back)(1) == 3)
end

return T
