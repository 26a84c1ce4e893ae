-- pool.lua - template pools and bursts.
--
--   local pool  = surge.pool{ template = surge.proto.udp{ size = 60 } }
--   local burst = pool:burst(32)
--   burst:alloc()                  -- n packets, each already holding the template
--   burst.data[i], burst.len[i]    -- bytes and length of packet i (0-based)
local ffi = require("ffi")
local core = require("surge.core")
local check = require("surge.check")

local C, rc_check = core.C, core.check
local M = {}

local class = require("surge.class")
local Pool = class.new("pool", { "id" })
Pool.__handle = function(p) return ("pool(%d)"):format(p.id) end

M.Pool = Pool   -- the metatable of pool handles (surge.size checks its pool option)

function M.wrap(id) return setmetatable({ id = id }, Pool) end

-- Tells C where the template's first IP and L4 headers are, so ports with
-- checksum offload can compute them (core/dataplane/offload.c).
local l4_protos = { udp = 17, tcp = 6 }
local function set_layout(id, t, reset)
  for i, l in ipairs(t.layers or {}) do
    if l.name == "ip4" or l.name == "ip6" then
      local nxt = t.layers[i + 1]
      rc_check(C.surge_pool_layout(id, l.off, l.len, l.name == "ip4" and 4 or 6,
                                nxt and l4_protos[nxt.name] or 0), 3)
      return
    end
  end
  if reset then rc_check(C.surge_pool_layout(id, 0, 0, 0, 0), 3) end   -- a refill: no IP now
end

local known = { size = 1, cache = 1, data_room = 1, template = 1, shared = 1, socket = 1, fill = 1 }

