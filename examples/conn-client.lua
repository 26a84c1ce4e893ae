-- conn-client.lua - a keep-alive HTTP client on surge.conn with its own
-- loop: the port's MAC, the pool, the server's MAC by ARP, the engine, the
-- poll loop (docs/connections.md, "Your own client, step by step").
--
--   surge run --vdev net_af_packet0,iface=veth0 examples/conn-client.lua \
--     --src 10.1.0.2 --server 10.1.0.1 --connections 10 --requests 5
local surge = require("surge")
local conn = require("surge.conn")
local neigh = require("surge.dut.neigh")
local view = require("surge.proto.view")

function configure(p)
  p:description("A keep-alive HTTP client with its own loop on surge.conn (docs/connections.md).")
  p:option("--src", "surge's IPv4 address", "10.1.0.2")
  p:option("--server", "the server's IPv4 address, on the link", "10.1.0.1")
  p:option("--connections", "connections to open", 10, "integer 1..64512")
  p:option("--requests", "GETs on each connection (keep-alive)", 5, "integer 1..65535")
end

function master(args)
  local port = surge.port(0, { rxq = 1, txq = 1 })
  local mac = port:info().mac                      -- 1. the port's own MAC
  local r = surge.wait(surge.launch("client", port:rxq(0), port:txq(0), mac, args))
  if r == nil or r.stopped then return 0 end       -- --duration or Ctrl-C before the ARP reply
  print(conn.format(r))
  local all = r.completed == args.connections or not surge.running()
  return (all and r.failed == 0) and 0 or 1
end

function client(rxq, txq, mac, args)
  -- 2. the pool: segments of conn.data_room() bytes, the layout of a TCP frame
  local pool = surge.pool{ template = surge.proto.tcp{ src = args.src, dst = args.server },
                           data_room = conn.data_room(), size = 4095 }
  -- 3. the server's MAC, by ARP; the responder answers the server's ARP for --src too
  local arp = neigh.new({ { rxq = rxq, txq = txq, mac = mac, ip4 = args.src } }, pool)
  arp:set_rx_burst(pool:burst(32))
  local peer_mac, err = arp:resolve(1, args.server, 2)
  if not peer_mac then
    if not surge.running() then return { stopped = true } end
    error(err, 0)
  end
  -- 4. the engine: `requests` GETs on each connection, one after the other
  local e = conn.client{ src = args.src, server = args.server, mac = mac, peer_mac = peer_mac,
    connections = args.connections, requests = args.requests, request = conn.http_get{ host = args.server } }
  -- 5. the loop: what the engine does not take (ARP) is left in rx for the responder
  local rx, tx, v = pool:burst(32), pool:burst(32), view.new()
  local t0 = surge.tsc()
  while surge.running() and not e:done() do
    local n = e:poll(rxq, txq, rx, tx)
    for i = 0, n - 1 do
      if view.parse(v, rx.data[i], rx.len[i]) then arp:handle(1, rx.data[i], rx.len[i], v) end
    end
    rx:free()
  end
  if not e:done() then e:abort(txq, tx) end        -- cut short: an RST for what is still open
  return e:summary(tonumber(surge.tsc() - t0) / tonumber(surge.tsc_hz()))
end
