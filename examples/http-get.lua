-- http-get.lua - HTTP/1.1 GETs, each on a new TCP connection, from surge's
-- connection engine (docs/connections.md) to a real server.
--
--   surge run --vdev net_af_packet0,iface=veth0 examples/http-get.lua \
--     --src 10.1.0.2 --server 10.1.0.1 --connections 10000 --rate 2000
--   ... --gateway 10.0.0.1        # the server is behind a router: ARP for it instead
--   ... --path /a,/x --mix /b,/c --status 0
--        # per-connection hooks (docs/connections.md): connection i GETs
--        # /a or /x (i even, odd), then /b on the same connection when that
--        # answer was a 200, /c when it was not
--   ... --src 10.1.0.2-10.1.0.65  # 64 source addresses: up to 64 x 64 512 connections at once
--
-- A task on a worker lcore resolves the server's (or the gateway's) MAC by
-- ARP (NDP for IPv6 addresses), then opens --connections connections at --rate per second (at most
-- --concurrency at once), sends --requests GETs on each, checks each
-- response's status and Content-Length, and closes with a FIN (or an RST:
-- --close rst). It answers ARP (NDP) for every --src address meanwhile. The counters
-- (client.attempted, client.completed, ...) show in the stats lines, the
-- summary and --output, with the response times' percentiles under
-- scenarios.tcp_client. Exit 0 when every connection completed.
local surge = require("surge")

