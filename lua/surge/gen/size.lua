-- gen/size.lua - surge.size's generator: per packet, the frame length from
-- the table of sizes and, for a template, its length fields rewritten and
-- their checksums kept valid (RFC 1624 updates; the payload bytes the frame
-- loses or gains are accounted from a table of partial sums).
local ffi = require("ffi")
local check = require("surge.check")
local gen = require("surge.gen")
local layout, emit, loop = gen.layout, gen.emit, gen.loop

local M = {}

-- The template's layout compile() takes (surge.gen.layout's plan).
M.plan = layout.plan

local function fail(fmt, ...) error(("surge.size: " .. fmt):format(...), 0) end

-- Length fields a frame size changes: layer name -> { offset in the layer, value = size - layer offset - minus }
M.LENGTH_FIELDS = { ip4 = { 2, 0 }, ip6 = { 4, 40 }, udp = { 4, 0 } }
local LENGTH_FIELDS = M.LENGTH_FIELDS

-- The generated per-packet code: L (new size), p (packet); reads the old size
-- from the first length field. sz: the table of sizes (sz._t, its n
-- entries, its largest and min); t: a template, or { bytes = "", layers =
-- {}, size = largest } for the lengths alone.
function M.compile(sz, t)
  local plan = layout.plan(t, "surge.size")
  local lens = {}
  for _, l in ipairs(plan.layers) do
    local lf = LENGTH_FIELDS[l.name]
    if lf then lens[#lens + 1] = { at = l.off + lf[1], sub = l.off + lf[2], name = l.name } end
  end
  local hdr = plan.hdr
  if sz.min < hdr then
    fail("sizes from %d bytes, but the template's headers take %d", sz.min, hdr)
  end
  if t.size < sz.largest then
    fail("sizes reach %d bytes but the template has %d: make the pool from sz:template(t), " ..
         "or build the template with size = %d", sz.largest, t.size, sz.largest)
  end
  -- payload sums: per L4 checksum, the ones' complement sum of bytes [hdr, L)
  -- in that checksum's words, for every L up to the template size
  local bytes = ffi.cast("const uint8_t *", t.bytes)
  local sums = {}
  local touched, terms = {}, {}
  for _, c in ipairs(plan.checksums) do
    terms[c] = {}
    local nlen = 0
    for _, lf in ipairs(lens) do
      local par = layout.covers(c, lf.at, 2)
      if par then
        if par ~= 0 then fail("internal: length field at an odd position") end
        nlen = nlen + 1
      end
    end
    if c.pseudo_len then nlen = nlen + 1 end
    if nlen > 0 then terms[c].nlen = nlen; touched[c] = true end
    if c.kind == "l4" then
      local base = c.ranges[1][3]
      local arr = ffi.new("uint16_t[?]", t.size + 1)
      local s = 0
      for L = 0, t.size do
        if L > hdr then
          local o = L - 1
          s = s + ((o - base) % 2 == 0 and bytes[o] * 256 or bytes[o])
          if s > 0xffff then s = s % 0xffff; if s == 0 then s = 0xffff end end
        end
        arr[L] = s
      end
      sums[#sums + 1] = arr
      terms[c].sums = "P" .. #sums
      touched[c] = true
    end
  end
  local acc = emit.accumulators(plan.checksums, touched, "c")
  local B = {}
  local function put(s) B[#B + 1] = "      " .. s end
  -- Rewritten whether or not the size changed: with oL == L every term is
  -- 65535, ones' complement zero, and the checksums keep their bytes (none
  -- holds 0xffff, which only a "no checksum" rule writes, and that rule
  -- maps the sum back to it). A test for oL ~= L would be a branch the
  -- trace cannot predict, its side exit taken for about half the packets
  -- of a random mix. The sums under tobit, as in surge.flow.
  if #lens > 0 then
    local first = lens[1]
    put(("local oL = %s + %d"):format(emit.read16(first.at), first.sub))
    put("local dl = tobit(65535 - oL + L)")
    for _, lf in ipairs(lens) do
      put(emit.write16(lf.at, ("(L - %d)"):format(lf.sub)))
    end
    for _, c in ipairs(plan.checksums) do
      if acc[c] then
        local parts = {}
        if terms[c].nlen then parts[#parts + 1] = terms[c].nlen == 1 and "dl" or ("%d * dl"):format(terms[c].nlen) end
        if terms[c].sums then parts[#parts + 1] = ("65535 - %s[oL] + %s[L]"):format(terms[c].sums, terms[c].sums) end
        put(("local %s = tobit(%s)"):format(acc[c], #parts > 0 and table.concat(parts, " + ") or "0"))
      end
    end
    emit.finish(B, plan.checksums, acc, "      ")
  end
  local rewrite = table.concat(B, "\n")
  local src = emit.prelude .. [[
local T, N, P, bad_p = ...
]]
  for i = 1, #sums do src = src .. ("local P%d = P[%d]\n"):format(i, i) end
  -- The position as its value at the run's first packet plus the loop
  -- index, as surge.flow keeps its counters; burst.len[i] written each time
  -- for the reason burst.data[i] is (gen/loop.lua).
  local last = ("%.0f"):format(sz.n - 1)
  src = src .. "local s_k = 0\n" .. loop.apply{
    names = { "k0" }, slots = { "s_k" }, moves = { k0 = sz.n },
    packet = ("      local L = T[tobit(k0) + i]\n      burst.len[i] = L\n      do\n        local p = burst.data[i]\n%s\n      end")
      :format(rewrite),
    wraps = ("    if k0 + last == %s then k0 = -1 - last end"):format(last),
  } .. ([[

local function next1(self, p)
%s
  local L = T[s_k]
  s_k = s_k + 1
  if s_k == N then s_k = 0 end
  do
%s
  end
  return L
end
return { apply = apply, next = next1, get = function() return s_k end, set = function(k) s_k = k end }
]]):format(loop.pointer_test("p"), rewrite)
  local chunk = loop.chunk(src, "surge.size")
  local fns = chunk(sz._t, sz.n, sums, function(p) check.expect(p, "pointer", "size:next", "p") end)
  fns.sums = sums
  fns.source = src
  return fns
end

return M
