-- surge.conn from Lua (issue 21 item 2): the HTTP templates are what a
-- server and a client expect, misuse is one error at this file's line
-- naming the option, and an engine's handle is strict.
local surge = require "surge"
local conn = require "surge.conn"
local testrun = require "surge.vm.testrun"
local errors, at = testrun.errors, testrun.at

local T = {}

function T.http_templates()
  local g = conn.http_get{ host = "10.1.0.1", path = "/x" }
  assert(g == "GET /x HTTP/1.1\r\nHost: 10.1.0.1\r\nUser-Agent: surge\r\nAccept: */*\r\n\r\n", g)
  local r = conn.http_response{ body = 100 }
  local head, body = r:match("^(.-\r\n\r\n)(.*)$")
  assert(head:find("HTTP/1.1 200 OK\r\n", 1, true) == 1, head)
  assert(head:find("Content-Length: 100\r\n", 1, true), head)
  assert(#body == 100 and body:sub(1, 10) == "0123456789", body)
  assert(conn.http_response{ body = "hi", status = 404 }:find("^HTTP/1.1 404 Not Found\r\n.*\r\n\r\nhi$"))
end

function T.client_and_server_options()
  errors(at("surge.conn.client: src: expected a string, got nil"), function() conn.client{ server = "10.0.0.1" } end)
  errors(at("surge.conn.client: close = \"half\": \"fin\" or \"rst\"", 1),
    function() conn.client{ src = "10.0.0.2", server = "10.0.0.1", close = "half" } end)
  errors(at("surge.conn.client: capacity 65000 from sport 1024: connection i uses port sport + i, so at most 64512", 1),
    function() conn.client{ src = "10.0.0.2", server = "10.0.0.1", capacity = 65000 } end)
  errors(at("surge.conn.client: concurrency 20 over the capacity 10", 1),
    function() conn.client{ src = "10.0.0.2", server = "10.0.0.1", capacity = 10, concurrency = 20 } end)
  errors(at("surge.conn.client: rate \"1gbit\": connections per second, a plain number (or \"Npps\")", 1),
    function() conn.client{ src = "10.0.0.2", server = "10.0.0.1", rate = "1gbit" } end)
  errors(at("surge.conn.server: response is 0 bytes: 1..1048576", 1),
    function() conn.server{ addr = "10.0.0.1", response = "" } end)
  errors(at("surge.conn.server: expect.length: expected an integer in 1..4294967295, got 0", 1),
    function() conn.server{ addr = "10.0.0.1", expect = { length = 0 } } end)
  errors("unknown option", function() conn.server{ addr = "10.0.0.1", bogus = 1 } end)
end

function T.engine_handle()
  local e = conn.server{ addr = "10.0.0.1", capacity = 8, prefix = "t_server" }
  local st = e:stats()
  assert(st.attempted == 0 and st.concurrent == 0 and st.failed == 0)
  assert(e:percentiles("response") == nil, "no sample yet")
  errors(at("engine:percentiles: \"p99\": \"connect\" or \"response\""), function() e:percentiles("p99") end)
  errors(at("connection engine has no field 'nosuch'"), function() return e.nosuch end)
  local c = conn.client{ src = "10.0.0.2", server = "10.0.0.1", connections = 3, prefix = "t_client" }
  assert(not c:done(), "nothing opened yet")
  local t = c:template()
  assert(#t.bytes == 60)
end

return T
