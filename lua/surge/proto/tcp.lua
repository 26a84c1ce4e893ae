-- tcp.lua - TCP: a layer (20-byte header, no options), a ready-made
-- Ethernet/IP/TCP frame, and hot-loop setters that keep the checksum valid.
--
--   local t = surge.proto.tcp{ src = "10.0.0.1", dst = "10.0.0.2", sport = 1024, dport = 80,
--                              flags = "S", seq = 1, size = 60 }
--   tcp.set_sport(burst.data[i] + t.l4, port)   -- keeps the TCP checksum valid
--
--   surge.proto.layer.tcp{ sport = 1024, dport = 80, seq = 0, ack = 0, flags = "SA",
--                          window = 65535, urg = 0, checksum = true }   -- for stacks
--
-- flags: letters F S R P A U E C in any order ("S", "SA", "FA", "PA", "R"),
-- "" for none, or a number 0..255.
local bit = require("bit")
local cs = require("surge.proto.checksum")
local stack = require("surge.proto.stack")
local flat = require("surge.proto.flat")

local band, rshift = bit.band, bit.rshift
local M = { size = 20, FIN = 0x01, SYN = 0x02, RST = 0x04, PSH = 0x08, ACK = 0x10, URG = 0x20,
            ECE = 0x40, CWR = 0x80 }

M.fields = { sport = { off = 0, bytes = 2 }, dport = { off = 2, bytes = 2 }, seq = { off = 4, bytes = 4 },
             ack = { off = 8, bytes = 4 }, window = { off = 14, bytes = 2 },
             -- data offset and each flag bit on its own (OTG varies them one by one)
             doff = { off = 12, bytes = 2, mask = 0xf000 }, ns = { off = 12, bytes = 2, mask = 0x0100 },
             cwr = { off = 12, bytes = 2, mask = 0x0080 }, ece = { off = 12, bytes = 2, mask = 0x0040 },
             urg = { off = 12, bytes = 2, mask = 0x0020 }, ackf = { off = 12, bytes = 2, mask = 0x0010 },
             psh = { off = 12, bytes = 2, mask = 0x0008 }, rst = { off = 12, bytes = 2, mask = 0x0004 },
             syn = { off = 12, bytes = 2, mask = 0x0002 }, fin = { off = 12, bytes = 2, mask = 0x0001 } }
M.checksum = 16           -- offset of the checksum covering header, payload and pseudo header

local letters = { F = 0x01, S = 0x02, R = 0x04, P = 0x08, A = 0x10, U = 0x20, E = 0x40, C = 0x80 }

-- "SA" -> 0x12; a number 0..255 passes. Errors name the field and the text.
function M.flags(v, what, level)
  what, level = what or "surge.proto.tcp: flags", (level or 2) + 1
  if type(v) == "number" then
    if v ~= math.floor(v) or v < 0 or v > 255 then
      error(("%s = %s outside 0..255"):format(what, tostring(v)), level)
    end
    return v
  end
  if type(v) ~= "string" then
    error(("%s must be a string of F S R P A U E C or a number 0..255, not a %s"):format(what, type(v)), level)
  end
  local f = 0
  for i = 1, #v do
    local c = v:sub(i, i):upper()
    local b = letters[c]
    if not b then
      error(("%s = '%s': '%s' is not a TCP flag (F S R P A U E C)"):format(what, v, v:sub(i, i)), level)
    end
    f = bit.bor(f, b)
  end
  return f
end

