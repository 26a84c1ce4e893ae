-- A hook's handle is valid during its call only (issue 31 item 5): one
-- kept and used after the hook returned acted on whatever connection then
-- held its event's place (a server counted resets, a client completions
-- that did not happen). Now each of its methods is one error at the
-- user's line, and nothing is counted. A surge client and server on
-- net_ring0 (port 0 of `surge test`, its own loopback).
local surge = require("surge")
local conn = require("surge.conn")
local testrun = require("surge.vm.testrun")
local errors, at = testrun.errors, testrun.at

local T = {}

local SRV, CLI = "10.0.0.1", "10.0.0.2"

function T.kept_handle_is_an_error()
  local ring = surge.port(0, { rxq = 1, txq = 1 })
  local rxq, txq = ring:rxq(0), ring:txq(0)
  local pool = surge.pool{ template = surge.proto.tcp{ src = CLI, dst = SRV, size = 60 },
                           data_room = conn.data_room(), size = 8191 }
  local rx, tx = pool:burst(64), pool:burst(64)
  local s_kept, c_kept, inside, own, own_calls
  local sv = conn.server{ addr = SRV, capacity = 64, time_wait = 0, slots = 1, prefix = "hk1s",
    on_request = function(c)
      -- its own engine's handle from the call before, kept, used in this
      -- call (another connection's, or this one's next request): an error
      if s_kept and own == nil then
        own_calls = 1
        own = select(2, pcall(s_kept.close, s_kept, "rst"))
      end
      s_kept = c
    end }
  local cl = conn.client{ src = CLI, server = SRV, capacity = 64, time_wait = 0, peer_mac = "02:00:00:00:00:01",
    prefix = "hk1c", connections = 40, concurrency = 8, requests = 3,
    on_response = function(c)
      c_kept = c
      -- another engine's handle, kept, used inside this call: still an error
      if s_kept and not inside then inside = select(2, pcall(s_kept.close, s_kept, "rst")) end
    end }
  -- the polls: halfway, then the kept handles are used between polls
  local function round()
    if cl:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
    if sv:poll(rxq, txq, rx, tx) > 0 then txq:send(rx) end
  end
  for _ = 1, 20 do round() end
  assert(s_kept and c_kept, "the hooks ran")
  assert(tostring(inside):find("connection:close: the connection's handle is valid during its hook's call only",
    1, true), tostring(inside))
  assert(own_calls == 1 and tostring(own):find("connection:close: the connection's handle is valid during its " ..
    "hook's call only", 1, true), tostring(own))
  local msg = "the connection's handle is valid during its hook's call only (kept after the hook returned)"
  errors(at("connection:close: " .. msg), function() s_kept:close("rst") end)
  errors(at("connection:send: " .. msg), function() s_kept:send(0) end)
  errors(at("connection:path: " .. msg), function() return s_kept:path() end)
  errors(at("connection:set: " .. msg), function() s_kept:set(1, 5) end)
  errors(at("connection:close: " .. msg), function() c_kept:close() end)
  errors(at("connection:id: " .. msg), function() return c_kept:id() end)
  errors(at("connection:status: " .. msg), function() return c_kept:status() end)
  for _ = 1, 100000 do
    round()
    if cl:done() and cl:stats().concurrent == 0 and sv:stats().concurrent == 0 then break end
  end
  local c, s = cl:stats(), sv:stats()
  -- nothing the kept handles tried happened: every connection its 3 answers
  assert(c.completed == 40 and c.failed == 0 and c.responses == 120, conn.format(cl:summary()))
  assert(s.rst_sent == 0 and s.completed == 40 and s.ended == s.attempted, conn.format(sv:summary()))
  while rxq:recv(rx) > 0 do rx:free() end
end

return T
