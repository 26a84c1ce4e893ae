-- surge.conn.http - HTTP/1.1 templates for the connection engine: a GET
-- request and a 200 response with a body of a given size.
--
--   conn.http_get{ host = "10.0.0.1", path = "/", close = false }
--   conn.http_response{ body = 1024 }          -- 1024 bytes of 'x' ...
--   conn.http_response{ body = "hello\n" }     -- ... or the body itself
local check = require("surge.check")

local M = {}

-- The body of N bytes http_response makes: a repeating pattern, so a byte
-- out of place shows in a comparison (the tests download it with curl).
function M.body(n)
  check.expect(n, "integer 0..1000000", "surge.conn.http.body", "n")
  local line = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\n"
  local reps = math.floor(n / #line)
  return line:rep(reps) .. line:sub(1, n - reps * #line)
end

-- A header's value goes into the template as it is: a CR or LF (or another
-- control character but tab) in it would end the header there and start
-- another, or end the head and start a second request (a host of
-- "a\r\nX: y", a content_type of "text\r\n\r\nGET /"). Every value a
-- caller gives is checked here, one place.
local function value(v, fn, param)
  if v:find("[%z\1-\8\10-\31\127]") then
    check.raise(("%s: %s %s: a header's value holds no CR, LF or other control character"):format(fn, param,
      check.show(v)))
  end
  return v
end

-- headers: "Name: value" lines, ended by "\r\n" or "\n" (the last one's end
-- optional), each written with CRLF; a line that is no header (a blank line
-- would end the head early, one without a colon is not HTTP) is refused.
local function header_lines(text, fn)
  local out = {}
  for line in (text:gsub("\r?\n$", "") .. "\n"):gmatch("(.-)\r?\n") do
    if not line:match("^[%w!#$%%&'*+%-.^_`|~]+:") then
      check.raise(("%s: headers: %s is not a header line (Name: value)"):format(fn, check.show(line)))
    end
    out[#out + 1] = value(line, fn, "headers") .. "\r\n"
  end
  return table.concat(out)
end

function M.get(o)
  local fn = "surge.conn.http_get"
  o = check.options(o or {}, { host = 1, path = 1, close = 1, headers = 1 }, fn)
  local host = value(check.expect(o.host, "string?", fn, "host") or "localhost", fn, "host")
  local path = check.expect(o.path, "string?", "surge.conn.http_get", "path") or "/"
  if path:find("[%s%c]") or path:sub(1, 1) ~= "/" then
    check.raise(("surge.conn.http_get: path %s: starts with / and holds no spaces"):format(check.show(path)))
  end
  local extra = check.expect(o.headers, "string?", fn, "headers")
  extra = extra and extra ~= "" and header_lines(extra, fn) or ""
  return ("GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: surge\r\nAccept: */*\r\n%s%s\r\n"):format(path, host,
    o.close and "Connection: close\r\n" or "", extra)
end

function M.response(o)
  o = check.options(o or {}, { body = 1, status = 1, content_type = 1, keepalive = 1 }, "surge.conn.http_response")
  local body = o.body or 0
  if type(body) == "number" then
    check.expect(body, "integer 0..1000000", "surge.conn.http_response", "body (bytes)")
    body = M.body(body)
  end
  check.expect(body, "string", "surge.conn.http_response", "body")
  local status = check.expect(o.status, "integer? 100..999", "surge.conn.http_response", "status") or 200
  local reason = ({ [200] = "OK", [404] = "Not Found", [500] = "Internal Server Error" })[status] or "Status"
  local ctype = value(check.expect(o.content_type, "string?", "surge.conn.http_response", "content_type")
    or "text/plain", "surge.conn.http_response", "content_type")
  -- "Connection: keep-alive" tells an HTTP/1.0 client (ab -k) the
  -- connection stays; the engine closes it where the request asked
  local keep = check.expect(o.keepalive, "boolean?", "surge.conn.http_response", "keepalive") ~= false
  return ("HTTP/1.1 %d %s\r\nServer: surge\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n%s"):format(status,
    reason, ctype, #body, keep and "Connection: keep-alive\r\n" or "", body)
end

return M
