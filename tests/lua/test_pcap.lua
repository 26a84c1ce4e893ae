-- pcap writing and replay from Lua (surge.pcap), in the main VM. Run with
-- --vdev net_ring0 (port 0, its own loopback) --vdev net_null0,no-rx=1.
--
-- Proves: a writer stores every packet of a burst byte for byte, stamped
-- with burst.tsc (or now), and a reader gives them back in order with the
-- original gaps in gap_ns[] (scaled, or none for "fast"); loop = N gives N
-- passes then 0, loop = true never ends, rewind starts over; packets received
-- on a loopback port are written with their receive time; records larger
-- than the pool's mbufs, truncated and garbage files are errors naming the
-- file and the record, and leave no mbuf behind; bad options are refused;
-- readers and writers cross to tasks as handles.
local surge = require("surge")
local pcap = require("surge.pcap")
local ffi = require("ffi")

local T = {}

local PREFIX = ("%s/surge-test-pcap-%d-"):format(os.getenv("TMPDIR") or "/tmp",
  math.floor(tonumber(surge.tsc()) % 1e9))
local function tmp(name) return PREFIX .. name end

local errors = require("surge.vm.testrun").errors

local function esc(s) return (s:gsub("%p", "%%%0")) end

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function write_file(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- Frame k: `size` bytes, each byte a function of k and its offset.
local function frame(k, size)
  local t = {}
  for i = 1, size do t[i] = string.char((k * 31 + i * 7) % 256) end
  return table.concat(t)
end

local SIZES = { 60, 64, 128, 333, 1000, 1514, 42 }
local GAPS_MS = { 0, 2, 7, 1, 13, 5, 3 }          -- before each frame

local pool
local function shared_pool()
  pool = pool or surge.pool{ size = 255, shared = true }
  return pool
end

-- Writes SIZES as separate single-packet bursts whose tsc is spaced by GAPS_MS.
local function make_file(path, opts)
  local w = pcap.writer(path, opts)
  local b = shared_pool():burst(1)
  local hz = surge.tsc_hz()
  local t = surge.tsc()
  for k, size in ipairs(SIZES) do
    t = t + math.floor(GAPS_MS[k] * hz / 1000)
    assert(b:alloc(1) == 1)
    ffi.copy(b.data[0], frame(k, size), size)
    b.len[0] = size
    b.tsc = t
    assert(w:write(b) == 1)
    b:free()
  end
  assert(w:count() == #SIZES)
  assert(w:close() == #SIZES, "close returns the packets written")
  return path
end

local function assert_pool_full()
  local info = shared_pool():info()
  assert(info.avail == info.size, ("pool: %d of %d mbufs back"):format(info.avail, info.size))
end

function T.write_then_read_back_bytes_and_gaps()
  local path = make_file(tmp("rt.pcap"), { nano = true })
  local r = pcap.reader(path)
  local info = r:info()
  local total = 0
  for _, s in ipairs(SIZES) do total = total + s end
  assert(r:count() == #SIZES and info.bytes == total and info.max_len == 1514, "records and bytes")
  assert(math.abs(info.duration - 0.031) < 1e-6, "duration " .. info.duration)
  local b = shared_pool():burst(32)
  assert(r:fill(b) == #SIZES)
  for k, size in ipairs(SIZES) do
    assert(b.len[k - 1] == size, "length of frame " .. k)
    assert(b:bytes(k - 1) == frame(k, size), "bytes of frame " .. k)
    local want = (GAPS_MS[k + 1] or 0) * 1e6            -- gap after frame k
    assert(math.abs(b.gap_ns[k - 1] - want) <= 2, ("gap after %d: %d ns, want %d"):format(k, b.gap_ns[k - 1], want))
  end
  assert(r:fill(b) == 0 and b.n == 0, "end of the file")
  b:free()
  assert(r:close() == #SIZES)
  errors("is closed", r.count, r)
  os.remove(path)
  assert_pool_full()
end

-- A writer refuses what a send refuses (a length past the mbuf, or shorter
-- than an Ethernet header) before writing any record of the burst.
function T.writer_refuses_bad_lengths()
  local path = tmp("badlen.pcap")
  local w = pcap.writer(path)
  local b = shared_pool():burst(4)
  assert(b:alloc(3) == 3)
  for _, bad in ipairs({ 65535, 3 }) do
    b.len[1] = bad
    errors("packet 1 of the burst has length " .. bad .. ", outside 14%.%.", w.write, w, b)
  end
  b.len[1] = 60
  assert(w:write(b) == 3)
  b:free()
  assert(w:close() == 3, "only the good burst was written")
  local r = pcap.reader(path)
  assert(r:count() == 3)
  r:close()
  os.remove(path)
  assert_pool_full()
end

function T.microsecond_files_and_snaplen()
  local path = make_file(tmp("us.pcap"), { snaplen = 100 })
  local r = pcap.reader(path)
  local b = shared_pool():burst(32)
  assert(r:fill(b) == #SIZES)
  for k, size in ipairs(SIZES) do
    local keep = math.min(size, 100)
    assert(b.len[k - 1] == keep and b:bytes(k - 1) == frame(k, size):sub(1, keep), "snaplen cuts frame " .. k)
    local want = (GAPS_MS[k + 1] or 0) * 1e6
    assert(math.abs(b.gap_ns[k - 1] - want) <= 1000, "microsecond gaps")
  end
  b:free()
  r:close()
  os.remove(path)
end

function T.loops_timing_and_rewind()
  local path = make_file(tmp("loop.pcap"), { nano = true })
  local r = pcap.reader(path, { loop = 3, timing = { scale = 2 } })
  local b = shared_pool():burst(4)
  local seen, gaps = {}, {}
  while true do
    local n = r:fill(b)
    if n == 0 then break end
    for i = 0, n - 1 do seen[#seen + 1] = b.len[i]; gaps[#gaps + 1] = b.gap_ns[i] end
    b:free()
  end
  assert(#seen == 3 * #SIZES, "three passes: " .. #seen)
  for i, len in ipairs(seen) do
    local k = (i - 1) % #SIZES + 1
    assert(len == SIZES[k], "order in pass")
    local want = (GAPS_MS[k + 1] or 0) * 1e6 / 2
    assert(math.abs(gaps[i] - want) <= 2, ("scaled gap %d: %d, want %d"):format(i, gaps[i], want))
  end
  assert(r:info().pass == 2)
  r:rewind()
  assert(r:info().next == 0 and r:info().pass == 0)
  r:replay{ loop = true, timing = "fast" }
  local n = 0
  for _ = 1, 10 do
    local got = r:fill(b)
    assert(got == 4, "forever: always a full burst")
    for i = 0, got - 1 do assert(b.gap_ns[i] == 0, "fast: no gaps") end
    n = n + got
    b:free()
  end
  assert(n == 40)
  r:replay{ timing = "scale=0.5" }
  assert(r:info().speed == 0.5 and r:info().loops == 1)
  r:close()
  os.remove(path)
  assert_pool_full()
end

function T.received_packets_are_written_with_their_time()
  local port = surge.port("net_ring0", { rxq = 1, txq = 1 })
  local path = tmp("rx.pcap")
  local src = make_file(tmp("src.pcap"), { nano = true })
  local r = pcap.reader(src, { timing = "fast" })
  local w = pcap.writer(path, { nano = true })
  local tx, rx = shared_pool():burst(32), shared_pool():burst(32)
  local before = os.time()
  assert(r:fill(tx) == #SIZES)
  assert(port:txq(0):send(tx) == #SIZES)
  assert(port:rxq(0):recv(rx) == #SIZES)
  assert(rx.tsc ~= 0)
  assert(w:write(rx) == #SIZES)
  rx:free()
  assert(w:close() == #SIZES)
  local back = pcap.reader(path)
  assert(back:fill(tx) == #SIZES)
  for k, size in ipairs(SIZES) do assert(tx:bytes(k - 1) == frame(k, size), "looped frame " .. k) end
  for i = 0, #SIZES - 1 do assert(tx.gap_ns[i] == 0, "one burst, one time") end
  tx:free()
  -- the file's time is the wall clock at receive
  local raw = read_file(path)
  local sec = raw:byte(25) + raw:byte(26) * 256 + raw:byte(27) * 65536 + raw:byte(28) * 16777216
  assert(math.abs(sec - before) <= 5, ("timestamp %d, now %d"):format(sec, before))
  back:close()
  r:close()
  os.remove(path)
  os.remove(src)
  assert_pool_full()
end

function T.record_larger_than_the_data_room()
  local path = make_file(tmp("big.pcap"))
  local small = surge.pool{ size = 63, data_room = 128, shared = true }
  local r = pcap.reader(path)
  local b = small:burst(8)
  local e = errors("record 4 holds 333 bytes", r.fill, r, b)
  assert(e:match(esc(path)) and e:match("data_room = 1514"), e)
  assert(b.n == 0 and small:info().avail == 63, "nothing kept")
  assert(r:info().next == 0, "the cursor did not move")
  local big = shared_pool():burst(8)
  assert(r:fill(big) == #SIZES, "a pool with room reads it")
  big:free()
  r:close()
  os.remove(path)
end

function T.truncated_and_garbage_files()
  local path = make_file(tmp("full.pcap"))
  local raw = read_file(path)
  local cut = tmp("cut.pcap")
  write_file(cut, raw:sub(1, #raw - 10))
  local e = errors("record 7", pcap.reader, cut)
  assert(e:match(esc(cut)) and e:match("truncated"), e)
  assert(not e:match("\n"), "one line")
  assert(not e:match("^[^\n]-%.lua:%d+:"), "no script position: " .. e)
  write_file(cut, raw:sub(1, 24 + 16 + 30))            -- inside record 1
  errors(esc(cut) .. "': record 1: .*truncated", pcap.reader, cut)
  write_file(cut, raw:sub(1, 10))                      -- inside the file header
  errors(esc(cut) .. "'.*truncated", pcap.reader, cut)
  write_file(cut, ("garbage!"):rep(100))
  errors(esc(cut) .. "'.*unknown file format", pcap.reader, cut)
  errors("No such file", pcap.reader, tmp("nope.pcap"))
  os.remove(cut)
  os.remove(path)
end

local function r_id()
  local path = make_file(tmp("r.pcap"))
  local r = pcap.reader(path)
  os.remove(path)
  return r.id                         -- left open: closed at the end of the run
end

function T.bad_options()
  errors("unknown option 'loops'", pcap.reader, "x.pcap", { loops = 2 })
  errors('timing: expected .* got "slow"', pcap.reader, "x.pcap", { timing = "slow" })
  errors("timing: expected .* got 0", pcap.reader, "x.pcap", { timing = 0 })
  errors("loop .*got %-1", pcap.reader, "x.pcap", { loop = -1 })
  errors("unknown option 'nanos'", pcap.writer, "x.pcap", { nanos = true })
  errors("cannot write", pcap.writer, "/nonexistent-dir/x.pcap")
  local w = pcap.writer(tmp("w.pcap"))
  local b = shared_pool():burst(2)
  errors("open for writing, not reading", function() pcap.wrap_reader(w.id, "w"):fill(b) end)
  errors("open for reading, not writing", function() pcap.wrap_writer(r_id(), "r"):write(b) end)
  assert(b.n == 0)
  w:close()
  errors("is closed", w.close, w)
  os.remove(tmp("w.pcap"))
end

function T.handles_cross_to_tasks()
  local serial = require("surge.base.serial")
  local path = make_file(tmp("h.pcap"))
  local r = pcap.reader(path)
  local w = pcap.writer(tmp("h2.pcap"))
  local a = serial.decode(serial.encode({ r, w }, 2), surge.handles)
  assert(getmetatable(a[1]) == getmetatable(r) and a[1].id == r.id and a[1].path == path)
  assert(getmetatable(a[2]) == getmetatable(w) and a[2].id == w.id)
  assert(a[1]:count() == #SIZES)
  r:close()
  w:close()
  os.remove(path)
  os.remove(tmp("h2.pcap"))
end

function T.pace_sets_the_gaps_pattern()
  local q = surge.port("net_null0", { txq = 1, rxq = 1 }):txq(0)
  local path = make_file(tmp("pace.pcap"), { nano = true })
  local r = pcap.reader(path, { timing = { scale = 10 } })
  r:pace(q)
  local b = shared_pool():burst(32)
  local t0 = surge.tsc()
  assert(r:fill(b) == #SIZES)
  assert(q:send(b) == #SIZES)
  local took = tonumber(surge.tsc() - t0) / surge.tsc_hz()
  -- the gaps add up to 31 ms / 10; the last packet leaves after 3.1 ms
  assert(took > 0.0029 and took < 0.2, "paced replay took " .. took)
  r:replay{ timing = "fast" }
  r:rewind()
  r:pace(q)
  assert(r:fill(b) == #SIZES and q:send(b) == #SIZES)
  r:close()
  os.remove(path)
  assert_pool_full()
end

return T
