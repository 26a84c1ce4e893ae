-- otg/flows.lua - an OTG flow (checked by otg/model.lua) as surge runs it:
-- a plain-data spec (master compiles it at set_config, a port's task gets
-- it as its argument) and, from the spec, the template, the compiled
-- rewrite loop and the size: otg/packet.lua reads the flow's packet and
-- size (every header of the model it builds) into a surge.proto stack, a
-- surge.flow and a surge.size, the same data path as a script's flow.
--
-- Per-flow receive counting: a flow with metrics.enable carries TAG_LEN
-- bytes at the start of its payload, right after its headers: "SOTG" and
-- the flow's number; with latency or timestamps on, a latency probe of
-- surge's (surge.latency: "SRGP", a sequence number, the TSC stamped as the
-- driver takes the frame) right after them. They are the payload
-- otg/packet.lua puts after the headers, so the checksums cover them, and
-- at a fixed offset from the frame's start, so a size that varies (the end
-- of the frame moves) keeps them. The receiver (otg/task.lua) looks for
-- the tag at each header length the config's flows have, whatever the
-- headers. (surge.dut's measuring receiver keys flows on the UDP source
-- port, which an OTG flow sets itself, and reads only UDP: it cannot tell
-- OTG's flows apart; docs/otg.md.)
local packet = require("surge.otg.packet")
local devices = require("surge.otg.devices")

local M = { TAG = "SOTG", TAG_LEN = 6, PROBE_LEN = 16, FCS = 4, MAX_FLOWS = 65535, TAG_BITS_MAX = 12,
            TAG_SLOTS_MAX = 2 ^ 20 }

local function fail(path, fmt, ...) error({ path = path, msg = fmt:format(...) }, 0) end

-- packet.compile, its refusal as this module's ({ path, msg }).
local function compile_packet(f, path, payload, dst_mac)
  local ok, c = pcall(packet.compile, { packet = f.packet, size = f.size }, path, { payload = payload,
    dst_mac = dst_mac })
  if not ok then
    if type(c) == "table" then error({ path = c.path, msg = c.message }, 0) end
    error(c, 0)
  end
  return c
end

-- The duration's pieces: count (packets, -1: no end), seconds (nil: no
-- end), burst (packets a burst, nil: none), delay and ibg ({ unit, value,
-- path }: otg/traffic.lua makes them seconds at the port's speed).
local function duration(spec, d, path)
  local o = d[d.choice]
  spec.count = -1
  if d.choice == "fixed_packets" then spec.count = o.packets
  elseif d.choice == "fixed_seconds" then spec.seconds = o.seconds
  elseif d.choice == "burst" then
    spec.burst = o.packets
    if o.bursts > 0 then spec.count = o.bursts * o.packets end
    local g = o.inter_burst_gap
    spec.ibg = { unit = g.choice, value = g[g.choice], path = path .. ".duration.burst.inter_burst_gap." .. g.choice }
  end
  if o.delay then
    spec.delay = { unit = o.delay.choice, value = o.delay[o.delay.choice],
                   path = ("%s.duration.%s.delay.%s"):format(path, d.choice, o.delay.choice) }
  end
end

-- Headers whose checksum covers what follows them. surge's probe keeps one
-- such checksum valid as it writes the probe (core/dataplane/probe.c): a
-- UDP or TCP header right after the frame's first IP header (the pool's
-- layout, surge.pool); any other over the probe would be wrong once the
-- TSC is stamped. Returns the layer name of the first such other, or nil.
local COVERS = { udp = true, tcp = true, icmp = true, icmp6 = true, igmp = true }

local function probe_unkept(layers)
  local from = #layers + 1
  for i, l in ipairs(layers) do
    if l.name == "ip4" or l.name == "ip6" then
      local nxt = layers[i + 1]
      from = (nxt and (nxt.name == "udp" or nxt.name == "tcp")) and i + 2 or i + 1
      break
    end
  end
  for i = from, #layers do if COVERS[layers[i].name] then return layers[i].name end end
  return nil
end

-- A pattern of one value per endpoint pair (their order: the flow's
-- frames go to pair 1, 2, ..., 1, ...): a value, or values when they differ.
local function per_pair(vals)
  for i = 2, #vals do
    if vals[i] ~= vals[1] then return { choice = "values", values = vals } end
  end
  return { choice = "value", value = vals[1] }
