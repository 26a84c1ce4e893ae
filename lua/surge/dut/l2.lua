-- l2.lua - the task side of layer-2 (switch) trials, for RFC 2889: several
-- streams, each sent from one port with a range of source and destination
-- MAC addresses (the "MAC ranges as flows" of a switch test), received on
-- every port and counted per stream and per receiving port, so a frame that
-- a switch floods or sends to the wrong port is seen where it arrived.
--
-- A switch forwards by MAC, not by IP: each frame carries a tag right after
-- its UDP header (magic, stream number, send TSC) that the receiver reads;
-- frames without it (the kernel's own, the DUT's) are counted apart per port.
-- Launched as the module task "surge.dut.l2:run" (one lcore sends and
-- receives, so the TSC stamps give latency without clock sync).
local ffi = require("ffi")
local bit = require("bit")
local surge = require("surge")
local trial = require("surge.dut.trial")

local band, rshift = bit.band, bit.rshift
local u32p, u16p, u64p = ffi.typeof("uint32_t *"), ffi.typeof("uint16_t *"), ffi.typeof("uint64_t *")
local M = { MAGIC = 0x32383839, TAG_LEN = 16 }   -- "2889"; magic(4) stream(2) pad(2) tsc(8)
local MAGIC = M.MAGIC
local STALL_S, CATCHUP_S = 1, 0.01

