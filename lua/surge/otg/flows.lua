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

local M = { TAG = "SOTG", TAG_LEN = 6, FCS = 4, MAX_FLOWS = 65535 }

local function fail(path, fmt, ...) error({ path = path, msg = fmt:format(...) }, 0) end

-- packet.compile, its refusal as this module's ({ path, msg }).
local function compile_packet(f, path, payload)
  local ok, c = pcall(packet.compile, { packet = f.packet, size = f.size }, path, { payload = payload })
  if not ok then
    if type(c) == "table" then error({ path = c.path, msg = c.message }, 0) end
    error(c, 0)
  end
  return c
end

-- The spec of checked flow f (its index, 0-based), ports: name -> port id.
-- Raises { path, msg } for what the model allows and surge cannot do.
function M.compile(f, index, ports, path)
  local tx = ports[f.tx_rx.port.tx_name]
  if tx == nil then
    fail(path .. ".tx_rx.port.tx_name", "'%s' is not a port of this config", f.tx_rx.port.tx_name)
  end
  local rx_names = f.tx_rx.port.rx_names or {}
  if f.tx_rx.port.rx_name then rx_names = { f.tx_rx.port.rx_name } end
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
  local spec = { name = f.name, index = index, tx = f.tx_rx.port.tx_name, rx = rx, size = c.size,
                 tag = f.metrics == nil or f.metrics.enable ~= false, packet = f.packet, size_obj = f.size,
                 path = path }
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

-- The template and the flow (nil: no field varies) of a spec; raises
-- { path, msg } or a plain message.
function M.build(spec)
  local c = compile_packet({ packet = spec.packet, size = spec.size_obj }, spec.path, spec.payload)
  return c.template, c.flow
end

return M
