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
--   lat:each(function(ns, seq, dup) ... end)   -- every probe scan matches, to Lua
--   lat:buckets()  --> { { low_ns, high_ns, count }, ... } non-empty histogram buckets
--
-- Probe format version 1 (surge.h, docs/architecture.md): 16 bytes, "SRGP",
-- uint32 sequence number, uint64 send TSC. A receiving lcore that has not
-- chosen its idle policy polls with "pause" once it has a receiver (the
-- default "sleep" would add its sleeps to the latencies); it says so once.
--
-- The timestamp is written by C just before the driver takes the packet
-- (after any pacing wait). It is the TSC: sender and receiver must run in
-- one process (loopback, reflector), as in examples/latency.lua.
local ffi = require("ffi")
local core = require("surge.core")
local check = require("surge.check")

local C, rc_check = core.C, core.check
local M = {}

local class = require("surge.class")
local results_file = require("surge.results.file")
local Marker = class.new("marker", { "offset", "every", "left", "seq" })

local function offset(o, fn)
  return check.expect(o, "integer 1..65000", fn, "offset (of 16 free payload bytes)")
end

-- opts.offset: where the 16 probe bytes go; opts.every: one probe per N packets.
function M.marker(opts)
  opts = check.options(opts, { offset = 1, every = 1 }, "surge.latency.marker")
  local every = check.field(opts, "every", "integer? 1..4294967295", "surge.latency.marker", 1)
  return setmetatable({ offset = offset(opts.offset, "surge.latency.marker"), every = every, left = 0, seq = 0 }, Marker)
end

-- Marks the burst's packets that are due to be probes; returns how many.
function Marker:mark(burst)
  check.self(self, Marker, "marker:mark")
  check.burst(burst, "marker:mark")
  local n, i, marked = burst.n, self.left, 0
  while i < n do
    if C.surge_probe_mark(burst, i, self.offset, self.seq) < 0 then check.raise(core.last_error()) end
    self.seq = self.seq + 1
    marked = marked + 1
    i = i + self.every
  end
  self.left = i - n
  return marked
end

-- fn, buf: what each(fn) set; false: none
local Receiver = class.new("receiver", { "id", "offset", "fn", "buf" })

function M.receiver(opts)
  opts = check.options(opts, { offset = 1 }, "surge.latency.receiver")
  local off = offset(opts.offset, "surge.latency.receiver")
  return setmetatable({ id = rc_check(C.surge_latency_new(), 2), offset = off, fn = false, buf = false }, Receiver)
end

-- Matches the probes in a received burst; returns how many it found. With
-- a function set by each(), calls it for every probe: fn(ns, seq, duplicate).
function Receiver:scan(burst)
  check.self(self, Receiver, "receiver:scan")
  check.burst(burst, "receiver:scan")
  local fn = self.fn
  if not fn then
    local rc = C.surge_latency_scan(self.id, burst, self.offset)
    if rc < 0 then check.raise(core.last_error()) end
    return rc
  end
  local buf = self.buf
  local rc = C.surge_latency_scan_samples(self.id, burst, self.offset, buf, C.SURGE_BURST_MAX)
  if rc < 0 then check.raise(core.last_error()) end
  for i = 0, rc - 1 do fn(tonumber(buf[i].ns), tonumber(buf[i].seq), buf[i].duplicate == 1) end
  return rc
end

-- Hands every probe the following scans match to fn(ns, seq, duplicate);
-- each(nil) stops. Duplicates are passed too (flagged), the histogram skips them.
function Receiver:each(fn)
  if fn ~= nil and type(fn) ~= "function" then
    check.raise("latency receiver: each(fn) takes a function (or nil)")
  end
  self.fn = fn or false
  if fn and not self.buf then self.buf = ffi.new("struct surge_latency_sample[?]", C.SURGE_BURST_MAX) end
  return self
end