function configure(p)
  p:description("HTTP/1.1 GETs on new TCP connections (surge's connection engine) against a server.")
  p:option("--dev", "DPDK port number or device name", "0")
  p:option("--src", "surge's address (IPv4 or IPv6), or a range A-B of them (opened from in turn)", "10.1.0.2")
  p:option("--server", "the server's address (of --src's family)", "10.1.0.1")
  p:option("--port", "the server's TCP port", 80, "integer 1..65535")
  p:option("--gateway", "next hop to the server (default: the server, on the link)", "")
  p:option("--mac", "surge's MAC address (default: the port's)", "")
  p:option("--connections", "connections to open (0: until the run stops)", 1000, "integer >=0")
  p:option("--rate", "connections opened per second (0: as fast as --concurrency allows)", 1000, "number >=0")
  p:option("--pattern", "how opens are spaced: constant or poisson", "constant")
  p:option("--concurrency", "most connections open at once (at most 64512 per --src address)", 256,
    "integer 1..16777216")
  p:option("--requests", "GETs per connection (HTTP/1.1 keep-alive)", 1, "integer 1..65535")
  p:option("--think", "seconds between a response and the next GET on a connection", 0, "number 0..600")
  p:option("--path", "the path requested; A,B,...: connection i requests the (i mod n)th", "/")
  p:option("--mix", "OK,ELSE: after the first response, one more GET on the connection: OK's path "
    .. "when its status was 200, ELSE's when not (needs --status 0)", "")
  p:option("--close", "how surge closes: fin or rst", "fin")
  p:option("--status", "the status every response must have (0: any)", 200, "integer 0..999")
  p:option("--sport", "first source port (connection i uses sport + i)", 1024, "integer 1..65535")
  p:option("--mss", "largest segment sent (0: 1460 for IPv4, 1440 for IPv6)", 0, "integer 0..9000")
  p:option("--rto", "retransmission timeout, seconds (fixed)", 0.2, "number 0.001..60")
  p:option("--retries", "timeouts without progress before a connection fails", 5, "integer 1..255")
  p:option("--time-wait", "TIME_WAIT, seconds", 0.5, "number 0..600")
  p:option("--resolve-timeout", "seconds to wait for the ARP reply", 2, "number >0")
  p:check(function(o)
    if o.mss ~= 0 and o.mss < 64 then return ("--mss %d: 0 (by family) or 64..9000"):format(o.mss) end
    local ok, list, v6 = pcall(require("surge.proto.addrs").list, o.src, "--src", 4096)
    if not ok then return (tostring(list):gsub("^.-%-%-src", "--src")) end
    for _, k in ipairs({ "server", "gateway" }) do
      local a = o[k]
      if a ~= "" then
        local six = a:find(":", 1, true) ~= nil
        local valid = six and pcall(surge.proto.ip6.addr, a, k, 1) or
                   (not six and a:match("^%d+%.%d+%.%d+%.%d+$") and pcall(surge.proto.ip4.addr, a, k, 1))
        if not valid then return ("--%s: '%s' is not an IPv4 or IPv6 address"):format(k, a) end
        if six ~= v6 then return ("--%s %s is not of the family of --src %s"):format(k, a, o.src) end
      end
    end
    if o.close ~= "fin" and o.close ~= "rst" then return ("--close %s: fin or rst"):format(o.close) end
    if o.pattern ~= "constant" and o.pattern ~= "poisson" then
      return ("--pattern %s: constant or poisson"):format(o.pattern)
    end
    if o.concurrency > #list * (65536 - o.sport) then
      return ("--concurrency %d: at most %d with --sport %d and %d --src address%s"):format(o.concurrency,
        #list * (65536 - o.sport), o.sport, #list, #list == 1 and "" or "es")
    end
    for _, k in ipairs({ "path", "mix" }) do
      for path in (o[k] .. ","):gmatch("([^,]*),") do
        if path:sub(1, 1) ~= "/" or path:find("[%s%c]") then
          if k == "path" or o.mix ~= "" then
            return ("--%s %s: paths that start with / and hold no spaces"):format(k, o[k])
          end
        end
      end
    end
    if o.mix ~= "" then
      if not o.mix:match("^[^,]+,[^,]+$") then return ("--mix %s: two paths, OK,ELSE"):format(o.mix) end
      if o.status ~= 0 then return ("--mix: the first answers may be of any status: --status 0 (not %d)"):format(o.status) end
    end
    return nil
  end)
end

function master(args)
  local conn = require("surge.conn")
  local port = surge.port(tonumber(args.dev) or args.dev, { rxq = 1, txq = 1 })
  local mac = args.mac ~= "" and args.mac or port:info().mac
  local r = surge.wait(surge.launch("client", port:rxq(0), port:txq(0), args, mac))
  if r == nil then return 1 end
  if r.unresolved then          -- stopped (--duration, Ctrl-C) before the ARP reply
    print("client: stopped before " .. r.unresolved .. " answered ARP")
    return 0
  end
  print(conn.format(r))
  if r.mix then print(("mix: %d GETs of %s (after a 200), %d of %s"):format(r.mix.ok, r.mix.ok_path, r.mix.other,
    r.mix.other_path)) end
  r.mix = nil                   -- (printed above; not a field of --output's schema)
  surge.results.add("tcp_client", r)
  -- a run cut short (--duration, Ctrl-C) succeeds when nothing failed
  local all = args.connections == 0 or r.completed == args.connections or not surge.running()
  return (all and r.failed == 0) and 0 or 1
end

function client(rxq, txq, args, mac)
  local conn = require("surge.conn")
  local neigh = require("surge.dut.neigh")
  local v6 = args.src:find(":", 1, true) ~= nil
  local first = args.src:match("^%s*([^%s]-)%s*%-") or args.src        -- a range's first address
  local t = surge.proto.tcp{ src = first, dst = args.server, sport = args.sport, dport = args.port, size = 74 }
  local pool = surge.pool{ template = t, data_room = conn.data_room(args.mss), size = 8191 }
  local n = neigh.new({ { rxq = rxq, txq = txq, mac = mac, ip4 = not v6 and args.src or nil,
                          ip6 = v6 and args.src or nil } }, pool):set_rx_burst(pool:burst(32))
  local hop = args.gateway ~= "" and args.gateway or args.server
  local peer_mac, err = n:resolve(1, hop, args.resolve_timeout)
  if not peer_mac then
    if not surge.running() then return { unresolved = hop } end
    error(err, 0)
  end
  -- the paths as request templates: the first is the `request` (template
  -- 0), the others and --mix's follow it (templates 1..)
  local host = v6 and "[" .. args.server .. "]" or args.server
  local paths, templates = {}, {}
  for path in (args.path .. ","):gmatch("([^,]+),") do paths[#paths + 1] = path end
  for i = 2, #paths do templates[#templates + 1] = conn.http_get{ host = host, path = paths[i] } end
  local mix = args.mix ~= "" and { ok = 0, other = 0 } or nil
  local hooks = {}
  if #paths > 1 then
    local npaths = #paths
    hooks.on_established = function(c)
      local k = c:id() % npaths
      if k > 0 then c:send(k) end         -- template k: paths[k + 1]
    end
  end
  if mix then
    mix.ok_path, mix.other_path = args.mix:match("^([^,]+),([^,]+)$")
    templates[#templates + 1] = conn.http_get{ host = host, path = mix.ok_path }
    templates[#templates + 1] = conn.http_get{ host = host, path = mix.other_path }
    local ok_t, other_t = #templates - 1, #templates
    hooks.on_response = function(c)
      if c:requests() ~= 1 then return end      -- the engine's course: the next of --requests, or the close
      if c:status() == 200 then mix.ok = mix.ok + 1 c:send(ok_t) else mix.other = mix.other + 1 c:send(other_t) end
    end
  end
  local e = conn.client{ src = args.src, server = args.server, port = args.port, sport = args.sport,
    mac = mac, peer_mac = peer_mac, connections = args.connections, concurrency = args.concurrency,
    rate = args.rate > 0 and { rate = args.rate, pattern = args.pattern } or 0, requests = args.requests,
    think = args.think, request = conn.http_get{ host = host, path = paths[1] },
    templates = next(hooks) and templates or nil, on_established = hooks.on_established,
    on_response = hooks.on_response,
    expect = { http = args.status }, close = args.close, mss = args.mss > 0 and args.mss or nil, rto = args.rto,
    retries = args.retries, time_wait = args.time_wait }
  local t0 = surge.tsc()
  e:run{ rxq = rxq, txq = txq, pool = pool, neigh = n }
  local r = e:summary(tonumber(surge.tsc() - t0) / tonumber(surge.tsc_hz()))
  r.mix = mix
  return r
end