end

-- A copy of packet (the flow's headers) with fields of the first header of
-- each choice filled where the flow leaves them unset: fills, choice ->
-- field -> pattern (the ethernet dst also where it is auto).
local function fill_first(pkt, fills)
  local out = setmetatable({}, getmetatable(pkt))
  local done = {}
  for i, h in ipairs(pkt) do
    out[i] = h
    local ch = type(h) == "table" and h.choice
    if fills[ch] and not done[ch] and type(h[ch]) == "table" then
      done[ch] = true
      local hdr = {}
      for k, v in pairs(h[ch]) do hdr[k] = v end
      for k, v in pairs(fills[ch]) do
        local was = hdr[k]
        if was == nil or (ch == "ethernet" and k == "dst" and type(was) == "table" and was.choice == "auto") then
          hdr[k] = v
        end
      end
      out[i] = { choice = ch, [ch] = hdr }
    end
  end
  return out
end

-- packet with the fields the flow leaves unset taken from its endpoint
-- pairs (ends: { tx, rx } otg/devices.lua entries): the first ethernet's
-- src, the first ipv4's (or ipv6's) src and dst. Each field takes the
-- pairs' values in turn, so that frame i goes from pair i's tx to its rx
-- (every field cycles on its own, and these have as many values as
-- pairs). (The model's patterns for the addresses have no auto: absent is
-- what a client that sets nothing sends.)
local function with_endpoints(pkt, ends)
  local function each(fn)
    local vals = {}
    for i, e in ipairs(ends) do vals[i] = fn(e) end
    return per_pair(vals)
  end
  local ip = { src = each(function(e) return e.tx.addr end), dst = each(function(e) return e.rx.addr end) }
  local kind = ends[1].tx.kind
  return fill_first(pkt, { ethernet = { src = each(function(e) return e.tx.mac end) },
                           ipv4 = kind == 4 and ip or nil, ipv6 = kind == 6 and ip or nil })
end

