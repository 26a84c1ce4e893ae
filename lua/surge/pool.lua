-- pool.lua - template pools and bursts.
--
--   local pool  = surge.pool{ template = surge.proto.udp{ size = 60 } }
--   local burst = pool:burst(32)
--   burst:alloc()                  -- n packets, each already holding the template
--   burst.data[i], burst.len[i]    -- bytes and length of packet i (0-based)
local ffi = require "ffi"
local core = require "surge.core"

local C, check = core.C, core.check
local M = {}

local Pool = {}
Pool.__index = Pool
Pool.__handle = function(p) return ("pool(%d)"):format(p.id) end

function M.wrap(id) return setmetatable({ id = id }, Pool) end

-- Tells C where the template's first IP and L4 headers are, so ports with
-- checksum offload can compute them (core/offload.c).
local l4_protos = { udp = 17, tcp = 6 }
local function set_layout(id, t)
  for i, l in ipairs(t.layers or {}) do
    if l.name == "ip4" or l.name == "ip6" then
      local nxt = t.layers[i + 1]
      check(C.surge_pool_layout(id, l.off, l.len, l.name == "ip4" and 4 or 6,
                                nxt and l4_protos[nxt.name] or 0), 3)
      return
    end
  end
end

local known = { size = 1, cache = 1, data_room = 1, template = 1, shared = 1, socket = 1, fill = 1 }

-- opts.template: a string of frame bytes, a template from surge.proto, or a
-- function(buf, len) called once per mbuf to write its bytes (opts.size gives
-- the length); opts.shared = true for a pool several lcores free into.
function M.new(opts)
  opts = opts or {}
  for k in pairs(opts) do
    if not known[k] then error(("surge.pool: unknown option '%s'"):format(tostring(k)), 2) end
  end
  for _, k in ipairs({ "size", "cache", "data_room" }) do
    local v = opts[k]
    if v ~= nil and (type(v) ~= "number" or v ~= math.floor(v) or v < 0 or v > (k == "data_room" and 65535 or 2^24)) then
      error(("surge.pool: %s = %s is not a valid count"):format(k, tostring(v)), 2)
    end
  end
  if type(opts.template) == "string" and #opts.template > 65535 then
    error(("surge.pool: template of %d bytes: at most 65535"):format(#opts.template), 2)
  end
  local conf = ffi.new("struct surge_pool_conf")
  conf.size = opts.size or 0
  conf.cache = opts.cache or 0
  conf.data_room = opts.data_room or 0
  conf.socket = opts.socket or -1
  -- a pool made in a task belongs to that lcore: SP/SC ring, no atomics
  conf.single_owner = (C.surge_is_main() == 0 and not opts.shared) and 1 or 0
  local id = check(C.surge_pool_create(conf), 2)
  local self = setmetatable({ id = id }, Pool)
  local t = opts.template
  if type(t) == "table" and t.bytes then
    set_layout(id, t)
    t = t.bytes
  end
  if type(t) == "string" then
    check(C.surge_pool_fill(id, t, #t), 2)
  elseif type(t) == "function" then
    local len = opts.fill or error("surge.pool: a template function needs fill = LENGTH", 2)
    local info = self:info()
    if type(len) ~= "number" or len ~= math.floor(len) or len < 14 or len > info.data_room then
      error(("surge.pool: fill = %s outside 14..%d (the data room)"):format(tostring(len), info.data_room), 2)
    end
    local ptrs = ffi.new("uint8_t *[?]", info.size)
    local n = check(C.surge_pool_data(id, ptrs, info.size), 2)
    for i = 0, n - 1 do t(ptrs[i], len, i) end
    check(C.surge_pool_fill(id, nil, len), 2)   -- nil bytes: set the length only
  elseif t ~= nil then
    error("surge.pool: template must be a string, a surge.proto template or a function", 2)
  end
  return self
end

function Pool:info()
  local i = ffi.new("struct surge_pool_info")
  check(C.surge_pool_info(self.id, i), 2)
  return { name = ffi.string(i.name), size = i.size, avail = i.avail,
           alloc_fail = tonumber(i.alloc_fail), data_room = i.data_room,
           template_len = i.tmpl_len, socket = i.socket, single_owner = i.single_owner == 1,
           owner_lcore = i.owner_lcore }
end

-- level: where errors point, counted from M.burst's caller (default: it).
function M.burst(pool, n, level)
  local b = C.surge_burst_new(pool, n)
  if b == nil then error(core.last_error(), (level or 1) + 1) end
  return ffi.gc(b, C.surge_burst_destroy)
end

function Pool:burst(n)
  local b = M.burst(self.id, n or 32, 2)
  return b
end

local Burst = {}
Burst.__index = Burst

-- Fills the burst with up to n (default: its capacity) template packets and
-- returns how many it got: fewer when the pool runs dry.
function Burst:alloc(n)
  local got = C.surge_burst_alloc(self, n or self.cap)
  if got == 0 then core.check_run() end     -- an empty pool, or a stopped run
  return got
end

function Burst:free()
  C.surge_burst_free(self)
end

function Burst:refcnt(i)
  local n = check(C.surge_burst_refcnt(self, i), 2)
  return n
end

function Burst:bytes(i)
  if i < 0 or i >= self.n then error(("burst:bytes(%d): the burst holds %d packets"):format(i, self.n), 2) end
  return ffi.string(self.data[i], self.len[i])
end

ffi.metatype("struct surge_burst", Burst)

return M