-- 0x12 -> "SA" (the order of the examples above: F S R P U A E C); 0 -> ".".
function M.flags_text(f)
  local out = {}
  for _, c in ipairs({ "F", "S", "R", "P", "U", "A", "E", "C" }) do
    if band(f, letters[c]) ~= 0 then out[#out + 1] = c end
  end
  return #out > 0 and table.concat(out) or "."
end

-- Writes the header at p, checksum 0 (the checksum needs what follows).
function M.write(p, sport, dport, seq, ack, flags, window, urg)
  stack.put16(p, sport)
  stack.put16(p + 2, dport)
  stack.put32(p + 4, seq)
  stack.put32(p + 8, ack)
  p[12] = 0x50            -- data offset 5 words
  p[13] = flags
  stack.put16(p + 14, window)
  p[16], p[17] = 0, 0
  stack.put16(p + 18, urg)
end

local allowed = { sport = 1, dport = 1, seq = 1, ack = 1, flags = 1, window = 1, urg = 1, checksum = 1 }

local function write(self, p, ctx)
  M.write(p, self.sport, self.dport, self.seq, self.ack, self.flags, self.window, self.urg)
end

local function finish(self, p, ctx)
  if not self.checksum or not ctx.ip then return end
  local len = ctx.size - ctx.off
  stack.put16(p + 16, cs.finish(cs.sum(p, len, ctx.ip:pseudo_sum(6, len))))
end

-- checksum = false leaves it 0 (a deliberately bad checksum).
local ints = { { "sport", 1024, 0, 65535 }, { "dport", 80, 0, 65535 }, { "seq", 0, 0, 0xffffffff },
  { "ack", 0, 0, 0xffffffff }, { "window", 65535, 0, 65535 }, { "urg", 0, 0, 65535 } }

function M.layer(o)
  local t
  t, o = stack.layer_of(o, allowed, { name = "tcp", len = 20, ipproto = 6, write = write, finish = finish }, ints)
  t.flags = M.flags(o.flags == nil and "S" or o.flags, "surge.proto.tcp: flags", 2)
  t.checksum = o.checksum ~= false
  return t
end

-- surge.proto.tcp{...}: a whole Ethernet [/VLAN]/IPv4|IPv6/TCP frame from flat fields.
local function frame(_, o)
  local l = flat.frame("tcp", o, { sport = 1024, dport = 80, seq = 0, ack = 0,
    flags = "S", window = 65535, urg = 0, checksum = true }, M.layer, 3)
  return l
end
setmetatable(M, { __call = frame })

-- Hot-loop setters on t (uint8_t * to the TCP header): keep the checksum
-- valid (16-bit loads and stores, checksum.set16/set32).
local function set16(t, at, v) cs.set16(t, at, 16, v) end
local function set32(t, at, v) cs.set32(t, at, 16, v) end

function M.set_sport(t, v) set16(t, 0, v) end
function M.set_dport(t, v) set16(t, 2, v) end
function M.set_seq(t, v) set32(t, 4, v) end      -- v: 0..2^32-1
function M.set_ack(t, v) set32(t, 8, v) end
function M.set_window(t, v) set16(t, 14, v) end

function M.set_flags(t, f)                       -- f: a number (M.flags("SA") outside the loop)
  local old = t[12] * 256 + t[13]
  t[13] = f
  cs.update16(t + 16, old, t[12] * 256 + f)
end
stack.setters(M, "tcp", { set_sport = "integer 0..65535", set_dport = "integer 0..65535", set_seq = "integer 0..4294967295", set_ack = "integer 0..4294967295",
                          set_window = "integer 0..65535", set_flags = { "f", "integer 0..255" } })

function M.sport(t) return t[0] * 256 + t[1] end
function M.dport(t) return t[2] * 256 + t[3] end
function M.seq(t) return stack.get32(t + 4) end
function M.ack(t) return stack.get32(t + 8) end

function M.decode(p, len, ctx)
  if len < 20 then return "tcp (truncated)", nil, len end
  local hlen = rshift(p[12], 4) * 4
  local n = len
  if ctx.ip and ctx.ip.payload and ctx.ip.payload <= len then n = ctx.ip.payload end
  local status = "none"
  if ctx.ip and hlen >= 20 and hlen <= n then
    status = cs.sum(p, n, ctx.ip.pseudo_sum(6, n)) == 0xffff and "ok" or "BAD"
  end
  local text = ("tcp %d > %d [%s] seq %d ack %d win %d len %d csum %s"):format(stack.get16(p),
    stack.get16(p + 2), M.flags_text(p[13]), stack.get32(p + 4), stack.get32(p + 8), stack.get16(p + 14),
    math.max(n - hlen, 0), status)
  if stack.get16(p + 18) ~= 0 then text = text .. (" urg %d"):format(stack.get16(p + 18)) end
  if hlen < 20 then return text .. " (bad header length " .. hlen .. ")", nil, len end
  return text, nil, math.min(hlen, len)
end

stack.readers(M, "tcp", { "sport", "dport", "seq", "ack" })

return M