-- A MAC as (hi16, lo32) numbers, from text.
function M.mac_parts(text)
  local b = {}
  for h in text:gmatch("%x%x") do b[#b + 1] = tonumber(h, 16) end
  return b[1] * 256 + b[2], ((b[3] * 256 + b[4]) * 256 + b[5]) * 256 + b[6]
end

function M.mac_text(hi, lo)
  return ("%02x:%02x:%02x:%02x:%02x:%02x"):format(rshift(hi, 8), band(hi, 0xff), band(rshift(lo, 24), 0xff),
    band(rshift(lo, 16), 0xff), band(rshift(lo, 8), 0xff), band(lo, 0xff))
end

local function put_mac(p, hi, lo)
  p[0] = rshift(hi, 8); p[1] = band(hi, 0xff)
  p[2] = band(rshift(lo, 24), 0xff); p[3] = band(rshift(lo, 16), 0xff)
  p[4] = band(rshift(lo, 8), 0xff); p[5] = band(lo, 0xff)
end

-- spec: ifaces = { { rxq, txq } }, streams = { { tx (iface index), pool, off
-- (tag offset), src_hi, src_lo, src_n, dst_hi, dst_lo, dst_n, count (frames),
-- rate (pps; nil: as fast as the port takes them), whole } }, settle (s), what.
-- Frame j of a stream goes from address src + j % src_n to dst + j % dst_n.
-- Every stream starts at once and ends when its count has left; a paced
-- one at the latest CATCHUP_S after its last frame was due (frames a
-- preempted core left late are sent up to then, as surge.dut.trial's
-- schedule does) unless it is `whole` (every frame goes, late ones catch
-- up: frames that must all arrive, like learning frames); an unpaced or
-- whole one when its port has taken none of its frames for STALL_S (a switch that pushes back for good; a port whose link
-- went down fails the trial naming the port, as surge.dut.trial's do).
-- A stream cut short has sent < planned: the scenario flags it.
-- Returns { streams = { { sent, planned, seconds, rx = { per iface },
-- lat_min_ns, lat_max_ns, lat_sum_ns, lat_n } }, other = { per iface }, seconds }.
function M.run(spec)
  surge.idle{ mode = "pause" }
  local ifaces, streams = spec.ifaces, spec.streams
  local ni, ns = #ifaces, #streams
  local hz = surge.tsc_hz()
  local rxb = ffi.new("uint64_t[?]", ns * ni + 1)          -- stream * ni + iface - 1
  local other = ffi.new("uint64_t[?]", ni + 1)
  local lat_min = ffi.new("double[?]", ns + 1)
  local lat_max = ffi.new("double[?]", ns + 1)
  local lat_sum = ffi.new("double[?]", ns + 1)
  local lat_n = ffi.new("double[?]", ns + 1)
  for k = 0, ns do lat_min[k] = math.huge end
  local rx_burst = spec.ctrl_pool:burst(64)
  local st = {}
  for k, s in ipairs(streams) do
    st[k] = { txq = ifaces[s.tx].txq, burst = s.pool:burst(16), off = s.off, src_hi = s.src_hi, src_lo = s.src_lo,
              src_n = s.src_n, dst_hi = s.dst_hi, dst_lo = s.dst_lo, dst_n = s.dst_n, count = s.count,
              gap = s.rate and hz / s.rate or nil, whole = s.whole or false, sent = 0, done_tsc = 0, moved_tsc = 0 }
  end
  local watch = {}
  for i, f in ipairs(ifaces) do watch[i] = f.txq.port end
  local check_link = trial.link_checker(watch)
  local what = spec.what or "an rfc2889 trial"
  check_link(what)
  local ns_per_cycle = 1e9 / hz
  local off = spec.off
  local function count(i, n, b)
    local data, lens, rx_tsc = b.data, b.len, b.tsc
    for j = 0, n - 1 do
      local p, len = data[j], lens[j]
      if len >= off + 16 and ffi.cast(u32p, p + off)[0] == MAGIC then
        local k = ffi.cast(u16p, p + off + 4)[0]
        if k < ns then
          rxb[k * ni + i - 1] = rxb[k * ni + i - 1] + 1
          local sent = ffi.cast(u64p, p + off + 8)[0]
          local d = sent < rx_tsc and tonumber(rx_tsc - sent) * ns_per_cycle or 0
          if d < lat_min[k] then lat_min[k] = d end
          if d > lat_max[k] then lat_max[k] = d end
          lat_sum[k], lat_n[k] = lat_sum[k] + d, lat_n[k] + 1
        else
          other[i] = other[i] + 1
        end
      else
        other[i] = other[i] + 1
      end
    end
  end
  local function poll() return trial.recv_each(ifaces, rx_burst, count) end
  local t0 = tonumber(surge.tsc())
  for k = 1, ns do st[k].moved_tsc = t0 end
  local left = ns
  local next_link, stall, catchup = t0 + hz / 20, STALL_S * hz, CATCHUP_S * hz
  while surge.running() and left > 0 do
    local now = tonumber(surge.tsc())
    for k = 1, ns do
      local s = st[k]
      local rest = s.count - s.sent
      if rest > 0 then
        local due = s.gap and math.min(rest, math.floor((now - t0) / s.gap) + 1 - s.sent) or rest
        if due > 0 then
          local b = s.burst
          local n = b:alloc(due < b.cap and due or b.cap)
          -- the stream's fields in locals: the loop below runs per frame
          local data, stamp, first = b.data, surge.tsc(), s.sent
          local dst_hi, dst_lo, dst_n, src_hi, src_lo, src_n = s.dst_hi, s.dst_lo, s.dst_n, s.src_hi, s.src_lo, s.src_n
          local toff, id = s.off, k - 1
          for j = 0, n - 1 do
            local p, f = data[j], first + j
            put_mac(p, dst_hi, dst_lo + f % dst_n)
            put_mac(p + 6, src_hi, src_lo + f % src_n)
            local t = p + toff
            ffi.cast(u32p, t)[0] = MAGIC
            ffi.cast(u16p, t + 4)[0] = id
            ffi.cast(u64p, t + 8)[0] = stamp
            t[-2], t[-1] = 0, 0                             -- no UDP checksum: the tag changes per frame
          end
          local sent = n > 0 and s.txq:send(b) or 0
          s.sent = s.sent + sent
          if sent > 0 then s.moved_tsc = now end
          local over
          if s.gap and not s.whole then over = now > t0 + s.count * s.gap + catchup
          else over = now - s.moved_tsc > stall end
          if s.sent >= s.count or over then
            s.done_tsc, left = tonumber(surge.tsc()), left - 1
            if s.sent < s.count then s.count = s.sent end      -- ends it; planned keeps the plan
          end
        end
      end
    end
    poll()
    if now >= next_link then check_link(what) next_link = now + hz / 20 end
  end
  local t1 = tonumber(surge.tsc())
  trial.settle(poll, t1 + (spec.settle or 0.5) * hz)
  for _, s in ipairs(st) do s.burst:free() end
  rx_burst:free()
  local res = { streams = {}, other = {}, seconds = (t1 - t0) / hz }
  for k = 1, ns do
    local s = st[k]
    local r = { sent = s.sent, planned = streams[k].count, seconds = ((s.done_tsc > 0 and s.done_tsc or t1) - t0) / hz,
                rx = {}, lat_n = lat_n[k - 1] }
    for i = 1, ni do r.rx[i] = tonumber(rxb[(k - 1) * ni + i - 1]) end
    if lat_n[k - 1] > 0 then
      r.lat_min_ns, r.lat_max_ns, r.lat_sum_ns = lat_min[k - 1], lat_max[k - 1], lat_sum[k - 1]
    end
    res.streams[k] = r
  end
  for i = 1, ni do res.other[i] = tonumber(other[i]) end
  return res
end

return M
