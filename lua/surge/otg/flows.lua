-- otg/flows.lua - an OTG flow (checked by otg/model.lua) as surge runs it:
-- a plain-data spec (master compiles it at set_config, a port's task gets
-- it as its argument) and, from the spec, the template and the compiled
-- rewrite loop (surge.proto.stack, surge.flow): the same data path as a
-- script's flow.
--
-- Per-flow receive counting: a flow with metrics.enable carries TAG_LEN
-- bytes at the end of its frame (before the FCS): "SOTG" and the flow's
-- number. They are part of the template, so the checksums cover them and
-- no per-packet work writes them; the receiver reads the last bytes of a
-- frame, whatever the headers. (surge.dut's measuring receiver keys flows
-- on the UDP source port, which an OTG flow sets itself: it cannot be used
-- for OTG's per-flow counts as it is; docs/otg.md.)
local flow = require "surge.flow"
local proto = require "surge.proto"
local ip4 = require "surge.proto.ip4"
local ip6 = require "surge.proto.ip6"
local model = require "surge.otg.model"

local M = { TAG = "SOTG", TAG_LEN = 6, FCS = 4, MAX_FLOWS = 65535 }

local function mac_num(s)
  local x = 0
  for h in s:gmatch("%x%x") do x = x * 256 + tonumber(h, 16) end
  return x
end

local function ip6_low32(s)
  local b = ip6.parse(s)
  return ((b:byte(13) * 256 + b:byte(14)) * 256 + b:byte(15)) * 256 + b:byte(16), b:sub(1, 12)
end

-- A pattern value as surge.flow reads it (a number), and for IPv6 the high
-- 96 bits that must not change.
local function num(kind, v)
  if kind == "mac" then return mac_num(v) end
  if kind == "ipv4" then return ip4.addr(v, "", 1) end
  if kind == "ipv6" then return ip6_low32(v) end
  return v
end

local function text(kind, v)
  if kind == "mac" then
    local t = {}
    for i = 5, 0, -1 do t[#t + 1] = ("%02x"):format(math.floor(v / 2 ^ (8 * i)) % 256) end
    return table.concat(t, ":")
  end
  if kind == "ipv4" then
    return ("%d.%d.%d.%d"):format(math.floor(v / 16777216), math.floor(v / 65536) % 256, math.floor(v / 256) % 256,
      v % 256)
  end
  return v
end

local function fail(path, fmt, ...) error({ path = path, msg = fmt:format(...) }, 0) end

-- One header field's pattern: sets the layer option (the first value) and
-- adds a flow field when it varies.
local function field(spec, layer, opts, def, pat, path)
  local c = pat.choice
  if c == "auto" or def.opt == nil then return end   -- surge computes it (or the only value the model allows)
  if c == "value" and def.unset ~= nil and pat.value == def.unset then return end
  local kind = def.kind
  local first, fspec
  if c == "value" then
    first = pat.value
  elseif c == "values" then
    if #pat.values == 0 then fail(path .. ".values", "empty") end
    first = pat.values[1]
    if #pat.values > 1 then
      local list, high = {}, nil
      for i, v in ipairs(pat.values) do
        local n, h = num(kind, v)
        if high and h ~= high then fail(("%s.values[%d]"):format(path, i - 1), "only the low 32 bits of an IPv6 "
          .. "address may vary (the first value's high 96 bits)") end
        high = high or h
        list[i] = n
      end
      fspec = { list = list }
    end
  else   -- increment, decrement
    local r = pat[c]
    first = r.start
    if r.count > 1 then
      local s, hs = num(kind, r.start)
      local st, hst = num(kind, r.step)
      if kind == "ipv6" and hst ~= ("\0"):rep(12) then fail(path .. "." .. c .. ".step", "steps of more than 32 bits "
        .. "are not implemented by surge") end
      local last = c == "increment" and s + st * (r.count - 1) or s - st * (r.count - 1)
      local max = kind == "mac" and 2 ^ 48 - 1 or (kind == "ipv4" or kind == "ipv6") and 2 ^ 32 - 1 or 2 ^ def.bits - 1
      if last > max or last < 0 then
        fail(path .. "." .. c, "start %s %s %d x step %s leaves the field's range (surge does not wrap)",
          tostring(r.start), c == "increment" and "+" or "-", r.count - 1, tostring(r.step))
      end
      if st == 0 then fail(path .. "." .. c .. ".step", "0 never moves") end
      fspec = { range = { s, last }, step = c == "increment" and st or -st }
      if kind == "ipv6" then first = r.start end
      assert(hs == nil or kind == "ipv6")
    end
  end
  if kind == "ipv6" or kind == "mac" or kind == "ipv4" then opts[def.opt] = first
  elseif def.bool then opts[def.opt] = first == 1
  else opts[def.opt] = first end
  if fspec then
    if not def.flow then fail(path, "a varying value is not implemented by surge for this field") end
    spec.fields[#spec.fields + 1] = { ("%s#%d.%s"):format(layer.name, layer.nth, def.flow), fspec }
  end
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
  local spec = { name = f.name, index = index, tx = f.tx_rx.port.tx_name, rx = rx, layers = {}, fields = {},
                 size = f.size.fixed - M.FCS, tag = f.metrics == nil or f.metrics.enable ~= false }
  local packet = f.packet
  if #packet == 0 then packet = { { choice = "ethernet", ethernet = {} } } end
  local seen = {}
  for i, h in ipairs(packet) do
    local hdef = model.HEADERS[h.choice]
    local hpath = ("%s.packet[%d].%s"):format(path, i - 1, h.choice)
    seen[hdef.layer] = (seen[hdef.layer] or 0) + 1
    local layer = { name = hdef.layer, nth = seen[hdef.layer], opts = {} }
    if h.choice == "ethernet" and i ~= 1 then fail(hpath, "an inner Ethernet header is not implemented by surge") end
    if i == 1 and h.choice ~= "ethernet" then fail(hpath, "the first header must be ethernet") end
    local names = {}
    for name in pairs(h[h.choice] or {}) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      field(spec, layer, layer.opts, hdef.fields[name], h[h.choice][name], hpath .. "." .. name)
    end
    spec.layers[i] = layer
  end
  -- a stack of one header needs an ether type the last layer gives
  local last = spec.layers[#spec.layers]
  if last.name == "eth" and last.opts.type == nil then last.opts.type = 0x88b5 end   -- IEEE local experimental
  if last.name == "vlan" then fail(path .. ".packet", "a stack ending in a vlan header has no type to carry") end
  local d = f.duration
  spec.count = d.choice == "fixed_packets" and d.fixed_packets.packets or -1
  if f.rate.choice == "pps" then spec.pps_asked = f.rate.pps
  else spec.pct = f.rate.percentage end
  spec.path = path
  return spec
end

-- The template and the flow (nil: no field varies) of a spec; raises a
-- plain message (surge.proto's or surge.flow's).
function M.build(spec)
  local L = proto.layer
  local stack = {}
  for i, l in ipairs(spec.layers) do stack[i] = L[l.name](l.opts) end
  local hdr = 0
  for _, l in ipairs(stack) do hdr = hdr + l.len end
  local room = spec.size - hdr
  local payload
  if spec.tag then
    if room < M.TAG_LEN then
      error(("size %d leaves %d bytes after the headers: the flow's metrics need %d (a larger size, or "
        .. "metrics.enable false)"):format(spec.size + M.FCS, room, M.TAG_LEN), 0)
    end
    local idx = spec.index
    payload = ("\0"):rep(room - M.TAG_LEN) .. M.TAG .. string.char(math.floor(idx / 256), idx % 256)
  end
  stack.size, stack.payload = spec.size, payload
  local t = proto.stack(stack)
  local f
  if #spec.fields > 0 then f = flow{ template = t, fields = spec.fields, combine = "cycle" } end
  return t, f
end

M.text = text

return M
