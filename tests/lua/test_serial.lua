-- Task arguments and results cross VMs as text: everything plain must come
-- back equal, handles must come back as handles, the rest is a clear error.
local serial = require("surge.base.serial")
local surge = require("surge")

local T = {}

local function roundtrip(...)
  local n = select("#", ...)
  local v = serial.decode(serial.encode({ ... }, n), surge.handles)
  return v
end

local function deep_equal(a, b, path)
  path = path or "value"
  assert(type(a) == type(b), path .. ": type " .. type(a) .. " vs " .. type(b))
  if type(a) ~= "table" then
    if a ~= a then assert(b ~= b, path .. ": NaN lost") return end
    assert(a == b, path .. ": " .. tostring(a) .. " vs " .. tostring(b))
    return
  end
  for k, v in pairs(a) do deep_equal(v, b[k], path .. "." .. tostring(k)) end
  for k in pairs(b) do assert(a[k] ~= nil, path .. "." .. tostring(k) .. " appeared") end
end

function T.plain_values()
  local s = "quote \" backslash \\ newline \n zero \0 high \255"
  local v = roundtrip(1, -2.5, 2^53, 1e-300, s, true, false, nil, "last")
  assert(v.n == 9)
  deep_equal({ 1, -2.5, 2^53, 1e-300, s, true, false, nil, "last" }, { v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9] })
  assert(v[8] == nil and v[9] == "last")
end

function T.special_numbers()
  local v = roundtrip(math.huge, -math.huge, 0 / 0, 0.1)
  assert(v[1] == math.huge and v[2] == -math.huge and v[3] ~= v[3] and v[4] == 0.1)
end

function T.nested_tables()
  local t = { rate = "1mpps", flows = { 1, 2, { deep = "yes" } }, [10] = "ten", [true] = 1 }
  deep_equal(t, roundtrip(t)[1])
end

function T.handles_become_objects()
  local port = surge.handles.port(1)
  local v = roundtrip(port, port:txq(0), port:rxq(2), surge.handles.pool(3))
  assert(getmetatable(v[1]) == getmetatable(port) and v[1].id == 1)
  assert(v[2].port == 1 and v[2].id == 0 and type(v[2].send) == "function")
  assert(v[3].port == 1 and v[3].id == 2 and type(v[3].recv) == "function")
  assert(v[4].id == 3 and type(v[4].burst) == "function")
end

function T.functions_and_cycles_are_refused()
  local ok, err = pcall(serial.encode, { function() end }, 1)
  assert(not ok and err:match("argument 1") and err:match("function"), err)
  local t = {}
  t.self = t
  ok, err = pcall(serial.encode, { t }, 1)
  assert(not ok and err:match("cycle"), err)
  ok, err = pcall(serial.encode, { { [{}] = 1 } }, 1)
  assert(not ok and err:match("keys"), err)
end

function T.decode_has_no_globals()
  local ok = pcall(serial.decode, "return os.exit(3)", surge.handles)
  assert(not ok, "task data must not reach globals")
end

-- The decoder parses; it runs nothing, so code in the text is an error.
function T.decode_runs_no_code()
  for _, text in ipairs({ 'return {n=1,("x"):rep(10)}', "return {n=1,(function() return 1 end)()}",
                          "return {n=1,1+1}", "return {n=1,print(1)}", "return {n=1,x}" }) do
    local ok, err = pcall(serial.decode, text, surge.handles)
    assert(not ok and err:match("^corrupt task data: .* at byte %d+$"), text .. " -> " .. tostring(err))
  end
end

-- cdata and deep nesting are refused at the encoding side, naming the value.
function T.cdata_and_deep_nesting_are_refused()
  local ok, err = pcall(serial.encode, { 1, require("ffi").new("int[1]") }, 2)
  assert(not ok and err:match("argument 2") and err:match("cdata"), err)
  local t = {}
  for _ = 1, serial.MAX_DEPTH + 1 do t = { t } end
  ok, err = pcall(serial.encode, { t }, 1, "result")
  assert(not ok and err == "cannot pass result 1: tables nested more than 100 deep", err)
  t = {}
  for _ = 1, serial.MAX_DEPTH - 1 do t = { t } end
  assert(roundtrip(t)[1], "100 levels cross")
end

return T
