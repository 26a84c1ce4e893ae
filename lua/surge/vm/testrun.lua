-- vm/testrun.lua - `surge test [FILE...]`: Lua tests inside the real binary.
--
-- A test file returns a table of name = function pairs. Each runs in the
-- main VM with ffi.C resolving the symbols surge ships. The last line is
-- "N passed, N failed", and the exit code is non-zero on any failure.
local M = {}

-- For test files: calls f(...), which must raise an error matching the Lua
-- pattern; returns the error.
function M.errors(pattern, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(err):match(pattern), ("'%s' !~ '%s'"):format(tostring(err), pattern))
  return err
end

-- For test files: the pattern of exactly "FILE:LINE: msg", FILE:LINE the
-- caller's line (plus `next`, 1 when the call that fails is on the next
-- line): an error raised at the user's line, with nothing around it.
function M.at(msg, next)
  local info = debug.getinfo(2, "Sl")
  local where = info.short_src .. ":" .. (info.currentline + (next or 0)) .. ": "
  return "^" .. (where .. msg):gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0") .. "$"
end

-- For test files: the ring port `surge test` gives a run (port 0, its own
-- loopback: what a queue sends comes back to its rx), opened once with one
-- queue each way: { port, rxq, txq, pool, send = function(bytes) } where
-- send puts one frame of those bytes on the ring.
local ring
function M.ring()
  if ring then return ring end
  local ffi = require("ffi")
  local surge = require("surge")
  local port = surge.port(0, { rxq = 1, txq = 1 })
  local pool = surge.pool{ template = surge.proto.udp{}, size = 1023, data_room = 2048 }
  local b, txq = pool:burst(1), port:txq(0)
  ring = { port = port, rxq = port:rxq(0), txq = txq, pool = pool }
  function ring.send(bytes)
    assert(b:alloc(1) == 1)
    ffi.copy(b.data[0], bytes, #bytes)
    b.len[0] = #bytes
    txq:send(b)
  end
  return ring
end

local function default_files()
  local dir = package.surge_lua:match("^(.*)/lua$")
  local files = {}
  local p = io.popen("ls " .. (dir or ".") .. "/tests/lua/*.lua 2>/dev/null")
  for f in p:lines() do files[#files + 1] = f end
  p:close()
  return files
end

function M.main(argv)
  local files = {}
  for i = 1, #argv do files[#files + 1] = argv[i] end
  if #files == 0 then files = default_files() end
  local passed, failed = 0, 0
  for _, file in ipairs(files) do
    local chunk, err = loadfile(file)
    local tests = chunk and chunk() or nil
    if type(tests) ~= "table" then
      print(("FAIL %s: %s"):format(file, err or "file does not return a table of tests"))
      failed = failed + 1
    else
      local names = {}
      for name in pairs(tests) do names[#names + 1] = name end
      table.sort(names)
      for _, name in ipairs(names) do
        local ok, e = xpcall(tests[name], debug.traceback)
        if ok then
          passed = passed + 1
          print(("ok   %s: %s"):format(file, name))
        else
          failed = failed + 1
          print(("FAIL %s: %s\n%s"):format(file, name, tostring(e)))
        end
      end
    end
  end
  print(("%d passed, %d failed"):format(passed, failed))
  return failed == 0 and 0 or 1
end

return M
