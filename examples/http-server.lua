-- http-server.lua - an HTTP/1.1 server on surge's connection engine
-- (docs/connections.md): every request (up to its blank line) gets a 200
-- with a body of --body bytes; connections stay open for more (keep-alive)
-- until the client closes.
--
--   surge run --duration 10 --vdev net_af_packet0,iface=veth0 examples/http-server.lua \
--     --addr 10.1.0.2 --body 1024
--   ab -n 1000 -c 8 http://10.1.0.2/          # from the other end
--
-- --routes /a=200:100,/b=404:0 answers by the request's path: /a a 200
-- with 100 bytes, /b a 404 with none, any other path the --body 200 (an
-- on_request hook choosing among response templates, docs/connections.md).
--
-- It answers ARP (NDP for an IPv6 --addr) for --addr. The counters (server.established,
-- server.requests, ...) show in the stats lines, the summary and --output
-- (scenarios.tcp_server). It serves until --seconds, --duration or Ctrl-C.
local surge = require("surge")

-- --routes' text as { paths = { [PATH] = k }, templates = { response k } };
-- raises with the option's message
local function routes_of(text)
  local r = { paths = {}, templates = {} }
  if text == "" then return r end
  for item in (text .. ","):gmatch("([^,]*),") do
    local path, status, body = item:match("^(/[^=%s?]*)=(%d+):(%d+)$")
    status, body = tonumber(status), tonumber(body)
    if not path or #path > 48 or status < 100 or status > 999 or body > 1000000 then
      error(("--routes: '%s': PATH=STATUS:BODY (a path of 1..48 bytes from /, status 100..999, body 0..1000000 "
        .. "bytes)"):format(item), 0)
    end
    if r.paths[path] then error(("--routes: '%s': the path %s twice"):format(item, path), 0) end
    r.templates[#r.templates + 1] = require("surge.conn").http_response{ status = status, body = body }
    r.paths[path] = #r.templates
  end
  if #r.templates > 63 then error(("--routes: %d paths, at most 63"):format(#r.templates), 0) end
  return r
end

function configure(p)
  p:description("An HTTP/1.1 server (surge's connection engine): 200 with a body of --body bytes.")
  p:option("--dev", "DPDK port number or device name", "0")
  p:option("--addr", "the server's address (IPv4 or IPv6)", "10.1.0.2")
  p:option("--port", "the TCP port it listens on", 80, "integer 1..65535")
  p:option("--body", "bytes of the response's body", 64, "integer 0..1000000")
  p:option("--mac", "the server's MAC address (default: the port's)", "")
  p:option("--capacity", "most connections at once (SYNs past it are dropped and counted)", 65536,
    "integer 1..16777216")
  p:option("--requests", "requests answered before the server closes (0: until the client does)", 0,
    "integer 0..65535")
  p:option("--mss", "largest segment sent (0: 1460 for IPv4, 1440 for IPv6)", 0, "integer 0..9000")
  p:option("--seconds", "serve this long (0: until --duration or a signal)", 0, "number >=0")
  p:option("--routes", "responses by path: PATH=STATUS:BODY,... (e.g. /a=200:100,/b=404:0); others get --body", "")
  p:check(function(o)
    local ok, err = pcall(routes_of, o.routes)
    if not ok then return err end
    if o.mss ~= 0 and o.mss < 64 then return ("--mss %d: 0 (by family) or 64..9000"):format(o.mss) end
    local six = o.addr:find(":", 1, true) ~= nil
    local valid = six and pcall(surge.proto.ip6.addr, o.addr, "addr", 1) or
               (not six and o.addr:match("^%d+%.%d+%.%d+%.%d+$") and pcall(surge.proto.ip4.addr, o.addr, "addr", 1))
    if not valid then return ("--addr: '%s' is not an IPv4 or IPv6 address"):format(o.addr) end
    return nil
  end)
end

function master(args)
  local conn = require("surge.conn")
  local port = surge.port(tonumber(args.dev) or args.dev, { rxq = 1, txq = 1 })
  local mac = args.mac ~= "" and args.mac or port:info().mac
  local r = surge.wait(surge.launch("server", port:rxq(0), port:txq(0), args, mac))
  if r == nil then return 1 end
  print(conn.format(r))
  surge.results.add("tcp_server", r)
  return 0
end

function server(rxq, txq, args, mac)
  local conn = require("surge.conn")
  local neigh = require("surge.dut.neigh")
  local v6 = args.addr:find(":", 1, true) ~= nil
  local t = surge.proto.tcp{ src = args.addr, dst = args.addr, sport = args.port, dport = 1, size = 74 }
  local pool = surge.pool{ template = t, data_room = conn.data_room(args.mss), size = 8191 }
  local n = neigh.new({ { rxq = rxq, txq = txq, mac = mac, ip4 = not v6 and args.addr or nil,
                          ip6 = v6 and args.addr or nil } }, pool)
  local routes = routes_of(args.routes)
  local paths, on_request = routes.paths, nil
  if #routes.templates > 0 then
    on_request = function(c) c:send(paths[c:path()] or 0) end   -- 0: the --body 200
  end
  local e = conn.server{ addr = args.addr, port = args.port, mac = mac, capacity = args.capacity,
    requests = args.requests, mss = args.mss > 0 and args.mss or nil, response = conn.http_response{ body = args.body },
    templates = on_request and routes.templates or nil, on_request = on_request }
  local t0 = surge.tsc()
  e:run{ rxq = rxq, txq = txq, pool = pool, neigh = n, seconds = args.seconds > 0 and args.seconds or nil }
  return e:summary(tonumber(surge.tsc() - t0) / tonumber(surge.tsc_hz()))
end
