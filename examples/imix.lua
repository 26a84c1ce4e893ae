-- imix.lua - UDP/IPv4 at IMIX sizes (or any size mix), optionally over
-- several flows, and the size distribution it sent.
--
--   surge run examples/imix.lua --count 12000
--   surge run --duration 5 examples/imix.lua --sizes 60-1514       # uniform
--   surge run examples/imix.lua --sizes 60:1,1514:1 --flows 100     # weighted
--   surge show --packets 12 examples/imix.lua
--
-- Sizes exclude the 4-byte FCS, like --size everywhere in surge: IMIX is
-- 60/566/1514 bytes here (64/570/1518 on the wire) in the ratio 7:4:1.
-- Each packet's IPv4 total length, UDP length and checksums follow its size
-- (see docs/flows.md).
local surge = require("surge")
local size = require("surge.size")
local flow = require("surge.flow")

function configure(p)
  p:description("UDP/IPv4 at a mix of frame sizes; prints the sizes it sent.")
  p:option("--port", "port number or device name", "0")
  p:option("--sizes", "imix, a size (128), a uniform range (60-1514) or weights (60:7,566:4,1514:1)", "imix")
  p:option("--max", "largest frame allowed, bytes without FCS (more for jumbo frames, up to the data room)",
           1514, "integer 14..65535")
  p:option("--flows", "number of UDP source ports, counting up from --sport", 1, "integer 1..65536")
  p:option("--burst", "packets per burst (1..256)", 32, "integer 1..256")
  p:option("--count", "send exactly this many packets, then stop (0 = no limit)", 0, "integer >=0")
  p:option("--src", "IPv4 source address", "10.0.0.1")
  p:option("--dst", "IPv4 destination address", "10.0.0.2")
  p:option("--sport", "first UDP source port", 1024, "integer 0..65535")
  p:option("--dport", "UDP destination port", 5000, "integer 0..65535")
end

-- --sizes text -> a surge.size spec
local function spec(text)
  if text == "imix" then return "imix" end
  if text:match("^%d+$") then return tonumber(text) end
  local lo, hi = text:match("^(%d+)%-(%d+)$")
  if lo then return { uniform = { tonumber(lo), tonumber(hi) } } end
  local pairs_ = {}
  for item in (text .. ","):gmatch("([^,]*),") do
    local sz, w = item:match("^(%d+):(%d*%.?%d+)$")
    if not sz then error(("--sizes %s: give imix, a size, LO-HI or SIZE:WEIGHT,..."):format(text), 0) end
    pairs_[#pairs_ + 1] = { tonumber(sz), tonumber(w) }
  end
  return pairs_
end

-- Sizes, the template grown to the largest of them, and the flow (or nil).
local function setup(args)
  local sz = size.new(spec(args.sizes), { max = args.max })
  local t = sz:template(surge.proto.udp{ src = args.src, dst = args.dst, sport = args.sport, dport = args.dport })
  local f
  if args.flows > 1 then
    f = flow{ template = t, fields = { ["udp.sport"] = { range = { args.sport, args.sport + args.flows - 1 } } } }
  end
  return sz, t, f
end

-- The MTU a port needs for frames of `len` bytes (without FCS); nil keeps
-- the port's own for standard frames.
local function mtu_for(len)
  return len > 1514 and len - 14 or nil
end

-- One row per size for a mix of a few sizes; a range of many sizes (60-1514
-- has 1455) in 10 rows of equal width, so the table stays readable.
local ROWS_MAX = 16
local function size_rows(hist)
  local rows = {}
  if #hist <= ROWS_MAX then
    for _, e in ipairs(hist) do rows[#rows + 1] = { tostring(e[1]), e[2] } end
    return rows
  end
  local lo, hi = hist[1][1], hist[#hist][1]
  local width = math.ceil((hi - lo + 1) / 10)
  for _, e in ipairs(hist) do
    local k = math.floor((e[1] - lo) / width) + 1
    if not rows[k] then
      local a = lo + (k - 1) * width
      rows[k] = { ("%d-%d"):format(a, math.min(hi, a + width - 1)), 0 }
    end
    rows[k][2] = rows[k][2] + e[2]
  end
  local out = {}
  for k = 1, 10 do if rows[k] then out[#out + 1] = rows[k] end end
  return out
end

function master(args)
  local ok, sz, t = pcall(setup, args)
  if not ok then error((tostring(sz):gsub("^[^\n]-:%d+: ", "")), 0) end
  print(("imix.lua: sizes %s, mean %.1f bytes without FCS, %d flow%s"):format(sz.what, sz:mean(), args.flows,
    args.flows == 1 and "" or "s"))
  local port = surge.port(tonumber(args.port) or args.port, { txq = 1, rxq = 1, mtu = mtu_for(t.size) })
  local before = port:stats()
  surge.launch("tx", port:txq(0), args)
  local r = surge.wait()[1]
  if r == nil then return 1 end
  local bytes = 0
  for _, e in ipairs(r.hist) do bytes = bytes + e[1] * e[2] end
  print(("imix.lua: %d packets sent by size (bytes without FCS):"):format(r.sent))
  for _, row in ipairs(size_rows(r.hist)) do
    print(("  %11s bytes  %10d packets  %6.2f %%"):format(row[1], row[2], r.sent > 0 and 100 * row[2] / r.sent or 0))
  end
  local counted = port:stats().tx_bytes - before.tx_bytes
  print(("imix.lua: %d bytes by size, %d counted by the port"):format(bytes, counted))
  return 0
end

function tx(q, args)
  local sz, t, f = setup(args)
  -- jumbo frames (--max above 1514) need mbufs with room for them; shared:
  -- ports like net_ring hand the mbufs to a receiver that frees them
  local pool = surge.pool{ template = t, data_room = t.size > 1664 and t.size or nil, shared = true }
  local burst = pool:burst(args.burst)
  local left = args.count > 0 and args.count or -1
  local sent = 0
  while surge.running() and left ~= 0 do
    local want = burst.cap
    if left > 0 and left < want then want = left end
    local n = burst:alloc(want)
    if f then f:apply(burst) end
    sz:apply(burst)
    sent = sent + q:send(burst)
    if left > 0 then left = left - n end
  end
  -- packets leave in order: the first `sent` sizes of the sequence went out
  return { sent = sent, hist = sz:histogram(sent) }
end

-- `surge show --packets 12 examples/imix.lua` prints the first packets.
function show(args)
  local sz, _, f = setup(args)
  return { frames = function(_, n) return sz:frames(n, f) end }
end
