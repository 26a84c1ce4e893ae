-- otg_emit.lua - sends the first packets of an OTG flow (JSON as snappi
-- sends it), compiled by surge.otg.packet, for tshark to check
-- (tests/e2e/test_otg_packet_tshark.sh).
--
--   surge run --no-huge --vdev net_pcap0,tx_pcap=x.pcap tests/e2e/proto/otg_emit.lua --stack ipv4-udp
--
-- Packets come from the template pool, with the compiled surge.flow and
-- surge.size applied to the burst: the data path an OTG flow runs on.
-- The values are repeated, written out, in the test's expectations.
local surge = require("surge")
local json = require("surge.results.json")
local packet = require("surge.otg.packet")

local function v(x) return ('{"choice":"value","value":%s}'):format(type(x) == "string" and ('"' .. x .. '"') or x) end
local function vals(list) return ('{"choice":"values","values":%s}'):format(json.encode(json.array(list))) end
local function inc(start, step, count, down)
  local q = type(start) == "string" and '"' or ""
  return ('{"choice":"%s","%s":{"start":%s%s%s,"step":%s%s%s,"count":%d}}'):format(down and "decrement" or "increment",
    down and "decrement" or "increment", q, start, q, q, step, q, count)
end
local function h(name, body) return ('{"choice":"%s","%s":{%s}}'):format(name, name, body or "") end
local ETH = h("ethernet", '"src":' .. v("02:00:00:00:00:0a") .. ',"dst":' .. v("02:00:00:00:00:0b"))
local IP4 = h("ipv4", '"src":' .. v("192.0.2.1") .. ',"dst":' .. v("198.51.100.2") .. ',"time_to_live":' .. v(33))
local IP6 = h("ipv6", '"src":' .. v("2001:db8::a") .. ',"dst":' .. v("2001:db8:0:1::2"))
local function udp(s, d) return h("udp", '"src_port":' .. s .. ',"dst_port":' .. d) end
local function size(n) return ('{"choice":"fixed","fixed":%d}'):format(n) end

