-- otg/capture.lua - OTG captures: the config's `captures`, control
-- port.capture start/stop and /monitor/capture (docs/otg.md, "Captures").
--
-- What a port receives is read by its traffic task (otg/task.lua); while
-- the port's capture is started the task writes each received burst with
-- surge's pcap writer (surge.pcap, C's libpcap dump: no per-frame Lua
-- besides a length sum) into the capture's segment files, in a private
-- folder of the server. A capture is a run of segments: a task that starts
-- (a traffic start while the capture runs) opens the next one, and a
-- segment that reaches a quarter of MAX_BYTES is closed for the next.
-- Over MAX_BYTES, overwrite (the model's default) drops the oldest
-- segments: the capture keeps the newest frames, between half and all of
-- MAX_BYTES; without overwrite the capture stops taking frames there.
-- MAX_BYTES counts the records (16 bytes a frame and what is kept of it);
-- SURGE_OTG_CAPTURE_BYTES sets it (tests use a small one).
--
-- Master and the tasks share one struct a port (below): master switches
-- `on` and reads the counts, a port's task alone writes the rest. A stop
-- waits until the task has closed its writer (`open` back to 0), so the
-- files are whole when /monitor/capture reads them.
--
-- /monitor/capture returns the segments as one file in the capture's
-- format: pcap (as written: one header, the records in order) or pcapng
-- (a section, one Ethernet interface with nanosecond times, an enhanced
-- packet block a frame). A frame is what the device received: without
-- the 4-byte FCS the model's frame size counts (DPDK devices strip it, as
-- any host capture shows frames), so a flow of size 128 is 124 bytes here.
local ffi = require("ffi")
local pcap = require("surge.pcap")
local surge = require("surge")
local results = require("surge.results")

local M = { MAX_BYTES = tonumber(os.getenv("SURGE_OTG_CAPTURE_BYTES") or "") or 64 * 1024 * 1024 }

pcall(ffi.cdef, [[
struct otg_cap { double on, open, seg_first, seg_next, bytes, seg_bytes, frames, full, snaplen, overwrite, max; };
]])
for _, decl in ipairs({ "char *mkdtemp(char *template);", "char *strerror(int errnum);", "int rmdir(const char *);" }) do
  pcall(ffi.cdef, decl)
end

local PCAP_HDR, REC_HDR = 24, 16

-- master's state: the config's captures, the shared block, the folder
local caps = {}        -- port name -> { row, format, path (of the config), name }
local block, nblock    -- struct otg_cap[nblock], one a port of the config (by row)
local folder           -- made at the first capture

local function seg_path(dir, row, seg) return ("%s/p%d-%d.pcap"):format(dir, row, seg) end

local function fail(status, errs) error({ status = status, errors = errs }, 0) end

-- Task side ----------------------------------------------------------------

local Tap = {}
Tap.__index = Tap

-- The tap of a port's task (a: M.task_arg's table), or nil.
function M.tap(a)
  if not a then return nil end
  local st = ffi.cast("struct otg_cap *", a.addr) + a.row
  return setmetatable({ st = st, dir = a.dir, row = a.row, w = false }, Tap)
end

function Tap:close()
  if self.w then
    self.w:close()
    self.w = false
    local st = self.st
    st.seg_next = st.seg_next + 1
  end
  self.st.open = 0
end

local function open_next(self)
  local st = self.st
  self.w = pcap.writer(seg_path(self.dir, self.row, st.seg_next), { snaplen = st.snaplen, nano = true })
  st.seg_bytes = 0
  st.open = 1
end

-- Once a round of the task: opens a segment when the capture starts,
-- closes it when it stops.
function Tap:poll()
  local st = self.st
  if st.on ~= 0 and st.full == 0 then
    if not self.w then open_next(self) end
  elseif self.w or st.open ~= 0 then
    self:close()
  end
end