-- What `shared` is when not given, in this VM: false in a task (its pool is
-- its lcore's own: SP/SC ring, no atomics), true in a task that runs a
-- function typed at the prompt (repl/task.lua sets it as it loads one):
-- there a pool is often sent on a port that hands its mbufs to a receiver
-- on another lcore (net_ring, memif), and the prompt is no place for that trap.
local shared_default = false
function M.share_by_default() shared_default = true end

-- opts.template: a string of frame bytes, a template from surge.proto, or a
-- function(buf, len) called once per mbuf to write its bytes (opts.size gives
-- the length); opts.shared = true for a pool several lcores free into.
function M.new(opts)
  opts = check.options(opts, known, "surge.pool")
  check.expect(opts.size, "integer? 0..16777216", "surge.pool", "size")
  check.expect(opts.cache, "integer? 0..512", "surge.pool", "cache")   -- DPDK's RTE_MEMPOOL_CACHE_MAX_SIZE
  check.expect(opts.data_room, "integer? 0..65535", "surge.pool", "data_room")
  check.expect(opts.socket, "integer? -1..1023", "surge.pool", "socket")
  check.expect(opts.shared, "boolean?", "surge.pool", "shared")
  check.expect(opts.template, "string|table|function?", "surge.pool", "template")
  if type(opts.template) == "string" and #opts.template > 65535 then
    check.raise(("surge.pool: template of %d bytes: at most 65535"):format(#opts.template))
  end
  if type(opts.template) == "table" then
    local t = opts.template
    check.expect(t.bytes, "string", "surge.pool", "template.bytes (a template from surge.proto)")
    if t.size ~= nil and t.size ~= #t.bytes then
      check.raise(("surge.pool: template.size = %s, but template.bytes holds %d bytes"):format(check.show(t.size), #t.bytes))
    end
  end
  local tb = type(opts.template) == "table" and opts.template.bytes or opts.template
  if type(tb) == "string" and #tb < 14 then   -- as fill = LENGTH: a frame holds an Ethernet header
    check.raise(("surge.pool: template of %d bytes: a frame holds at least the 14-byte Ethernet header"):format(#tb))
  end
  local conf = ffi.new("struct surge_pool_conf")
  conf.size = opts.size or 0
  conf.cache = opts.cache or 0
  conf.data_room = opts.data_room or 0
  conf.socket = opts.socket or -1
  -- a pool made in a task belongs to that lcore: SP/SC ring, no atomics
  local shared = opts.shared
  if shared == nil then shared = shared_default end
  conf.single_owner = (C.surge_is_main() == 0 and not shared) and 1 or 0
  local id = rc_check(C.surge_pool_create(conf), 2)
  local self = setmetatable({ id = id }, Pool)
  local t = opts.template
  if type(t) == "table" then
    check.expect(t.bytes, "string", "surge.pool", "template.bytes (a template from surge.proto)")
    set_layout(id, t)
    t = t.bytes
  end
  if type(t) == "string" then
    rc_check(C.surge_pool_fill(id, t, #t), 2)
  elseif type(t) == "function" then
    local len = opts.fill or check.raise("surge.pool: a template function needs fill = LENGTH")
    local info = self:info()
    check.number(len, 14, info.data_room, true, "surge.pool", "fill (up to the data room)")
    local ptrs = ffi.new("uint8_t *[?]", info.size)
    local n = rc_check(C.surge_pool_data(id, ptrs, info.size), 2)
    for i = 0, n - 1 do t(ptrs[i], len, i) end
    rc_check(C.surge_pool_fill(id, nil, len), 2)   -- nil bytes: set the length only
  elseif opts.fill ~= nil then
    check.raise("surge.pool: fill = LENGTH goes with a template function")
  end
  return self
end

-- Fills an idle pool (every mbuf back in it) with another template: pools
-- are never freed during a run, so a program that changes its templates
-- (surge otg's configs) reuses them. Refused (EBUSY) while mbufs are out.
function Pool:refill(t)
  check.self(self, Pool, "pool:refill")
  check.expect(t, "table", "pool:refill", "t (a template from surge.proto)")
  check.expect(t.bytes, "string", "pool:refill", "t.bytes (a template from surge.proto)")
  if #t.bytes < 14 then check.raise(("pool:refill: template of %d bytes: at least 14"):format(#t.bytes)) end
  rc_check(C.surge_pool_fill(self.id, t.bytes, #t.bytes), 2)
  set_layout(self.id, t, true)
  return self
end

function Pool:info()
  check.self(self, Pool, "pool:info")
  local i = ffi.new("struct surge_pool_info")
  rc_check(C.surge_pool_info(self.id, i), 2)
  return { name = ffi.string(i.name), size = i.size, avail = i.avail,
           alloc_fail = tonumber(i.alloc_fail), data_room = i.data_room,
           template_len = i.tmpl_len, socket = i.socket, single_owner = i.single_owner == 1,
           owner_lcore = i.owner_lcore }
end

-- A burst of capacity n drawing from pool id (-1: receive only).
function M.burst(pool, n)
  check.expect(n, "integer 1..256", "pool:burst", "n")
  local b = C.surge_burst_new(pool, n)
  if b == nil then check.raise(core.last_error()) end
  return ffi.gc(b, C.surge_burst_destroy)
end

function Pool:burst(n)
  check.self(self, Pool, "pool:burst")
  local b = M.burst(self.id, n or 32)
  return b
end

-- Bursts are cdata: packets' bytes and lengths are written in place, while
-- n, cap, pool and mbuf (Lua names ro_*, see surge.h) only C changes.
-- methods only: a burst's fields are the struct's and the read-only ones below
local Burst = class.new("burst")
local void_ro = ffi.typeof("void *const *")
local data_ro = ffi.typeof("uint8_t *const *")
local read_only = { n = true, cap = true, pool = true, mbuf = true, data = true }

local function index(b, k)
  -- k is a constant at each call site: the JIT folds this chain away
  if k == "n" then return b.ro_n end
  if k == "cap" then return b.ro_cap end
  if k == "pool" then return b.ro_pool end
  if k == "mbuf" then return ffi.cast(void_ro, b.ro_mbuf) end   -- elements read-only too
  -- the bytes behind data[i] are the script's, the pointers are not
  if k == "data" then return ffi.cast(data_ro, b.ro_data) end
  return Burst[k]   -- a method, or "burst has no field" from the class
end

local function newindex(_, k)
  if read_only[k] then check.raise(("burst.%s is read-only (surge manages it)"):format(tostring(k))) end
  class.unknown("burst", k)
end

-- Fills the burst with up to n (default: its capacity) template packets and
-- returns how many it got: fewer when the pool runs dry.
function Burst:alloc(n)
  check.burst(self, "burst:alloc")
  local cap = self.ro_cap
  if n ~= nil then check.number(n, 0, cap, true, "burst:alloc", "n (at most the burst's capacity)") end
  local got = C.surge_burst_alloc(self, n or cap)
  if got == 0 then core.check_run() end     -- an empty pool, or a stopped run
  return got
end

function Burst:free()
  check.burst(self, "burst:free")
  C.surge_burst_free(self)
end

function Burst:refcnt(i)
  check.burst(self, "burst:refcnt")
  check.expect(i, "integer 0..255", "burst:refcnt", "i")
  local n = rc_check(C.surge_burst_refcnt(self, i), 2)
  return n
end

function Burst:bytes(i)
  check.burst(self, "burst:bytes")
  check.number(i, 0, self.ro_n - 1, true, "burst:bytes", "i (a packet the burst holds)")
  rc_check(C.surge_burst_frame_ok(self, i), 2)
  return ffi.string(self.ro_data[i], self.len[i])
end

ffi.metatype("struct surge_burst", { __index = index, __newindex = newindex })

return M