local stacks = {
  ["ipv4-udp"] = { ETH, h("vlan", '"priority":' .. v(3) .. ',"id":' .. inc(100, 1, 3)),
    h("ipv4", '"priority":{"choice":"dscp","dscp":{"phb":' .. v(46) .. ',"ecn":' .. vals({ 0, 1 }) .. '}},' ..
      '"src":' .. v("192.0.2.1") .. ',"dst":' .. inc("198.51.100.2", "0.0.0.1", 4) .. ',"time_to_live":' ..
      inc(33, 1, 4, true) .. ',"identification":' .. v(7)),
    udp(vals({ 40000, 40001 }), v(50000)), size = size(128) },
  ["ipv6-tcp"] = { ETH, h("ipv6", '"traffic_class":' .. vals({ 0x28, 0xb8 }) .. ',"flow_label":' .. inc(0x12345, 1, 4) ..
      ',"hop_limit":' .. v(33) .. ',"src":' .. v("2001:db8::a") .. ',"dst":' .. inc("2001:db8:0:1::2", "::1", 4)),
    h("tcp", '"src_port":' .. v(1234) .. ',"dst_port":' .. v(80) .. ',"seq_num":' .. inc(1000000, 1000, 4) ..
      ',"ack_num":' .. v(777) .. ',"ctl_syn":' .. v(1) .. ',"ctl_ack":' .. vals({ 1, 0 }) .. ',"window":' .. v(8192)),
    size = size(124) },
  pause = { h("ethernetpause", '"src":' .. v("02:00:00:00:00:0a") .. ',"time":' .. inc(0, 100, 4)), size = size(64) },
  pfc = { h("pfcpause", '"src":' .. v("02:00:00:00:00:0a") .. ',"class_enable_vector":' .. v(0x88) ..
      ',"pause_class_3":' .. vals({ 1, 2 }) .. ',"pause_class_7":' .. v(0xffff)), size = size(64) },
  arp = { h("ethernet", '"src":' .. v("02:00:00:00:00:0a") .. ',"dst":' .. v("ff:ff:ff:ff:ff:ff")),
    h("arp", '"operation":' .. v(2) .. ',"sender_hardware_addr":' .. v("02:00:00:00:00:0a") ..
      ',"sender_protocol_addr":' .. v("192.0.2.1") .. ',"target_protocol_addr":' .. inc("192.0.2.10", "0.0.0.1", 4)),
    size = size(64) },
  icmp = { ETH, IP4, '{"choice":"icmp","icmp":{"choice":"echo","echo":{"identifier":' .. v(0x1234) ..
      ',"sequence_number":' .. inc(1, 1, 4) .. '}}}', size = size(100) },
  icmpv6 = { ETH, IP6, '{"choice":"icmpv6","icmpv6":{"echo":{"identifier":' .. vals({ 77, 78 }) ..
      ',"sequence_number":' .. inc(1, 1, 4) .. '}}}', size = size(122) },
  gre = { ETH, h("ipv4", '"src":' .. v("192.0.2.1") .. ',"dst":' .. v("198.51.100.2") .. ',"identification":' ..
      inc(1, 1, 4)), h("gre", '"checksum_present":' .. v(1) .. ',"protocol":' .. v(0x86dd)), IP6,
    udp(v(40001), v(40002)), size = size(128) },
  gtpv1 = { ETH, IP4, udp(v(2152), v(2152)), h("gtpv1", '"message_type":' .. v(255) .. ',"teid":' .. inc(0x1000, 1, 4) ..
      ',"s_flag":' .. v(1) .. ',"squence_number":' .. inc(7, 1, 4)),
    h("ipv4", '"src":' .. vals({ "10.9.0.1", "10.9.0.3" }) .. ',"dst":' .. v("10.9.0.2")), udp(v(5), v(6)),
    size = size(128) },
  gtpv2 = { ETH, IP4, udp(v(2123), v(2123)), h("gtpv2", '"teid_flag":' .. v(1) .. ',"message_type":' .. v(32) ..
      ',"teid":' .. v(5) .. ',"sequence_number":' .. inc(0x010203, 1, 4)),
    -- 58 bytes on the wire end the UDP payload with the header: zeros after it would be IEs to tshark
    size = size(58) },
  -- tshark decodes PPP after GRE protocol 0x880b (not after that ethertype)
  ppp = { ETH, IP4, h("gre", '"protocol":' .. v(0x880b)), h("ppp"), h("ipv4", '"src":' .. v("10.0.0.1") .. ',"dst":' .. inc("10.0.0.2", "0.0.0.1", 4)),
    udp(v(1), v(2)), size = size(100) },
  igmpv1 = { ETH, h("ipv4", '"src":' .. v("192.0.2.1") .. ',"dst":' .. v("224.0.0.1")),
    h("igmpv1", '"type":' .. v(2) .. ',"group_address":' .. inc("239.1.1.1", "0.0.0.1", 4)), size = size(64) },
  mpls = { ETH, h("mpls", '"label":' .. inc(100, 1, 4) .. ',"traffic_class":' .. v(3)),
    h("mpls", '"label":' .. v(200) .. ',"time_to_live":' .. v(32)), IP4, udp(v(40001), v(40002)), size = size(100) },
  vxlan = { ETH, IP4, udp(v(49152), v(4789)), h("vxlan", '"vni":' .. inc(42, 1, 4)),
    h("ethernet", '"src":' .. v("02:00:00:00:01:0a") .. ',"dst":' .. v("02:00:00:00:01:0b")),
    h("ipv4", '"src":' .. v("10.1.0.1") .. ',"dst":' .. v("10.1.0.2")), udp(vals({ 40001, 40002 }), v(40003)),
    size = size(132) },
  custom = { h("ethernet", '"src":' .. v("02:00:00:00:00:0a") .. ',"ether_type":' .. v(0x88b5)),
    h("custom", '"bytes":"de:ad be ef 01"'), size = size(64) },
  sizes = { ETH, IP4, udp(v(1), v(2)),
    size = '{"choice":"increment","increment":{"start":64,"end":67,"step":1}}' },
}

-- the flow as JSON text, decoded as the server decodes a request
local function flow_of(name)
  local s = stacks[name]
  if not s then
    local names = {}
    for k in pairs(stacks) do names[#names + 1] = k end
    table.sort(names)
    error(("--stack %s: one of %s"):format(tostring(name), table.concat(names, ", ")), 0)
  end
  local text = ('{"name":"%s","packet":[%s],"size":%s}'):format(name, table.concat(s, ","), s.size)
  return json.decode(text)
end

function configure(p)
  p:option("--stack", "the flow to send", "ipv4-udp")
  p:option("--count", "frames to send", 4, "integer")
  p:flag("--corrupt", "flip the last byte of every frame (checksums become bad)")
end

local function compile(args)
  local ok, c = pcall(packet.compile, flow_of(args.stack), "flows[0]")
  if not ok then error(type(c) == "table" and (c.path .. ": " .. c.message) or c, 0) end
  return c
end

function master(args)
  local c = compile(args)
  local t = c.template
  local port = surge.port(0, { txq = 1, rxq = 1 })
  local pool = surge.pool{ template = t, size = 255, cache = 0 }
  local b = pool:burst(args.count)
  b:alloc(args.count)
  if c.flow then c.flow:apply(b) end
  if type(c.size) == "table" then c.size:apply(b) end
  for i = 0, b.n - 1 do
    if args.corrupt then b.data[i][b.len[i] - 1] = 255 - b.data[i][b.len[i] - 1] end
  end
  local sent = port:txq(0):send(b)
  print(("otg_emit: %s: %d packets"):format(args.stack, sent))
  return sent == args.count and 0 or 1
end

-- surge show: the first frames as the flow writes them
function show(args)
  local c = compile(args)
  if c.flow then return c.flow:frames(args.count) end
  local out = {}
  for i = 1, args.count do out[i] = c.template.bytes end
  return out
end
