-- size/distribution.lua - a size spec (N, "imix", uniform, weighted, seq)
-- as the table of sizes surge.size walks, one entry a packet.
--
-- The table is built once: blocks of W entries (W = the sum of integer
-- weights, or every size once for uniform), each block holding the exact
-- proportions in a shuffled order (fixed seed: the same table every run).
local seed_stream = require("surge.gen.seed")

local M = {}

local BLOCKS_TO = 1024     -- the table holds whole blocks, at least this many entries

M.IMIX = { { 60, 7 }, { 566, 4 }, { 1514, 1 } }

local function fail(fmt, ...) error(("surge.size: " .. fmt):format(...), 0) end
M.fail = fail

-- block: a list of sizes with the exact proportions; returns the table (Lua
-- list) of whole blocks, each shuffled.
local function blocks(block, seed, shuffle)
  local W = #block
  local nb = math.max(1, math.ceil(BLOCKS_TO / W))
  local r = seed_stream.draws(seed)
  local out = {}
  for b = 1, nb do
    local blk = {}
    for i = 1, W do blk[i] = block[i] end
    if shuffle then
      for i = W, 2, -1 do
        local j = r(i) + 1
        blk[i], blk[j] = blk[j], blk[i]
      end
    end
    for i = 1, W do out[(b - 1) * W + i] = blk[i] end
  end
  return out
end

local function whole(v, what)
  if type(v) ~= "number" or v ~= math.floor(v) then fail("%s = %s is not a whole number", what, tostring(v)) end
  return v
end
M.whole = whole

-- Weighted pairs -> one exact block. Integer weights keep their exact ratio
-- (sum up to 65536); other weights are scaled to a block of 10000.
local function weighted_block(pairs_, what)
  if type(pairs_) ~= "table" or #pairs_ == 0 then fail("%s needs { {SIZE, WEIGHT}, ... }", what) end
  local total, ints = 0, true
  for i, p in ipairs(pairs_) do
    if type(p) ~= "table" or type(p[1]) ~= "number" or type(p[2]) ~= "number" or p[3] ~= nil then
      fail("%s[%d]: give { SIZE, WEIGHT }", what, i)
    end
    whole(p[1], "size")
    if p[2] < 0 or p[2] ~= p[2] or p[2] == math.huge then fail("%s[%d]: weight %s must be 0 or more", what, i, tostring(p[2])) end
    if p[2] ~= math.floor(p[2]) then ints = false end
    total = total + p[2]
  end
  if total <= 0 then fail("%s: the weights add up to 0", what) end
  local counts = {}
  if ints and total <= 65536 then
    -- divide by the common divisor: 70:40:10 is a block of 12
    local function gcd(a, b) while b ~= 0 do a, b = b, a % b end return a end
    local g = 0
    for _, p in ipairs(pairs_) do g = gcd(p[2], g) end
    for i, p in ipairs(pairs_) do counts[i] = p[2] / g end
  else
    -- largest remainder to a block of 10000
    local N, sum, rem = 10000, 0, {}
    for i, p in ipairs(pairs_) do
      local exact = p[2] / total * N
      counts[i] = math.floor(exact)
      sum = sum + counts[i]
      rem[#rem + 1] = { i = i, r = exact - counts[i] }
    end
    table.sort(rem, function(a, b) if a.r ~= b.r then return a.r > b.r end return a.i < b.i end)
    for k = 1, N - sum do counts[rem[k].i] = counts[rem[k].i] + 1 end
  end
  local block = {}
  for i, p in ipairs(pairs_) do
    for _ = 1, counts[i] do block[#block + 1] = p[1] end
  end
  return block
end

local spec_keys = { uniform = 1, weighted = 1, seq = 1, seed = 1 }

-- spec -> Lua list of sizes (the table), and a description.
function M.table_of(spec)
  if type(spec) == "number" then
    whole(spec, "size")
    return { spec }, ("%d bytes"):format(spec)
  end
  if spec == "imix" then
    return blocks(weighted_block(M.IMIX, "imix"), 1, true), "imix 60/566/1514 bytes 7:4:1 (64/570/1518 with FCS)"
  end
  if type(spec) ~= "table" then
    fail("spec %s: give a size, \"imix\", { uniform = {LO, HI} }, { weighted = { {SIZE, WEIGHT}, ... } } " ..
         "or { seq = { ... } }", tostring(spec))
  end
  if #spec > 0 then   -- a bare weights table
    return blocks(weighted_block(spec, "weights"), 1, true), "weighted"
  end
  for k in pairs(spec) do
    if not spec_keys[k] then fail("unknown key '%s' (uniform, weighted, seq, seed)", tostring(k)) end
  end
  local seed = spec.seed or 1
  whole(seed, "seed")
  if spec.uniform ~= nil then
    if spec.weighted ~= nil or spec.seq ~= nil then fail("give one of uniform, weighted, seq") end
    local u = spec.uniform
    if type(u) ~= "table" or type(u[1]) ~= "number" or type(u[2]) ~= "number" or u[3] ~= nil then
      fail("uniform needs { LO, HI }")
    end
    local lo, hi = whole(u[1], "uniform low"), whole(u[2], "uniform high")
    if lo > hi then fail("uniform = { %d, %d }: low is above high", lo, hi) end
    if hi - lo + 1 > 65536 then fail("uniform = { %d, %d }: too wide", lo, hi) end
    local block = {}
    for s = lo, hi do block[#block + 1] = s end
    return blocks(block, seed, true), ("uniform %d..%d"):format(lo, hi)
  elseif spec.weighted ~= nil then
    if spec.seq ~= nil then fail("give one of uniform, weighted, seq") end
    return blocks(weighted_block(spec.weighted, "weighted"), seed, true), "weighted"
  elseif spec.seq ~= nil then
    if spec.seed ~= nil then fail("seed goes with uniform or weighted") end
    local l = spec.seq
    if type(l) ~= "table" or #l == 0 then fail("seq needs a list of sizes") end
    local out = {}
    for i, s in ipairs(l) do
      if type(s) ~= "number" then fail("seq[%d] = %s is not a size", i, tostring(s)) end
      out[i] = whole(s, "size")
    end
    return out, "sequence"
  end
  fail("give one of uniform, weighted, seq")
end

return M
