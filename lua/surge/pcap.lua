-- pcap.lua - write bursts to pcap files; replay pcap files into bursts.
--
--   local pcap = require("surge.pcap")            -- surge.pcap
--
--   local w = pcap.writer("out.pcap", { snaplen = 128, nano = true })
--   q:recv(b); w:write(b)          -- every packet of the burst: b.tsc as its time (0: now)
--   w:close()                      -- flushes; returns the packets written
--
--   local r = pcap.reader("in.pcap", { loop = 3, timing = "original" })
--   r:pace(q)                      -- optional: the bursts it fills pace whatever queue sends them
--   while r:fill(b) > 0 do q:send(b) end
--
-- A reader holds the whole file in memory from the moment it is opened, so a
-- damaged file is an error then (naming the file and the record), and replay
-- reads no disk. Options:
--   loop   = N (passes over the file, default 1) or true (forever)
--   timing = "fast" (no gaps) | "original" (default) | { scale = X } | "scale=X" | X
--            (a number: the file's gaps divided by X, so 2 replays twice as fast)
-- For a fixed rate instead, use timing = "fast" and q:set_rate("1mpps").
-- Readers and writers pass to tasks like ports and pools (as ids); one lcore
-- at a time uses each. What a script leaves open is closed when the run ends.
local ffi = require("ffi")
local core = require("surge.core")
local check = require("surge.check")

local C, rc_check = core.C, core.check
local M = {}

local EAGAIN = 11

local class = require("surge.class")
local port = require("surge.port")
local Writer, Reader = class.new("writer", { "id", "path" }), class.new("reader", { "id", "path" })
Writer.__handle = function(w) return ("pcap_writer(%d,%q)"):format(w.id, w.path) end
Reader.__handle = function(r) return ("pcap_reader(%d,%q)"):format(r.id, r.path) end
Writer.__tostring = function(w) return ("pcap writer '%s'"):format(w.path) end
Reader.__tostring = function(r) return ("pcap reader '%s'"):format(r.path) end

function M.wrap_writer(id, path) return setmetatable({ id = id, path = path or "?" }, Writer) end
function M.wrap_reader(id, path) return setmetatable({ id = id, path = path or "?" }, Reader) end

-- Handle constructors for task data (merged into surge.handles by init.lua).
M.handles = { pcap_writer = M.wrap_writer, pcap_reader = M.wrap_reader }

local function options(opts, known, what)
  return check.options(opts, known, what)
end

local function info_of(id, level)
  local i = ffi.new("struct surge_pcap_info")
  rc_check(C.surge_pcap_info(id, i), level + 1)
  return {
    records = tonumber(i.records), bytes = tonumber(i.bytes), next = tonumber(i.next),
    duration = tonumber(i.duration_ns) / 1e9, speed = i.speed, loops = i.loops, pass = i.pass,
    snaplen = i.snaplen, linktype = i.linktype, max_len = i.max_len, nano = i.nano == 1,
    writer = i.writer == 1,
  }
end

-- Writer ------------------------------------------------------------------

-- opts.snaplen: bytes kept of each packet (default 65535); opts.nano = true
-- for nanosecond timestamps (default microseconds).
function M.writer(path, opts)
  check.expect(path, "string", "surge.pcap.writer", "path")
  if path == "" then check.raise("surge.pcap.writer: path: expected a file name, got \"\"") end
  opts = options(opts, { snaplen = 1, nano = 1 }, "surge.pcap.writer")
  local snaplen = check.field(opts, "snaplen", "integer? 0..262144", "surge.pcap.writer", 0)
  check.expect(opts.nano, "boolean?", "surge.pcap.writer", "nano")
  local id = C.surge_pcap_open_write(path, snaplen, opts.nano and 1 or 0)
  if id < 0 then error(core.last_error(), 0) end   -- about the file, not the script: one line
  return M.wrap_writer(id, path)
end

-- Writes every packet of the burst (the burst keeps them); returns the count.
-- Received bursts carry their receive time in b.tsc; a burst with b.tsc == 0
-- is stamped now. Set b.tsc yourself for made-up times (surge.tsc() units).
function Writer:write(burst)
  check.self(self, Writer, "writer:write")
  check.burst(burst, "writer:write")
  local rc = C.surge_pcap_write(self.id, burst)
  if rc < 0 then rc_check(rc) end
  return rc
end

-- Reader ------------------------------------------------------------------

local function tx_queue(q, fn)
  check.handle(q, port.TxQueue, fn, "q", "a tx queue (port:txq(i))")
end

local function parse_timing(t, level)
  if t == nil or t == "original" then return 1 end
  if t == "fast" then return 0 end
  local scale
  if type(t) == "number" then scale = t
  elseif type(t) == "table" then
    check.options(t, { scale = 1 }, "surge.pcap: timing")
    scale = t.scale
  elseif type(t) == "string" then scale = tonumber(t:match("^scale=(.+)$") or t:match("^x(.+)$") or "")
  end
  if type(scale) ~= "number" or not (scale > 0 and scale <= 1e9) then
    check.raise(("surge.pcap: timing: expected \"fast\", \"original\", { scale = X } or \"scale=X\" with X in 0<..1e9, got %s")
      :format(check.show(t)))
  end
  return scale
end

local function parse_loop(l, level)
  if l == nil or l == false then return 1 end
  if l == true then return 0 end   -- C's 0: forever (a number is passes: 0 or -1 is refused)
  return check.expect(l, "integer 1..4294967295", "surge.pcap", "loop (passes, or true for forever)")
end

-- Sets how fills walk the file: loop and timing as for surge.pcap.reader.
function Reader:replay(opts)
  check.self(self, Reader, "reader:replay")
  opts = options(opts, { loop = 1, timing = 1 }, "surge.pcap.reader")
  rc_check(C.surge_pcap_replay(self.id, parse_loop(opts.loop, 2), parse_timing(opts.timing, 2)), 2)
  return self
end

function M.reader(path, opts)
  check.expect(path, "string", "surge.pcap.reader", "path")
  if path == "" then check.raise("surge.pcap.reader: path: expected a file name, got \"\"") end
  opts = options(opts, { loop = 1, timing = 1 }, "surge.pcap.reader")
  local loops, speed = parse_loop(opts.loop, 2), parse_timing(opts.timing, 2)
  local id = C.surge_pcap_open_read(path)
  if id < 0 then error(core.last_error(), 0) end   -- about the file, not the script: one line
  rc_check(C.surge_pcap_replay(id, loops, speed), 2)
  return M.wrap_reader(id, path)
end

-- Replaces the burst's packets with the next records (fresh mbufs of its
-- pool, at most max or the burst's capacity) and their gaps in b.gap_ns[];
-- returns the count, 0 once the last pass is done. An empty pool is waited
-- for while the run goes on.
function Reader:fill(burst, max)
  check.self(self, Reader, "reader:fill")
  check.burst(burst, "reader:fill")
  if max ~= nil then check.number(max, 0, burst.ro_cap, true, "reader:fill", "max (at most the burst's capacity)") end
  local rc = C.surge_pcap_fill(self.id, burst, max or 0)
  if rc >= 0 then return rc end
  while rc == -EAGAIN do
    if C.surge_running() == 0 then return 0 end
    rc = C.surge_pcap_fill(self.id, burst, max or 0)
  end
  if rc < 0 then rc_check(rc) end
  return rc
end

-- Starts again at the first record, first pass.
function Reader:rewind()
  check.self(self, Reader, "reader:rewind")
  rc_check(C.surge_pcap_rewind(self.id), 2)
  return self
end

-- Both kinds ------------------------------------------------------------

-- count() and info() (records, bytes, ... of the file), and close(): a
-- writer flushes and closes the file and returns the packets written, a
-- reader frees the records and returns how many there were.
local function file_methods(cls, kind)
  local count_fn, info_fn, close_fn = kind .. ":count", kind .. ":info", kind .. ":close"
  function cls:count() check.self(self, cls, count_fn) return info_of(self.id, 2).records end
  function cls:info() check.self(self, cls, info_fn) local i = info_of(self.id, 2) return i end
  function cls:close()
    check.self(self, cls, close_fn)
    return tonumber(rc_check(C.surge_pcap_close(self.id), 2))
  end
end
file_methods(Writer, "writer")
file_methods(Reader, "reader")

-- Paces tx queue q for this reader's timing: the gaps the fills write
-- (original or scaled timing), or unpaced for "fast".
function Reader:pace(q)
  check.self(self, Reader, "reader:pace")
  tx_queue(q, "reader:pace")
  if info_of(self.id, 2).speed > 0 then
    M.pace_gaps(q, 3)
  else
    rc_check(C.surge_txq_set_rate(q.port, q.id, ffi.new("struct surge_rate")), 2)
    q.gap = nil
  end
  return q
end

-- Makes q wait burst.gap_ns[i] after packet i (SURGE_PACE_GAPS), as a
-- reader's fills set them. Works from master on a task's queue too.
function M.pace_gaps(q, level)
  tx_queue(q, "surge.pcap.pace_gaps")
  local r = ffi.new("struct surge_rate")
  r.pattern = C.SURGE_PACE_GAPS
  r.unit = C.SURGE_RATE_PPS
  rc_check(C.surge_txq_set_rate(q.port, q.id, r), level or 2)
  q.gap = nil          -- a Lua gap function would overwrite gap_ns at send
  return q
end

return M