-- The histogram's non-empty buckets, ascending: { low_ns, high_ns, count }
-- (bounds inclusive; a bucket is at most 1/32 of its values wide).
function Receiver:buckets()
  local n = rc_check(C.surge_latency_buckets(self.id, nil, 0), 2)
  local arr = ffi.new("struct surge_hist_bucket[?]", math.max(n, 1))
  n = math.min(n, rc_check(C.surge_latency_buckets(self.id, arr, n), 2))
  local out = {}
  for i = 0, n - 1 do
    out[i + 1] = { low_ns = tonumber(arr[i].low_ns), high_ns = tonumber(arr[i].high_ns),
                   count = tonumber(arr[i].count) }
  end
  return out
end

-- Adds one sample by hand (ns, sequence number): for tests and custom probes.
function Receiver:add(ns, seq)
  check.self(self, Receiver, "receiver:add")
  check.expect(ns, "number 0..1e15", "receiver:add", "ns")
  check.expect(seq, "integer 0..4294967295", "receiver:add", "seq")
  rc_check(C.surge_latency_add(self.id, ns, seq), 2)
end

function Receiver:percentile(q)
  check.self(self, Receiver, "receiver:percentile")
  check.expect(q, "number 0..100", "receiver:percentile", "q")
  return C.surge_latency_percentile(self.id, q)
end

function Receiver:summary()
  check.self(self, Receiver, "receiver:summary")
  local s = ffi.new("struct surge_latency")
  rc_check(C.surge_latency_get(self.id, s), 2)
  return { probes = tonumber(s.probes), lost = tonumber(s.lost), duplicated = tonumber(s.duplicated),
           reordered = tonumber(s.reordered), min_ns = s.min_ns, mean_ns = s.mean_ns,
           p50_ns = s.p50_ns, p90_ns = s.p90_ns, p99_ns = s.p99_ns, p999_ns = s.p999_ns,
           max_ns = s.max_ns }
end

-- Saves the histogram as CSV in HdrHistogram's percentile-distribution form:
-- one row per non-empty bucket, "Value,Percentile,TotalCount,1/(1-Percentile)"
-- with Value the bucket's upper bound in ns (the last row: the exact max).
-- Returns the rows written.
function Receiver:save(path)
  if type(path) ~= "string" or path == "" then check.raise("receiver:save: expected a file name") end
  local b = self:buckets()
  local total = 0
  for _, r in ipairs(b) do total = total + r.count end
  local rows = { "Value,Percentile,TotalCount,1/(1-Percentile)\n" }
  local acc, max = 0, self:summary().max_ns
  for i, r in ipairs(b) do
    acc = acc + r.count
    local p = acc / total
    local v = i == #b and math.min(r.high_ns, max) or r.high_ns
    rows[#rows + 1] = ("%d,%.12f,%d,%s\n"):format(v, p, acc, p < 1 and ("%.2f"):format(1 / (1 - p)) or "Infinity")
  end
  local ok, err = results_file.save(path, table.concat(rows))
  if not ok then check.raise("receiver:save: " .. path .. ": " .. err) end
  return #b
end

-- One line: "probes 100000 lost 0 dup 0 reordered 0 | min 1.2 mean 3.4 p50 ... us"
function M.format(s)
  check.expect(s, "table", "surge.latency.format", "summary")
  for _, k in ipairs({ "probes", "lost", "duplicated", "reordered" }) do
    check.expect(s[k], "integer >=0", "surge.latency.format", "summary." .. k)
  end
  for _, k in ipairs({ "min_ns", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns" }) do
    check.expect(s[k], "number", "surge.latency.format", "summary." .. k)
  end
  return ("probes %d lost %d dup %d reordered %d | latency us: min %.2f mean %.2f p50 %.2f "
    .. "p90 %.2f p99 %.2f p99.9 %.2f max %.2f"):format(s.probes, s.lost, s.duplicated,
    s.reordered, s.min_ns / 1e3, s.mean_ns / 1e3, s.p50_ns / 1e3, s.p90_ns / 1e3,
    s.p99_ns / 1e3, s.p999_ns / 1e3, s.max_ns / 1e3)
end

return M