-- packet with the first ethernet's dst (unset or auto) the pairs'
-- destination MACs in turn (a flow of several pairs; a gateway's not
-- resolved yet, at set_config's check, the model's zero MAC as auto's).
local function with_dst(pkt, dst_macs)
  local macs = {}
  for i, m in ipairs(dst_macs) do macs[i] = m or "00:00:00:00:00:00" end
  return fill_first(pkt, { ethernet = { dst = per_pair(macs) } })
end

-- A device flow's endpoint pairs (the model's Flow.Router: mesh, every tx
-- name to every rx name; one_to_one, by index), each { tx, rx } entries of
-- otg/devices.lua and the destination MAC (dst_mac: known now; gw_k: the
-- entry whose resolved gateway it is, read at start); and the flow's tx
-- port (every tx name's: a flow leaves from one port) and rx ports.
local function endpoints(f, path, dev)
  local d = f.tx_rx.device
  local base = path .. ".tx_rx.device."
  local function entries(what)
    local list, out = d[what], {}
    if #list == 0 then fail(base .. what, "empty: name at least one device endpoint") end
    for i, name in ipairs(list) do
      out[i] = dev and dev.by_name[name]
      if out[i] == nil then
        fail(("%s%s[%d]"):format(base, what, i - 1), "'%s' is no ethernet, ipv4 or ipv6 address of a device of this "
          .. "config", name)
      end
    end
    return out
  end
  local txs, rxs = entries("tx_names"), entries("rx_names")
  local ends = {}
  if d.mode == "one_to_one" then
    if #txs ~= #rxs then
      fail(base .. "rx_names", "%d names for %d tx_names: one_to_one pairs them by index, so the model needs as many "
        .. "of each", #rxs, #txs)
    end
    for i = 1, #txs do ends[i] = { tx = txs[i], rx = rxs[i], at = i } end
  else
    for _, tx in ipairs(txs) do for j, rx in ipairs(rxs) do ends[#ends + 1] = { tx = tx, rx = rx, at = j } end end
  end
  for i, tx in ipairs(txs) do
    if tx.port ~= txs[1].port then
      fail(("%stx_names[%d]"):format(base, i - 1), "'%s' is on port %s, '%s' on %s: a flow leaves from one port (a "
        .. "flow a port)", tx.name, tx.port, txs[1].name, txs[1].port)
    end
  end
  local kind = txs[1].kind
  local rx_ports, seen = {}, {}
  for _, e in ipairs(ends) do
    local tx, rx = e.tx, e.rx
    local at = ("%srx_names[%d]"):format(base, e.at - 1)
    if tx.kind ~= kind or rx.kind ~= kind then
      fail(at, "'%s' and '%s' are not of one kind (ethernet, ipv4, ipv6; a flow's endpoints all of one)", tx.name,
        rx.name)
    end
    if tx == rx then fail(at, "'%s' to itself: the model refuses a pair of one endpoint", tx.name) end
    if tx.kind == "eth" or devices.on_link(tx, rx.addr) then e.dst_mac = rx.mac   -- the peer, on the link
    elseif tx.gw_mac then e.dst_mac = tx.gw_mac
    else e.gw_k = tx.k end
    if not seen[rx.port] then seen[rx.port] = true rx_ports[#rx_ports + 1] = rx.port end
  end
  return ends, txs[1].port, rx_ports
end

-- A flow's metric tags (packet.compile's: bit offset in the frame, length)
-- as the spec's list, and their bits together: a frame's tag value is its
-- tagged bits one after the other, the first tag's highest. The receiver
-- finds the flow by its own tag (metrics.enable), and keeps counts for
-- every value: at most TAG_BITS_MAX bits a flow.
local function metric_tags(list, m)
  if #list == 0 then return nil, 0 end
  if not m.enable then
    fail(list[1].path .. ".metric_tags", "needs the flow's metrics.enable true (surge finds a tagged frame's flow "
      .. "by the flow's own metrics tag)")
  end
  local out, bits, names = {}, 0, {}
  for i, t in ipairs(list) do
    if names[t.name] then fail(t.path .. ".metric_tags", "the tag name '%s' is given twice in this flow", t.name) end
    names[t.name] = true
    bits = bits + t.length
    out[i] = { name = t.name, offset = t.offset, length = t.length }
  end
  if bits > M.TAG_BITS_MAX then
    fail(list[#list].path .. ".metric_tags", "%d tagged bits in this flow: surge counts every value of at most %d "
      .. "(shorter tags: length)", bits, M.TAG_BITS_MAX)
  end
  return out, bits
end

-- The spec of checked flow f (its index, 0-based), ports: name -> port id,
-- dev: the config's devices (otg/devices.lua).
-- Raises { path, msg } for what the model allows and surge cannot do.
function M.compile(f, index, ports, path, dev)
  local tx_name, rx_names, ends
  if f.tx_rx.choice == "device" then
    ends, tx_name, rx_names = endpoints(f, path, dev)
    f = { packet = with_endpoints(f.packet or {}, ends), size = f.size, name = f.name, metrics = f.metrics,
          duration = f.duration, rate = f.rate }
  else
    tx_name = f.tx_rx.port.tx_name
    rx_names = f.tx_rx.port.rx_names or {}
    if f.tx_rx.port.rx_name then rx_names = { f.tx_rx.port.rx_name } end
  end
  local tx = ports[tx_name]
  if tx == nil then
    fail(path .. ".tx_rx.port.tx_name", "'%s' is not a port of this config", tx_name)
  end
  local rx = {}
  for i, n in ipairs(rx_names) do
    if ports[n] == nil then fail(("%s.tx_rx.port.rx_names[%d]"):format(path, i - 1), "'%s' is not a port of "
      .. "this config", n) end
    rx[#rx + 1] = n
  end
  local c = compile_packet(f, path)
  local m = f.metrics or {}
  local tags, tag_bits = metric_tags(c.tags, m)
  local lat = m.latency and m.latency.enable
  for _, k in ipairs({ "loss", "timestamps" }) do
    if m[k] and not m.enable then fail(path .. ".metrics." .. k, "needs metrics.enable true (the flow's own "
      .. "metrics)") end
  end
  if lat and not m.enable then fail(path .. ".metrics.latency.enable", "needs metrics.enable true (the flow's "
    .. "own metrics)") end
  local unkept = lat and probe_unkept(c.template.layers)
  if unkept then
    fail(path .. ".metrics.latency.enable", "the latency probe's timestamp, written as each frame leaves, would "
      .. "invalidate this packet's %s checksum (surge keeps a UDP or TCP checksum right after the first IP header "
      .. "valid, no other)", unkept)
  end
  local spec = { name = f.name, index = index, tx = tx_name, rx = rx, tag = m.enable == true,
                 latency = lat or false, timestamps = m.timestamps or false,
                 packet = f.packet, size_obj = f.size, path = path, header_bytes = c.header_bytes,
                 tags = tags, tag_bits = tag_bits }
  for i, e in ipairs(ends or {}) do
    -- per pair the destination MAC: known, or its gateway's (gw_ks: resolved at start)
    spec.dst_macs, spec.gw_ks = spec.dst_macs or {}, spec.gw_ks or {}
    spec.dst_macs[i], spec.gw_ks[i] = e.dst_mac or false, e.gw_k or false
    if c.largest - M.FCS - 14 > e.tx.mtu then
      fail(path .. ".size", "%d: frames of %d bytes after the Ethernet header, over the mtu %d of ethernet '%s'",
        c.largest, c.largest - M.FCS - 14, e.tx.mtu, e.tx.kind == "eth" and e.tx.name or e.tx.eth)
    end
  end
  if type(c.size) == "number" then
    spec.size, spec.mean_bytes = c.size, c.size + M.FCS
  else
    spec.mean_bytes = c.size:mean() + M.FCS    -- the table's mean: what a rate in bit/s divides by
  end
  if spec.tag then
    -- a latency probe follows the tag when the flow is timed (timestamps are the receive times: no probe)
    local need = M.TAG_LEN + (spec.latency and M.PROBE_LEN or 0)
    local room = c.smallest - M.FCS - c.header_bytes
    if room < need then
      fail(path .. ".size", "%d leaves %d bytes after the headers: the flow's metrics need %d (a larger size, or "
        .. "metrics.enable false%s)", c.smallest, room, need, need > M.TAG_LEN and ", or no latency" or "")
    end
    spec.probe = need > M.TAG_LEN
    local idx = index
    local head = M.TAG .. string.char(math.floor(idx / 256), idx % 256) .. ("\0"):rep(need - M.TAG_LEN)
    spec.payload = head .. ("\0"):rep(c.largest - M.FCS - c.header_bytes - #head)
  end
  duration(spec, f.duration, path)
  spec.rate = { kind = f.rate.choice, value = f.rate[f.rate.choice], path = path .. ".rate." .. f.rate.choice }
  if f.rate.choice == "pps" then spec.pps_asked = f.rate.pps end
  return spec
end

-- The reader of tagged flows' values, per flow index, for the counts of
-- one row of the run's tag slots (otg/stats.lua: a flow's slots from its
-- tag_base, a row of 2^tag_bits values for what it sent, then one a port
-- for what the port received; row -1: the sent). specs: the config's flows
-- (tag_base set at start). A reader is what core/dataplane/tag_count.c
-- reads (struct surge_otg_tagger, filled by otg/task.lua): the first slot
-- at, the header length hb and per tag its byte b, bit and len (the
-- value: the tags' bits one after the other).
function M.tag_readers(specs, row)
  local out = {}
  for _, s in ipairs(specs) do
    if s.tags and s.tag_base then
      local r = { at = s.tag_base + (row + 1) * 2 ^ s.tag_bits, hb = s.header_bytes, n = #s.tags, b = {}, bit = {},
                  len = {} }
      for i, t in ipairs(s.tags) do
        r.b[i], r.bit[i], r.len[i] = math.floor(t.offset / 8), t.offset % 8, t.length
      end
      out[s.index] = r
    end
  end
  return out
end

-- The template, the flow (nil: no field varies) and the size (nil: fixed)
-- of a spec (its dst_macs: a device flow's destination MAC per endpoint
-- pair, those of gateways set by master at start); raises { path, msg } or
-- a plain message.
function M.build(spec)
  local pkt, dst_mac = spec.packet, spec.dst_macs and spec.dst_macs[1] or nil
  if spec.dst_macs and #spec.dst_macs > 1 then pkt, dst_mac = with_dst(pkt, spec.dst_macs), nil end
  local c = compile_packet({ packet = pkt, size = spec.size_obj }, spec.path, spec.payload, dst_mac)
  return c.template, c.flow, type(c.size) ~= "number" and c.size or nil
end

return M
