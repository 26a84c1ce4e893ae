-- latency.lua - latency probes.
--
--   -- TX task: every 100th packet carries a sequence number and a timestamp
--   local probes = surge.latency.marker{ offset = t.l4 + 8, every = 100 }
--   burst:alloc(); probes:mark(burst); q:send(burst)
--
--   -- RX side: match them into a histogram
--   local lat = surge.latency.receiver{ offset = t.l4 + 8 }
--   q:recv(burst); lat:scan(burst)
--   lat:summary()  --> { probes, lost, duplicated, reordered, min_ns, mean_ns,
--                       p50_ns, p90_ns, p99_ns, p999_ns, max_ns }
--
-- The timestamp is written by C just before the driver takes the packet
-- (after any pacing wait). It is the TSC: sender and receiver must run in
-- one process (loopback, reflector), as in examples/latency.lua.
local ffi = require "ffi"
local core = require "surge.core"
local arg = require "surge.check"

local C, check = core.C, core.check
local M = {}

local Marker = {}
Marker.__index = Marker

local function offset(o, fn)
  return arg.expect(o, "integer 1..65000", fn, "offset (of 16 free payload bytes)")
end

-- opts.offset: where the 16 probe bytes go; opts.every: one probe per N packets.
function M.marker(opts)
  opts = arg.options(opts, { offset = 1, every = 1 }, "surge.latency.marker")
  local every = arg.field(opts, "every", "integer? 1..4294967295", "surge.latency.marker", 1)
  return setmetatable({ offset = offset(opts.offset, "surge.latency.marker"), every = every, left = 0, seq = 0 }, Marker)
end

-- Marks the burst's packets that are due to be probes; returns how many.
function Marker:mark(burst)
  arg.self(self, Marker, "marker:mark")
  arg.burst(burst, "marker:mark")
  local n, i, marked = burst.n, self.left, 0
  while i < n do
    if C.surge_probe_mark(burst, i, self.offset, self.seq) < 0 then arg.raise(core.last_error()) end
    self.seq = self.seq + 1
    marked = marked + 1
    i = i + self.every
  end
  self.left = i - n
  return marked
end

local Receiver = {}
Receiver.__index = Receiver

function M.receiver(opts)
  opts = arg.options(opts, { offset = 1 }, "surge.latency.receiver")
  local off = offset(opts.offset, "surge.latency.receiver")
  return setmetatable({ id = check(C.surge_latency_new(), 2), offset = off }, Receiver)
end

-- Matches the probes in a received burst; returns how many it found.
function Receiver:scan(burst)
  arg.self(self, Receiver, "receiver:scan")
  arg.burst(burst, "receiver:scan")
  local rc = C.surge_latency_scan(self.id, burst, self.offset)
  if rc < 0 then arg.raise(core.last_error()) end
  return rc
end

-- Adds one sample by hand (ns, sequence number): for tests and custom probes.
function Receiver:add(ns, seq)
  arg.self(self, Receiver, "receiver:add")
  arg.expect(ns, "number 0..1e15", "receiver:add", "ns")
  arg.expect(seq, "integer 0..4294967295", "receiver:add", "seq")
  check(C.surge_latency_add(self.id, ns, seq), 2)
end

function Receiver:percentile(q)
  arg.self(self, Receiver, "receiver:percentile")
  arg.expect(q, "number 0..100", "receiver:percentile", "q")
  return C.surge_latency_percentile(self.id, q)
end

function Receiver:summary()
  arg.self(self, Receiver, "receiver:summary")
  local s = ffi.new("struct surge_latency")
  check(C.surge_latency_get(self.id, s), 2)
  return { probes = tonumber(s.probes), lost = tonumber(s.lost), duplicated = tonumber(s.duplicated),
           reordered = tonumber(s.reordered), min_ns = s.min_ns, mean_ns = s.mean_ns,
           p50_ns = s.p50_ns, p90_ns = s.p90_ns, p99_ns = s.p99_ns, p999_ns = s.p999_ns,
           max_ns = s.max_ns }
end

-- The histogram's non-empty buckets: { low_ns = {...}, high_ns = {...}, count = {...} }.
function Receiver:buckets()
  local n = check(C.surge_latency_buckets(self.id, nil, nil, nil, 0), 2)
  local lo, hi, cnt = ffi.new("uint64_t[?]", n + 1), ffi.new("uint64_t[?]", n + 1), ffi.new("uint64_t[?]", n + 1)
  n = check(C.surge_latency_buckets(self.id, lo, hi, cnt, n), 2)
  local b = { low_ns = {}, high_ns = {}, count = {} }
  for k = 0, n - 1 do
    b.low_ns[k + 1], b.high_ns[k + 1], b.count[k + 1] = tonumber(lo[k]), tonumber(hi[k]), tonumber(cnt[k])
  end
  return b
end

-- Saves the histogram as CSV in HdrHistogram's percentile-distribution form:
-- one row per non-empty bucket, "Value,Percentile,TotalCount,1/(1-Percentile)"
-- with Value the bucket's upper bound in ns (the last row: the exact max).
-- Returns the rows written.
function Receiver:save(path)
  if type(path) ~= "string" or path == "" then error("receiver:save: expected a file name", 2) end
  local b = self:buckets()
  local total = 0
  for _, c in ipairs(b.count) do total = total + c end
  local f, err = io.open(path, "w")
  if not f then error("receiver:save: " .. tostring(err), 2) end
  f:write("Value,Percentile,TotalCount,1/(1-Percentile)\n")
  local acc, max = 0, self:summary().max_ns
  for i, c in ipairs(b.count) do
    acc = acc + c
    local p = acc / total
    local v = i == #b.count and math.min(b.high_ns[i], max) or b.high_ns[i]
    f:write(("%d,%.12f,%d,%s\n"):format(v, p, acc, p < 1 and ("%.2f"):format(1 / (1 - p)) or "Infinity"))
  end
  f:close()
  return #b.count
end

-- One line: "probes 100000 lost 0 dup 0 reordered 0 | min 1.2 mean 3.4 p50 ... us"
function M.format(s)
  arg.expect(s, "table", "surge.latency.format", "summary")
  return ("probes %d lost %d dup %d reordered %d | latency us: min %.2f mean %.2f p50 %.2f "
    .. "p90 %.2f p99 %.2f p99.9 %.2f max %.2f"):format(s.probes, s.lost, s.duplicated,
    s.reordered, s.min_ns / 1e3, s.mean_ns / 1e3, s.p50_ns / 1e3, s.p90_ns / 1e3,
    s.p99_ns / 1e3, s.p999_ns / 1e3, s.max_ns / 1e3)
end

return M
