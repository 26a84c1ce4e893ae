-- surge.remote (lua/surge/remote.lua): what the Python client runs in an
-- instance. Its requests go through the prompt's evaluation here as they do
-- from a socket (repl.eval), and the replies are read as the client reads
-- them: what was printed, the marker, the value as JSON. The client against
-- real instances is tests/python/.
local repl = require("surge.repl")
local remote = require("surge.remote")
local json = require("surge.results.json")
local T = {}

local function literal(s)
  return '"' .. s:gsub("[%z\1-\31\"\\\127-\255]", function(c) return ("\\%03d"):format(c:byte()) end) .. '"'
end

-- One request, as the client sends it: returns status, printed text, value.
local function call(fn, args)
  local req = json.encode({ fn = fn, args = args or {} })
  local status, text = repl.eval({}, "require(\"surge.remote\").run(" .. literal(req) .. ")")
  local out, js = text:match("^(.-)%z" .. "surge%-py%z(.*)\n?$")
  if status ~= "ok" or not js then return status, text, nil end
  local v, err = json.decode(js)
  assert(err == nil, tostring(err) .. " in " .. js)
  return status, out, v
end

function T.eval_values_and_printed_text()
  local _
  local status, out, v = call("eval", { code = "print('hi') return 1 + 1, 'x'" })
  assert(status == "ok" and out == "hi\n", out)
  assert(v[1] == 2 and v[2] == "x" and #v == 2)
  _, _, v = call("eval", { code = "{ 1, 2, { a = true } }" })
  assert(v[1][1] == 1 and v[1][3].a == true)
  _, _, v = call("eval", { code = "local x = 3" })
  assert(#v == 0, "statements: no value")
  _, _, v = call("eval", { code = "nil, 5" })
  assert(v[1] == json.null and v[2] == 5, "nil is null, and the values after it stay")
  _, _, v = call("eval", { code = "1, nil, nil" })
  assert(#v == 3 and v[3] == json.null, "trailing nils are values too")
end

function T.call_by_name_with_arguments()
  local _, _, v = call("call", { fn = "string.rep", args = json.array({ "ab", 2 }), n = 2 })
  assert(v[1] == "abab")
  _, _, v = call("call", { fn = "select", args = json.array({ "#", json.null, json.null }), n = 3 })
  assert(v[1] == 2, "nil arguments are passed, counted by n")
  local status, text = call("call", { fn = "error", args = json.array({ "boom" }), n = 1 })
  assert(status == "error" and text == "error: prompt:1: boom\n", text)
end

-- eval's code as the client sends it: a string literal beside the JSON
function T.code_beside_the_json()
  local status, text = repl.eval({}, [[require("surge.remote").run('{"fn":"eval","args":{"progress":false}}', "1 + 2")]])
  assert(status == "ok" and text == remote.MARK .. "[3]", text)
  status, text = repl.eval({}, [[require("surge.remote").run('{"fn":"eval","args":[]}', "x_beside = 1")]])
  assert(status == "ok" and text == remote.MARK .. "[]", text)
  status, text = repl.eval({}, [[require("surge.remote").run('{"fn":"eval","args":5}')]])
  assert(status == "error" and text:match("args is not an object"), text)
end

-- issue 31.8: keys 1 and "1" both come back (as pairs), none replaces another
function T.tables_with_keys_of_several_types_keep_every_key()
  local _, _, v = call("eval", { code = "{ [1] = 'a', ['1'] = 'b' }" })
  local pairs_ = v[1][remote.PAIRS]
  assert(type(pairs_) == "table" and #pairs_ == 2, "as pairs")
  local seen = {}
  for _, kv in ipairs(pairs_) do seen[type(kv[1]) .. ":" .. tostring(kv[1])] = kv[2] end
  assert(seen["number:1"] == "a" and seen["string:1"] == "b")
  _, _, v = call("eval", { code = "{ x = 1, y = { z = 2 } }" })
  assert(v[1].x == 1 and v[1].y.z == 2, "string keys: an object")
  _, _, v = call("eval", { code = "{ [true] = 1, [2.5] = 2 }" })
  assert(#v[1][remote.PAIRS] == 2)
  local t = {} t.self = t
  local c = remote.to_json(t, {})
  assert(c.self == "<cycle>", "a table containing itself ends")
end

-- what JSON cannot hold exactly comes back tagged, as arguments go: NaN and the
-- infinities (json.encode would write null), strings that are not UTF-8 (it
-- would write U+FFFD), and such keys (as pairs, never an object's key)
function T.values_json_cannot_hold_are_tagged()
  local _, _, v = call("eval", { code = "0/0, math.huge, -math.huge, '\\255A', 'ok'" })
  assert(v[1][remote.FLOAT] == "nan" and v[2][remote.FLOAT] == "inf" and v[3][remote.FLOAT] == "-inf")
  assert(v[4][remote.HEX] == "ff41" and v[5] == "ok", tostring(v[4]))
  _, _, v = call("eval", { code = "{ [math.huge] = 1, ['\\254'] = 2 }" })
  local keys = {}
  for _, kv in ipairs(v[1][remote.PAIRS]) do
    keys[(kv[1][remote.FLOAT] or kv[1][remote.HEX])] = kv[2]
  end
  assert(keys.inf == 1 and keys.fe == 2, "keys tagged too")
  _, _, v = call("eval", { code = "{ 1, 0/0 }" })
  assert(v[1][1] == 1 and v[1][2][remote.FLOAT] == "nan", "inside a list")
end

function T.arguments_from_json()
  local from = remote.from_json
  assert(from(json.null) == nil)
  assert(from({ [remote.HEX] = "00ff41" }) == "\0\255A")
  local nan = from({ [remote.FLOAT] = "nan" })
  assert(nan ~= nan and from({ [remote.FLOAT] = "-inf" }) == -math.huge)
  assert(from({ [remote.LUA] = "surge.ports()" }) == require("surge").ports())
  local t = from({ [remote.PAIRS] = json.array({ json.array({ 1, "a" }), json.array({ "1", "b" }) }) })
  assert(t[1] == "a" and t["1"] == "b")
  local list = from(json.array({ 1, json.null, 3 }))
  assert(list[1] == 1 and list[2] == nil and list[3] == 3)
  local ok, err = pcall(from, { [remote.HEX] = "xyz" })
  assert(not ok and err:match("bad hex"), err)
end

function T.task_states_in_one_place()
  local s = remote.state_of
  assert(s({}) == "running" and s({ stopping = true }) == "stopping")
  assert(s({ ok = true }) == "done" and s({ ok = false }) == "failed")
  local _, _, v = call("tasks")
  assert(type(v) == "table" and #v == 0)
  _, _, v = call("state", { id = 7 })
  assert(v == "gone")
  _, _, v = call("health")
  assert(v == false)
end

function T.stats_and_results()
  local _, _, v = call("stats")
  assert(type(v.ports) == "table" and type(v.queues) == "table" and type(v.counters) == "table")
  _, _, v = call("results")
  assert(v.schema == "surge-results" and v.status == "running")
end

-- errors are the prompt's one line, never a position inside remote.lua
function T.errors()
  local status, text = call("eval", { code = "1 + nil" })
  assert(status == "error" and text == "error: prompt:1: attempt to perform arithmetic on a nil value\n", text)
  status, text = call("eval", { code = "local a = 1\nerror('boom')" })
  assert(status == "error" and text == "error: prompt:2: boom\n", text)
  status, text = call("stop", { id = 99 })
  assert(status == "error" and text == "error: prompt:1: stop: no running task 99\n", text)
  status, text = call("scenario", { name = "no-such" })
  assert(status == "error" and text:match("unknown scenario \"no%-such\""), text)
  status, text = call("no_such_fn")
  assert(status == "error" and text:match("surge.remote: not a request"), text)
  status, text = repl.eval({}, "require('surge.remote').run('{not json')")
  assert(status == "error" and text:match("surge.remote: not a request %(json: "), text)
  assert(not text:match("remote%.lua"), text)
end

-- A bounded fuzz of what reaches surge.remote: requests built from random
-- pieces of JSON, its tags and function names. Each is answered (a value, or
-- one error line); nothing escapes the prompt's evaluation.
function T.random_requests()
  local pieces = { "{", "}", "[", "]", ",", ":", '"fn"', '"args"', '"eval"', '"call"', '"launch"', '"wait"',
    '"stop"', '"state"', '"code"', '"1 +"', '"n"', "null", "true", "1e400", "-1", "2", '"\\u0000surge:pairs"',
    '"\\u0000surge:lua"', '"\\u0000surge:hex"', '"zz"', '"\\u0000surge:float"', '"nan"', '"x"' }
  math.randomseed(3106)
  local answered = 0
  for _ = 1, 300 do
    local parts = {}
    for k = 1, math.random(0, 24) do parts[k] = pieces[math.random(#pieces)] end
    local req = table.concat(parts)
    if math.random() < 0.5 then req = '{"fn":' .. req end
    local status, text = repl.eval({}, "require(\"surge.remote\").run(" .. literal(req) .. ")")
    assert(status == "ok" or (status == "error" and text:match("^error: [^\n]*\n$")), req .. " -> " .. text)
    answered = answered + 1
  end
  assert(answered == 300)
end

return T
