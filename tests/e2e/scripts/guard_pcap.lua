-- guard_pcap.lua - pcap handles between lcores (issue 7.3), single-owner
-- pools (7.9) and surge.vdev errors (7.14). Prints one "case: result" line
-- per case; the test compares them.
local surge = require("surge")
local pcap = surge.pcap

function configure(p) p:option("--dir", "folder for files", "/tmp") end

-- errors name the user's line (here, the pcall below): the cases compare
-- the message after it
local function try(name, f, ...)
  local ok, e = pcall(f, ...)
  if not ok then e = tostring(e):gsub("^[^\n]-guard_pcap%.lua:%d+: ", "") end
  print(("%s: %s"):format(name, ok and ("ok " .. tostring(e)) or ("error " .. tostring(e))))
end

local function make_capture(path, n)
  local b = surge.pool{ template = surge.proto.udp{}, size = 63 }:burst(n)
  local w = pcap.writer(path)
  b:alloc()
  w:write(b)
  b:free()
  return w:close()
end

function master(args)
  local file = args.dir .. "/guard.pcap"
  make_capture(file, 8)
  local r = pcap.reader(file, { loop = true, timing = "fast" })
  local shared = surge.pool{ size = 1023, shared = true }
  local q = surge.port(0, { txq = 1 }):txq(0)
  local task = surge.launch("filler", q, r, shared)
  while r:info().pass == 0 do surge.sleep(0.01) end   -- the task has it now
  try("close while a task fills", r.close, r)
  try("rewind while a task fills", r.rewind, r)
  try("info while a task fills", function() return r:info().records end)
  surge.stop()
  surge.wait(task)
  try("close after the task ended", r.close, r)
  try("close again", r.close, r)
  -- slots are reused: a thousand opens in one run
  local opened = 0
  for _ = 1, 1000 do
    local x = pcap.reader(file)
    x:close()
    opened = opened + 1
  end
  print("reopened: " .. opened)
  try("stale handle", function() return r:count() end)
  -- one writer per file
  local w = pcap.writer(args.dir .. "/one.pcap")
  try("second writer of a file", pcap.writer, args.dir .. "/one.pcap")
  w:close()
  try("two writers of /dev/null", function()
    local a, b = pcap.writer("/dev/null"), pcap.writer("/dev/null")
    return a:close() + b:close()
  end)
  -- a task's own pool: its bursts stay on its lcore
  local pool = surge.wait(surge.launch("own_pool"))
  try("burst from a task's pool in master", function() return pool:burst(8) end)
  try("vdev twice", surge.vdev, "net_ring5")
  try("vdev twice", surge.vdev, "net_ring5")
  try("vdev unknown driver", surge.vdev, "net_bogus7")
end

function filler(q, r, pool)
  local b = pool:burst(8)
  while surge.running() do
    if r:fill(b) > 0 then q:send(b) end
  end
  b:free()
end

function own_pool()
  local p = surge.pool{ size = 255 }
  local b = p:burst(8)
  b:alloc()
  b:free()
  return p
end