-- A received burst, captured when the capture runs.
function Tap:write(b)
  local w = self.w
  if not w then return end
  local st = self.st
  local n, len, snap = b.n, b.len, st.snaplen
  local bytes = 0
  for i = 0, n - 1 do
    local l = len[i]
    bytes = bytes + REC_HDR + (l < snap and l or snap)
  end
  local max = st.max
  if st.overwrite == 0 and st.bytes + bytes > max then
    st.full = 1                     -- a capture that does not overwrite ends when full
    self:close()
    return
  end
  w:write(b)
  st.frames = st.frames + n
  st.bytes = st.bytes + bytes
  st.seg_bytes = st.seg_bytes + bytes
  if st.seg_bytes >= max / 4 then
    self:close()
    if st.overwrite ~= 0 then
      while st.bytes > max * 3 / 4 and st.seg_first < st.seg_next do   -- the oldest goes
        local path = seg_path(self.dir, self.row, st.seg_first)
        local f = io.open(path, "rb")
        local size = f and f:seek("end") or PCAP_HDR
        if f then f:close() end
        os.remove(path)
        st.bytes = st.bytes - (size - PCAP_HDR)
        st.seg_first = st.seg_first + 1
      end
    end
    open_next(self)
  end
end

-- Master side --------------------------------------------------------------

