-- otg/flows.lua - an OTG flow (checked by otg/model.lua) as surge runs it:
-- a plain-data spec (master compiles it at set_config, a port's task gets
-- it as its argument) and, from the spec, the template and the compiled
-- rewrite loop: otg/packet.lua reads the flow's packet and size (every
-- header of the model it builds) into a surge.proto stack and a
-- surge.flow, the same data path as a script's flow.
--
-- Per-flow receive counting: a flow with metrics.enable carries TAG_LEN
-- bytes at the end of its frame (before the FCS): "SOTG" and the flow's
-- number, the payload otg/packet.lua puts after the headers. They are part
-- of the template, so the checksums cover them and no per-packet work
-- writes them; the receiver reads the last bytes of a frame, whatever the
-- headers. (surge.dut's measuring receiver keys flows on the UDP source
-- port, which an OTG flow sets itself: it cannot count OTG's flows as it is;
-- docs/otg.md.)
local packet = require "surge.otg.packet"
local devices = require "surge.otg.devices"

local M = { TAG = "SOTG", TAG_LEN = 6, FCS = 4, MAX_FLOWS = 65535 }

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

-- A copy of packet (the flow's headers) with the fields the flow leaves
-- unset taken from its device endpoints (tx, rx: otg/devices.lua entries):
-- the first ethernet's src, the first ipv4's (or ipv6's) src and dst.
-- (The model's patterns for them have no auto: absent is what a client
-- that sets nothing sends.)
local function with_endpoints(pkt, tx, rx)
  local out = setmetatable({}, getmetatable(pkt))
  local done = {}
  for i, h in ipairs(pkt) do
    out[i] = h
    local ch = type(h) == "table" and h.choice
    local fill = ch == "ethernet" and { src = tx.mac }
      or (ch == "ipv4" and tx.kind == 4 or ch == "ipv6" and tx.kind == 6) and { src = tx.addr, dst = rx.addr }
    if fill and not done[ch] and type(h[ch]) == "table" then
      done[ch] = true
      local hdr = {}
      for k, v in pairs(h[ch]) do hdr[k] = v end
      for k, v in pairs(fill) do if hdr[k] == nil then hdr[k] = { choice = "value", value = v } end end
      out[i] = { choice = ch, [ch] = hdr }
    end
  end
  return out
end

-- A device flow's endpoints: its tx and rx entries (otg/devices.lua) and
-- the destination MAC (dst_mac: known now; gw_k: the entry whose resolved
-- gateway it is, read at start).
local function endpoints(f, path, dev)
  local d = f.tx_rx.device
  local function one(list, what)
    local p = ("%s.tx_rx.device.%s"):format(path, what)
    if #list ~= 1 then
      fail(p, "%d names: surge takes one %s endpoint a flow (a flow per pair of devices)", #list, what:sub(1, 2))
    end
    local en = dev and dev.by_name[list[1]]
    if en == nil then fail(p .. "[0]", "'%s' is no ethernet, ipv4 or ipv6 address of a device of this config", list[1]) end
    return en
  end
  local tx, rx = one(d.tx_names, "tx_names"), one(d.rx_names, "rx_names")
  if (tx.kind == "eth") ~= (rx.kind == "eth") or (tx.kind ~= "eth" and tx.kind ~= rx.kind) then
    fail(path .. ".tx_rx.device.rx_names[0]", "'%s' and '%s' are not of one kind (ethernet, ipv4, ipv6)", tx.name,
      rx.name)
  end
  local e = { tx = tx, rx = rx }
  if tx.kind == "eth" or devices.on_link(tx, rx.addr) then e.dst_mac = rx.mac   -- the peer, on the link
  elseif tx.gw_mac then e.dst_mac = tx.gw_mac
  else e.gw_k = tx.k end
  return e
end

-- The spec of checked flow f (its index, 0-based), ports: name -> port id,
-- dev: the config's devices (otg/devices.lua).
-- Raises { path, msg } for what the model allows and surge cannot do.
function M.compile(f, index, ports, path, dev)
  local tx_name, rx_names, ep
  if f.tx_rx.choice == "device" then
    ep = endpoints(f, path, dev)
    tx_name, rx_names = ep.tx.port, { ep.rx.port }
    f = { packet = with_endpoints(f.packet or {}, ep.tx, ep.rx), size = f.size, name = f.name, metrics = f.metrics,
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
  if type(c.size) ~= "number" then
    fail(path .. ".size." .. tostring(f.size.choice), "not implemented by surge otg yet (fixed sizes only: its "
      .. "port tasks apply no surge.size)")
  end
  if #c.tags > 0 then
    fail(c.tags[1].path, "metric tags: not implemented by surge otg yet (it reports no tagged metrics)")
  end
  local spec = { name = f.name, index = index, tx = tx_name, rx = rx, size = c.size,
                 tag = f.metrics == nil or f.metrics.enable ~= false, packet = f.packet, size_obj = f.size,
                 path = path, dst_mac = ep and ep.dst_mac, gw_k = ep and ep.gw_k }
  if ep and c.size - 14 > ep.tx.mtu then
    fail(path .. ".size", "%d: frames of %d bytes after the Ethernet header, over the mtu %d of ethernet '%s'",
      c.size + M.FCS, c.size - 14, ep.tx.mtu, ep.tx.kind == "eth" and ep.tx.name or ep.tx.eth)
  end
  if spec.tag then
    local room = c.size - c.header_bytes
    if room < M.TAG_LEN then
      fail(path .. ".size", "%d leaves %d bytes after the headers: the flow's metrics need %d (a larger size, or "
        .. "metrics.enable false)", c.size + M.FCS, room, M.TAG_LEN)
    end
    local idx = index
    spec.payload = ("\0"):rep(room - M.TAG_LEN) .. M.TAG .. string.char(math.floor(idx / 256), idx % 256)
  end
  local d = f.duration
  spec.count = d.choice == "fixed_packets" and d.fixed_packets.packets or -1
  if f.rate.choice == "pps" then spec.pps_asked = f.rate.pps
  else spec.pct = f.rate.percentage end
  return spec
end

-- The template and the flow (nil: no field varies) of a spec (its
-- dst_mac: the auto destination MAC, set by master at start for a flow
-- whose gateway is resolved); raises
-- { path, msg } or a plain message.
function M.build(spec)
  local c = compile_packet({ packet = spec.packet, size = spec.size_obj }, spec.path, spec.payload, spec.dst_mac)
  return c.template, c.flow
end

return M