-- A private folder (mkdtemp: mode 0700) under $TMPDIR, surge-otg-NAME.XXXXXX;
-- otg/remote.lua's too.
function M.temp_folder(name)
  local base = os.getenv("TMPDIR")
  if not base or base == "" or base:find("%c") then base = "/tmp" end
  local template = base:gsub("/+$", "") .. "/surge-otg-" .. name .. ".XXXXXX"
  local buf = ffi.new("char[?]", #template + 1, template)
  if ffi.C.mkdtemp(buf) == nil then
    fail(500, { ("cannot make a folder %s: %s"):format(template, ffi.string(ffi.C.strerror(ffi.errno()))) })
  end
  return ffi.string(buf)
end
local function temp_folder() return M.temp_folder("capture") end

local function remove_segments(row)
  local st = block[row]
  for s = st.seg_first, st.seg_next - 1 do os.remove(seg_path(folder, row, s)) end
  st.seg_first, st.bytes, st.frames, st.full = st.seg_next, 0, 0, 0
end

-- The checked config's captures against its ports (ports[i].name); adds
-- "captures[i]...: why" lines to errs. Returns the plan for M.set.
function M.check(cfg, errs)
  local ports, plan, taken, names = {}, {}, {}, {}
  for r, p in ipairs(cfg.ports or {}) do ports[p.name] = r - 1 end
  for i, c in ipairs(cfg.captures or {}) do
    local path = ("captures[%d]"):format(i - 1)
    if names[c.name] then errs[#errs + 1] = ("%s.name: '%s' is the name of another capture"):format(path, c.name) end
    names[c.name] = true
    if c.filters ~= nil and not (type(c.filters) == "table" and next(c.filters) == nil) then
      errs[#errs + 1] = ("%s.filters: not implemented by surge (a capture takes every frame)"):format(path)
    end
    for k, n in ipairs(c.port_names or {}) do
      local pp = ("%s.port_names[%d]"):format(path, k - 1)
      if ports[n] == nil then errs[#errs + 1] = ("%s: '%s' is not a port of this config"):format(pp, n)
      elseif taken[n] then errs[#errs + 1] = ("%s: port '%s' is in %s already"):format(pp, n, taken[n])
      else
        taken[n] = path
        plan[n] = { row = ports[n], format = c.format, snaplen = c.packet_size or 65535,   -- whole frames
                    overwrite = c.overwrite ~= false, name = c.name }
      end
    end
  end
  return plan
end

-- Takes a new config's plan (M.check's) for nports ports: every capture
-- of the last config stopped (its tasks have ended) and its files removed.
function M.set(plan, nports)
  if block then for r = 0, nblock - 1 do remove_segments(r) end end
  caps = plan
  nblock = math.max(nports, 1)
  block = ffi.new("struct otg_cap[?]", nblock)
end

-- What a port's task needs (its row of the config), or nil: no capture.
function M.task_arg(row)
  if not block then return nil end
  for _, c in pairs(caps) do
    if c.row == row then
      folder = folder or temp_folder()
      return { addr = tonumber(ffi.cast("uintptr_t", block)), row = row, dir = folder }
    end
  end
  return nil
end

-- "started" or "stopped", for the port metrics.
function M.state(name)
  local c = caps[name]
  return (c and block[c.row].on ~= 0) and "started" or "stopped"
end

local function chosen(names, path)
  local out = {}
  if names == nil or #names == 0 then
    for n in pairs(caps) do out[#out + 1] = n end
    table.sort(out)
    return out
  end
  for i, n in ipairs(names) do
    if not caps[n] then
      fail(400, { ("%s[%d]: '%s' is no port of a capture of the config"):format(path, i - 1, n) })
    end
    out[#out + 1] = n
  end
  return out
end

local function now() return tonumber(surge.tsc()) / surge.tsc_hz() end

-- control/state port.capture: start (a new capture: the last one's frames
-- go) or stop the named ports' captures (all: names empty).
function M.control(names, state)
  if not block then fail(409, { "no config: set one (POST /config) first" }) end
  local list = chosen(names, "port.capture.port_names")
  if #list == 0 then fail(400, { "port.capture: the config has no captures" }) end
  for _, n in ipairs(list) do
    local c, st = caps[n], block[caps[n].row]
    if state == "start" then
      st.on = 0
      folder = folder or temp_folder()
      M.wait_closed(n)
      remove_segments(c.row)
      st.snaplen, st.overwrite, st.max = c.snaplen, c.overwrite and 1 or 0, M.MAX_BYTES
      st.on = 1
    else
      st.on = 0
      M.wait_closed(n)
    end
  end
end

-- Waits for the task of port name to close its segment (2 s at most: a
-- task polls its tap every round).
function M.wait_closed(name)
  local st = block[caps[name].row]
  local t0 = now()
  while st.open ~= 0 do
    if now() - t0 > 2 then fail(500, { ("port %s: its task did not close the capture in 2 s"):format(name) }) end
    surge.sleep(0.001)
  end
end

local function u32le(s, at) local a, b, c, d = s:byte(at, at + 3) return a + b * 256 + c * 65536 + d * 16777216 end
local function le32(v) return string.char(v % 256, math.floor(v / 256) % 256, math.floor(v / 65536) % 256,
  math.floor(v / 16777216) % 256) end
local function le16(v) return string.char(v % 256, math.floor(v / 256) % 256) end

local function pcap_header(snaplen)
  return le32(0xa1b23c4d) .. le16(2) .. le16(4) .. le32(0) .. le32(0) .. le32(snaplen) .. le32(1)
end

-- pcapng: a section header, one Ethernet interface (nanosecond times), an
-- enhanced packet block a record of pcap text s (nanosecond pcap, ours).
local function block_of(kind, body)
  local total = 12 + #body
  return le32(kind) .. le32(total) .. body .. le32(total)
end

local function to_pcapng(records, snaplen)
  local out = { block_of(0x0A0D0D0A, le32(0x1A2B3C4D) .. le16(1) .. le16(0) .. le32(0xffffffff) .. le32(0xffffffff)) }
  -- if_tsresol (9) = 9: nanoseconds; then opt_endofopt
  out[2] = block_of(1, le16(1) .. le16(0) .. le32(snaplen) .. le16(9) .. le16(1) .. string.char(9, 0, 0, 0)
    .. le32(0))
  local at, s = 1, records
  while at + REC_HDR - 1 <= #s do
    local sec, nsec, caplen, len = u32le(s, at), u32le(s, at + 4), u32le(s, at + 8), u32le(s, at + 12)
    local data = s:sub(at + REC_HDR, at + REC_HDR + caplen - 1)
    local ts = sec * 1e9 + nsec
    local hi = math.floor(ts / 4294967296)
    local pad = ("\0"):rep((4 - caplen % 4) % 4)
    out[#out + 1] = block_of(6, le32(0) .. le32(hi) .. le32(ts - hi * 4294967296) .. le32(caplen) .. le32(len)
      .. data .. pad)
    at = at + REC_HDR + caplen
  end
  return table.concat(out)
end

-- /monitor/capture: the bytes of port name's capture in its format.
function M.read(name)
  local c = caps[name]
  if not c then fail(400, { ("port_name: '%s' is no port of a capture of the config"):format(name) }) end
  local st = block[c.row]
  if st.on ~= 0 then     -- the model: the request stops the port's capture
    st.on = 0
    M.wait_closed(name)
  end
  local snap = c.snaplen
  local parts = {}
  for s = st.seg_first, st.seg_next - 1 do
    local text = folder and results.read_file(seg_path(folder, c.row, s))
    if text and #text >= PCAP_HDR then parts[#parts + 1] = text:sub(PCAP_HDR + 1) end
  end
  local records = table.concat(parts)
  if c.format == "pcapng" then return to_pcapng(records, snap) end
  return pcap_header(snap) .. records
end

-- The server ends: the files and the folder go.
function M.close()
  if block and folder then for r = 0, nblock - 1 do remove_segments(r) end end
  if folder then ffi.C.rmdir(folder) end
end

return M
