-- otg/traffic.lua - /control/state traffic start and stop and
-- /monitor/metrics: one task per port of the config (otg/task.lua) sends
-- the flows whose tx port it is and counts what its port receives; master
-- reads the counts (otg/stats.lua) and the ports' own (port:stats()).
--
-- A flow's transmit state is "started" from its start until its packets
-- are all sent (fixed_packets) and every one of them has been received on
-- its rx ports, or SETTLE_S has passed since the last was sent (the rest
-- are lost): from then on "stopped", and its counts are final. A stop
-- ends the tasks: the counts are final then too.
local common = require("surge.otg.common")
local fleet = require("surge.fleet")
local ports = require("surge.port")
local config = require("surge.otg.config")
local ffi, surge, core, C, pool = common.ffi, common.surge, common.core, common.C, common.pool
local stats, flows, model, devices = common.stats, common.flows, common.model, common.devices
local capture, l1 = common.capture, common.l1

local M = {}

local SETTLE_S = 0.5
local MAX_TXQ = 16
local READY_S = 10
local RESOLVE_WAIT_S = 3      -- a start waits that long for a gateway its flows need

local run             -- { tasks, stats, flows = { [index] = { spec, on, done_at } }, base = { [port id] = stats } }
local opened = {}     -- port id -> "txq/rxq" counts it was opened with
-- Template pools, master's (shared with the tasks): a pool cannot be freed
-- while surge runs, so every start takes them from here, one a flow, the
-- same template's again, or an idle one refilled. { pool, bytes, busy }
local pools = {}
local POOL_SIZE = 4096

local function take_pool(t)
  for _, p in ipairs(pools) do
    if not p.busy and p.bytes == t.bytes and p.pool:info().avail == p.size then p.busy = true return p.pool end
  end
  for _, p in ipairs(pools) do
    if not p.busy and pcall(p.pool.refill, p.pool, t) then
      p.bytes, p.busy = t.bytes, true
      return p.pool
    end
  end
  local ok, new = pcall(pool.new, { template = t, size = POOL_SIZE, shared = true })
  if not ok then
    error({ status = 500, errors = { "no pool for another flow: " .. tostring(new):gsub("^[^\n:]+:%d+: ", "")
      .. " (surge otg keeps one a flow; fewer flows, or restart the server)" } }, 0)
  end
  pools[#pools + 1] = { pool = new, bytes = t.bytes, busy = true, size = new:info().size }
  return new
end

local function now() return tonumber(surge.tsc()) / surge.tsc_hz() end

-- Latency receivers (surge.latency's, core/dataplane/latency.c), one a
-- timed flow, made once and emptied for each start: a process has at most
-- 64 (SURGE_LATENCY_MAX) and the server measures start after start.
local LAT_MAX = 48
local lat_ids = {}

local function latency_ids(specs)
  local n = 0
  for _, s in ipairs(specs) do
    if s.latency then
      n = n + 1
      if n > LAT_MAX then
        error({ status = 400, errors = { ("%s.metrics.latency.enable: more than %d flows measure latency at once "
          .. "(surge's latency receivers)"):format(s.path, LAT_MAX) } }, 0)
      end
      if not lat_ids[n] then lat_ids[n] = core.check(C.surge_latency_new(), 2) end
      core.check(C.surge_latency_reset(lat_ids[n]), 2)
      s.lat_id = lat_ids[n]
    end
  end
end

-- A flow's frames a second on a port of speed_mbps (0: unknown): pps as
-- asked; bit/s of whole frames with the FCS (no preamble or gap: the L2
-- rate, as surge's own "bps" rates), divided by the mean frame of the
-- flow's size; a percentage of the line rate at L1 (frame + FCS + 8 bytes
-- of preamble + 12 of inter-frame gap). A percentage on a port that
-- reports no speed is an error naming the path, not a guess.
local BITS = { bps = 1, kbps = 1e3, mbps = 1e6, gbps = 1e9 }
local L1_EXTRA = 20

local function pps_of(s, port, speed_mbps)
  local r = s.rate
  local pps
  if r.kind == "pps" then return r.value end    -- bound by the model at set_config
  if BITS[r.kind] then pps = r.value * BITS[r.kind] / (s.mean_bytes * 8)
  elseif speed_mbps <= 0 then
    error({ status = 409, errors = { ("%s: port %s reports no link speed, so a percentage of it means nothing: "
      .. "give the rate in pps or bit/s"):format(r.path, port) } }, 0)
  else pps = r.value / 100 * speed_mbps * 1e6 / ((s.mean_bytes + L1_EXTRA) * 8) end
  if pps > model.MAX_PPS then
    error({ status = 409, errors = { ("%s: %.4g frames a second of this flow's size on port %s, above surge's "
      .. "bound, %d (the pacer's)"):format(r.path, pps, port, model.MAX_PPS) } }, 0)
  end
  return pps
end

-- A port's line rate in Mbit/s (0: unknown). DPDK's af_packet driver says
-- 10 Gbit/s whatever its interface is: for an interface location (a name,
-- or net_af_packet's iface=) the kernel's /sys/class/net/IF/speed, where it
-- gives one (a NIC's link speed; veth says 10000), else the device's.
local function speed_of(location, info)
  location = location or ""
  local iface = location:match("^net_af_packet%d*,.-iface=([%w%._%-@:]+)") or location:match("^([%w%._%-@:]+)$")
  if iface and #iface <= 15 then
    local f = io.open("/sys/class/net/" .. iface .. "/speed", "r")
    if f then
      local v = tonumber(f:read("*l") or "")
      f:close()
      if v and v > 0 then return v end
    end
  end
  return info.speed_mbps or 0
end

-- A delay or gap ({ unit, value, path }) in seconds; bytes at the port's
-- line rate. A port that reports no speed takes only 0 bytes (and, for an
-- inter-burst gap, the model's default 12: the wire's own gap, nothing to
-- add).
local function seconds_of(g, port, speed_mbps, wire_gap)
  if g == nil then return 0 end
  if g.unit == "nanoseconds" then return g.value * 1e-9 end
  if g.unit == "microseconds" then return g.value * 1e-6 end
  if speed_mbps > 0 then return g.value * 8 / (speed_mbps * 1e6) end
  if g.value == 0 or g.value == wire_gap then return 0 end
  error({ status = 409, errors = { ("%s: port %s reports no link speed, so a gap in bytes has no duration: give "
    .. "it in nanoseconds or microseconds"):format(g.path, port) } }, 0)
end

-- Opened with txq TX queues and as many RX queues as the device has up to
-- that: a loopback (net_ring) returns queue k's frames on RX queue k, a
-- NIC spreads what it receives over every RX queue (RSS); the task polls them all.
local function open_port(id, txq, rxq)
  local key = txq .. "/" .. rxq
  if opened[id] ~= key and ports.wrap(id):info().rxq > 0 then   -- (open for another run, or for port.link)
    surge.port(id):close()
    opened[id] = nil
  end
  local p = surge.port(id, l1.open_opts(id, { rxq = rxq, txq = txq, clones = true, link_timeout = 2 }))
  opened[id] = key
  l1.opened(id)
  return p
end

-- Devices: between runs a task per port with device addresses resolves
-- their gateways and answers for them (otg/task.lua's neigh); during a run
-- the port's own task answers. Their control frames come from ctrl_pool.
local ctrl_pool
local neigh_tasks = {}

-- The neigh argument of port name's task (nil: no device on it).
local function neigh_arg(c, name)
  local list = c.devices and c.devices.ports[name]
  if not list or #list == 0 or c.devices_off then return nil end     -- (protocol.all stop: otg/action.lua)
  if not ctrl_pool then ctrl_pool = pool.new{ size = 1023, shared = true } end
  local entries = {}
  for i, e in ipairs(list) do
    entries[i] = { k = e.k, kind = e.kind, mac = e.mac, addr = e.addr, gw = e.gw, gw_mac = e.gw_mac }
  end
  return { entries = entries, ctrl_pool = ctrl_pool, block = c.devices.block.addr }
end

M.neigh_arg = neigh_arg      -- (otg/ping.lua's tasks answer for the devices as these do)

local function stop_neigh()
  for _, id in ipairs(neigh_tasks) do pcall(surge.stop_task, id) end
  for _, id in ipairs(neigh_tasks) do
    local ok, err = pcall(surge.wait, id, 10)
    if not ok then io.stderr:write("surge otg: a neighbour task failed: ", tostring(err), "\n") end
  end
  neigh_tasks = {}
end

-- Starts the neighbour tasks of the config's ports with devices (none
-- while a run's port tasks answer); from a set config on.
function M.serve_neigh()
  local c = config.compiled()
  if not c or not c.devices or #c.devices.entries == 0 or c.devices_off or (run and #run.tasks > 0) then return end
  stop_neigh()
  for _, p in ipairs(c.ports) do
    local nb = neigh_arg(c, p.name)
    if nb then
      local port = opened[p.id] and surge.port(p.id) or open_port(p.id, 1, 1)
      neigh_tasks[#neigh_tasks + 1] = surge.launch("surge.otg.task:neigh", { rxq = port:rxq(0), txq = port:txq(0),
        neigh = nb })
    end
  end
end

-- The rows (0-based port numbers of the config) a flow's receive counts
-- are read from: its rx ports (every port: none named).
local function rx_rows(spec, c)
  local rows = {}
  for r, p in ipairs(c.ports) do
    local take = #spec.rx == 0
    for _, name in ipairs(spec.rx) do if name == p.name then take = true end end
    if take then rows[#rows + 1] = r - 1 end
  end
  return rows
end

-- The sum of what rows received of one count, { frames, bytes, first,
-- last } (first, last: the receive TSCs, 0: none); at(row) is that row's
-- counts (struct surge_otg_count).
local function rx_sum(rows, at)
  local sum = { frames = 0, bytes = 0, first = 0, last = 0 }
  for _, r in ipairs(rows) do
    local x = at(r)
    sum.frames, sum.bytes = sum.frames + x.frames, sum.bytes + x.bytes
    if x.frames > 0 then
      if sum.first == 0 or x.first < sum.first then sum.first = x.first end
      if x.last > sum.last then sum.last = x.last end
    end
  end
  return sum
end

-- What a flow's rx ports received of it.
local function rx_total(f, c)
  local nflows, k = #c.flows, f.spec.index
  return rx_sum(rx_rows(f.spec, c), function(r) return run.stats.rx[r * nflows + k] end)
end

local function rx_of(f, c) return rx_total(f, c).frames end

-- A TSC of this run as Unix nanoseconds (the wall clock at go, plus the TSC since).
local function wall_ns(tsc) return (run.t0_wall + (tsc - run.t0_tsc) / surge.tsc_hz()) * 1e9 end

local lat_buf = ffi.new("struct surge_latency")

-- The per-second rates of m's counters named keys ("frames_tx", ...) since
-- the last read of the same metrics (holder keeps it) at least 50 ms ago,
-- written as KEY_rate into m; 0 when not live (a flow stopped, a port's task ended).
local FLOW_RATES = { "frames_tx", "frames_rx" }
local PORT_RATES = { "frames_tx", "frames_rx", "bytes_tx", "bytes_rx" }

local function set_rates(holder, m, t, keys, live)
  local last = holder.last_poll
  if not last or t - last.t >= 0.05 then
    if last then
      holder.rates = {}
      for i, k in ipairs(keys) do holder.rates[i] = (m[k] - last[k]) / (t - last.t) end
    end
    holder.last_poll = { t = t }
    for _, k in ipairs(keys) do holder.last_poll[k] = m[k] end
  end
  for i, k in ipairs(keys) do
    m[k .. "_rate"] = (live and holder.rates) and holder.rates[i] or 0
  end
end
M.set_rates = set_rates     -- (otg/remote.lua's rates of what several hosts received)

-- "started" or "stopped", settling a flow whose packets are all sent.
local function state_of(f, c)
  if not f.on then return "stopped" end
  local s = run.stats.flow[f.spec.index]
  if s.done == 0 and not f.halt then return s.paused ~= 0 and "paused" or "started" end
  f.done_at = f.done_at or now()
  if rx_of(f, c) >= s.tx_frames or now() - f.done_at > SETTLE_S then
    f.on = false
    return "stopped"
  end
  return "started"
end

-- The loss, rates and timestamps (when asked) of a flow's metrics m or of
-- one of its tagged metrics (holder: what keeps its last rates' read).
local function counts(holder, m, rx, timestamps, live)
  if m.frames_tx > 0 then m.loss = math.max(0, (m.frames_tx - m.frames_rx) / m.frames_tx * 100) end
  set_rates(holder, m, now(), FLOW_RATES, live)
  if timestamps then
    m.timestamps = rx.first > 0 and { first_timestamp_ns = wall_ns(rx.first), last_timestamp_ns = wall_ns(rx.last) }
      or {}
  end
end

-- A value of a tag as the model's Flow.MetricTag.Value: hex, "0x" and at
-- least one digit.
local function tag_value(v) return { choice = "hex", hex = ("0x%x"):format(v) } end

-- Whether tag value text x (a filter's, hex with or without 0x) is v.
local function is_value(x, v)
  local h = x:lower():gsub("^0x", "")
  return h:match("^%x+$") ~= nil and tonumber(h, 16) == v
end

-- A tagged flow's tagged metrics (the model's Flow.TaggedMetric), one per
-- value of its tagged bits that was sent or received (every value with
-- include_empty_metrics), in order of value; the filters keep the values
-- they name (a filter's name that is no tag of the flow keeps none).
-- Latency is not measured per value (docs/otg.md).
local TAG_COUNTS = { "frames_tx", "frames_rx", "bytes_tx", "bytes_rx", "frames_tx_rate", "frames_rx_rate" }

local function tagged_metrics(f, c, want)
  local s, tags = f.spec, run.stats.tags
  local nvals = 2 ^ s.tag_bits
  local rows = rx_rows(s, c)
  local keep = {}
  for _, k in ipairs(want.metric_names or {}) do keep[k] = true end
  local out = setmetatable({}, { __json = "array" })
  f.tag_rates = f.tag_rates or {}
  local live = state_of(f, c) ~= "stopped"
  for key = 0, nvals - 1 do
    local tx = tags[s.tag_base + key]
    local rx = rx_sum(rows, function(r) return tags[s.tag_base + (r + 1) * nvals + key] end)
    local vals, rest = {}, key
    for i = #s.tags, 1, -1 do
      local w = 2 ^ s.tags[i].length
      vals[i] = rest % w
      rest = math.floor(rest / w)
    end
    local shown = want.include_empty_metrics or tx.frames > 0 or rx.frames > 0
    for _, flt in ipairs(want.filters or {}) do
      local at
      for i, t in ipairs(s.tags) do if t.name == flt.name then at = i end end
      local hit = false
      for _, x in ipairs(flt.values or {}) do if at and is_value(x, vals[at]) then hit = true end end
      if not hit and (at == nil or #(flt.values or {}) > 0) then shown = false end
    end
    if shown then
      local m = { frames_tx = tx.frames, bytes_tx = tx.bytes, frames_rx = rx.frames, bytes_rx = rx.bytes, loss = 0 }
      f.tag_rates[key] = f.tag_rates[key] or {}
      counts(f.tag_rates[key], m, rx, s.timestamps, live)
      local e = { tags = setmetatable({}, { __json = "array" }), loss = m.loss, timestamps = m.timestamps }
      for i, t in ipairs(s.tags) do e.tags[i] = { name = t.name, value = tag_value(vals[i]) } end
      for _, k in ipairs(TAG_COUNTS) do if next(keep) == nil or keep[k] then e[k] = m[k] end end
      out[#out + 1] = e
    end
  end
  return out
end

-- True while a flow of the run is started.
function M.busy()
  local c = config.compiled()
  if not run or not c then return false end
  for _, f in pairs(run.flows) do if state_of(f, c) ~= "stopped" then return true end end
  return false
end

-- Ends the run's tasks (their counts stay readable) and the neighbour tasks.
function M.stop()
  stop_neigh()
  if not run then return end
  for _, id in ipairs(run.tasks) do pcall(surge.stop_task, id) end
  for _, id in ipairs(run.tasks) do
    local ok, err = pcall(surge.wait, id, 10)
    if not ok then io.stderr:write("surge otg: a port task failed: ", tostring(err), "\n") end
  end
  run.tasks = {}
  for _, f in pairs(run.flows) do f.on = false end
  for _, p in ipairs(pools) do p.busy = false end
end

-- A new config: the last run's counts belonged to the old one (its tasks
-- have ended: M.stop before the config was set).
function M.forget()
  M.stop()
  run = nil
end

local function flow_names(c, names, path)
  local by = {}
  for _, s in ipairs(c.flows) do by[s.name] = s end
  local out = {}
  if names == nil or #names == 0 then
    for _, s in ipairs(c.flows) do out[#out + 1] = s end
    return out
  end
  for i, n in ipairs(names) do
    if not by[n] then error({ status = 400, errors = { ("%s[%d]: '%s' is not a flow of the config"):format(path, i - 1,
      n) } }, 0) end
    out[#out + 1] = by[n]
  end
  return out
end

-- Starts the named flows (all: names empty); what ran before is stopped.
-- hold: every port receiving, no flow sending until M.go (otg/remote.lua's
-- start over several hosts).
local function start(names, hold)
  local c = config.compiled()
  if not c then error({ status = 409, errors = { "no config: set one (POST /config) first" } }, 0) end
  local chosen = {}
  for _, s in ipairs(flow_names(c, names, "traffic.flow_transmit.flow_names")) do
    if not s.rx_only then chosen[#chosen + 1] = s end   -- another host sends it (otg/remote.lua): counted only
  end
  -- a flow to a device behind a gateway: its MAC as resolved, each pair's (the neighbour tasks run meanwhile)
  for _, s in ipairs(chosen) do
    for i, k in ipairs(s.gw_ks or {}) do
      local en = k and c.devices.entries[k]
      local deadline = now() + RESOLVE_WAIT_S
      while en and not devices.gateway_mac(c.devices, en) and now() < deadline do surge.sleep(0.01) end
      if en then s.dst_macs[i] = devices.gateway_mac(c.devices, en) or false end
      if en and not s.dst_macs[i] then
        error({ status = 409, errors = { ("%s: the gateway %s of '%s' is not resolved (no answer to %s within %g s)")
          :format(s.path, en.gw, en.name, en.kind == 4 and "ARP" or "neighbour solicitations", RESOLVE_WAIT_S) } }, 0)
      end
    end
  end
  M.stop()
  local nports = #c.ports
  -- the tagged flows' slots (otg/stats.lua), and what the tasks read of these flows to count them
  local ntags, tagged = 0, {}
  for _, s in ipairs(c.flows) do
    s.tag_base = nil
    if s.tags then
      s.tag_base = ntags
      ntags = ntags + 2 ^ s.tag_bits * (nports + 1)
      tagged[#tagged + 1] = { index = s.index, tags = s.tags, tag_bits = s.tag_bits, tag_base = s.tag_base,
                              header_bytes = s.header_bytes }
    end
  end
  run = { tasks = {}, stats = stats.new(#c.flows, nports, ntags), flows = {}, base = {} }
  for _, s in ipairs(c.flows) do run.flows[s.index] = { spec = s, on = false } end
  for _, s in ipairs(chosen) do run.flows[s.index].on = true end
  for _, s in ipairs(c.flows) do s.lat_id = -1 end   -- a flow not started now keeps no receiver of before
  latency_ids(chosen)
  -- what a port's task looks for in what it receives: the tag's offsets (the header lengths of the
  -- config's measured flows) and each flow's latency receiver (-1: none)
  local offs, seen, lat = {}, {}, {}
  for _, s in ipairs(c.flows) do
    if s.tag and not seen[s.header_bytes] then seen[s.header_bytes] = true offs[#offs + 1] = s.header_bytes end
    lat[s.index + 1] = run.flows[s.index].on and s.lat_id or -1
  end
  for r, p in ipairs(c.ports) do
    local mine = {}
    for _, s in ipairs(chosen) do if s.tx == p.name then mine[#mine + 1] = s end end
    -- as many TX queues as the device has, up to one a flow (net_pcap, af_packet: one)
    local info = ports.wrap(p.id):info()
    local nq = math.max(1, math.min(#mine, info.max_txq, MAX_TXQ))
    local nrx = math.max(1, math.min(nq, info.max_rxq))
    local port = open_port(p.id, nq, nrx)
    local rxqs = {}
    for q = 1, nrx do rxqs[q] = port:rxq(q - 1) end
    local groups = {}
    for q = 1, nq do groups[q] = { txq = port:txq(q - 1), flows = {} } end
    local speed = speed_of(p.location, info)
    for k, s in ipairs(mine) do
      s.pps = pps_of(s, p.name, speed)
      s.delay_s = seconds_of(s.delay, p.name, speed, 0)
      s.ibg_s = seconds_of(s.ibg, p.name, speed, 12)
      s.pool = take_pool((flows.build(s)))
      local g = groups[(k - 1) % nq + 1]
      g.flows[#g.flows + 1] = s
    end
    run.base[p.id] = port:stats()
    run.tasks[#run.tasks + 1] = surge.launch("surge.otg.task:port", { groups = groups, rxqs = rxqs,
      stats = run.stats.addr, nflows = #c.flows, row = r - 1, offs = offs, lat = lat, specs = tagged, ntags = ntags,
      neigh = neigh_arg(c, p.name), capture = capture.task_arg(r - 1) })
  end
  -- every port receives before any flow sends
  local deadline = now() + READY_S
  local function all_ready()
    for r = 0, nports - 1 do if run.stats.run[0].ready[r] == 0 then return false end end
    return true
  end
  while not all_ready() and now() < deadline do
    surge.sleep(0.001)
    for _, id in ipairs(run.tasks) do
      local t
      for _, e in ipairs(surge.tasks()) do if e.id == id then t = e end end
      local ok, why = surge.collect(t)
      if ok == false then M.stop() error({ status = 500, errors = { "a port's task failed: " .. tostring(why) } }, 0) end
    end
  end
  if not all_ready() then
    M.stop()
    error({ status = 500, errors = { ("the ports' tasks were not ready in %d s"):format(READY_S) } }, 0)
  end
  if not hold then M.go() end
end

-- The held run's flows sent from now (M.start with hold).
function M.go()
  if not run then return end
  run.t0_wall, run.t0_tsc = fleet.now(), tonumber(surge.tsc())
  run.stats.run[0].go = 1
end

-- True while a run started with hold waits for M.go.
function M.held() return run ~= nil and #run.tasks > 0 and run.stats.run[0].go == 0 end

-- A start that fails leaves no run behind: its tasks stopped, nothing
-- counted as started (the next config or start is not refused for it).
function M.start(names, hold)
  local ok, e = xpcall(start, function(x) return type(x) == "table" and x or debug.traceback(tostring(x), 2) end,
    names, hold)
  if not ok then
    pcall(M.stop)
    run = nil
    pcall(M.serve_neigh)
    error(e, 0)
  end
end

-- Calls mark(flow, its stats) for each started flow of the run named in
-- names (all: empty; checked at traffic.flow_transmit.flow_names), then
-- raises the run's generation so that its tasks read what changed.
local function mark_flows(c, names, mark)
  for _, s in ipairs(flow_names(c, names, "traffic.flow_transmit.flow_names")) do
    local f = run.flows[s.index]
    if f and f.on then mark(f, run.stats.flow[s.index]) end
  end
  local r = run.stats.run[0]
  r.gen = r.gen + 1
end

-- Pauses (or resumes) the named flows of the run (all: names empty); a
-- flow not started, or done, is left as it is. A paused flow's queue is
-- re-paced at what the others ask; what it had made and not sent waits in
-- its burst for the resume.
function M.pause(names, paused)
  local c = config.compiled()
  if not run or not c or #run.tasks == 0 then
    error({ status = 409, errors = { "no traffic runs: start it before pausing or resuming" } }, 0)
  end
  mark_flows(c, names, function(f, st)
    if not f.halt then st.paused = paused and 1 or 0 end
  end)
end

-- Stops the named flows (all: names empty, their tasks ended too): a named
-- flow's sending ends (as a pause) and its transmit state is stopped, its
-- counts final once what it sent has come back.
function M.stop_flows(names)
  local c = config.compiled()
  if names == nil or #names == 0 or not run or not c then
    M.stop()
    return M.serve_neigh()
  end
  mark_flows(c, names, function(f, st)
    st.paused = 1
    f.halt = true               -- stopped like a flow whose packets are all sent: settled, then final
  end)
end

-- A metrics request (checked): the model's Metrics.Response.
function M.metrics(req)
  local c = config.compiled()
  if req.choice == "flow" then
    local out = setmetatable({}, { __json = "array" })
    if not c then return { choice = "flow_metrics", flow_metrics = out } end
    for _, s in ipairs(flow_names(c, req.flow.flow_names, "flow.flow_names")) do
      local m = { name = s.name, port_tx = s.tx, port_rx = s.rx[1], transmit = "stopped", frames_tx = 0,
                  frames_rx = 0, bytes_tx = 0, bytes_rx = 0, frames_tx_rate = 0, frames_rx_rate = 0, loss = 0 }
      local f = run and run.flows[s.index]
      if f then
        local st = run.stats.flow[s.index]
        m.transmit = state_of(f, c)
        local rx = rx_total(f, c)
        m.frames_tx, m.bytes_tx = st.tx_frames, st.tx_bytes
        m.frames_rx, m.bytes_rx = rx.frames, rx.bytes
        counts(f, m, rx, s.timestamps, m.transmit ~= "stopped")
        if s.tags and req.flow.tagged_metrics.include then m.tagged_metrics = tagged_metrics(f, c, req.flow.tagged_metrics) end
        if s.latency and s.lat_id >= 0 then
          core.check(C.surge_latency_get(s.lat_id, lat_buf), 2)
          -- store_forward and cut_through alike: the probe's TSC is taken as the driver takes the frame and
          -- the receive's as the driver hands it over, whole (docs/otg.md)
          m.latency = lat_buf.probes > 0 and { minimum_ns = lat_buf.min_ns, maximum_ns = lat_buf.max_ns,
                                               average_ns = lat_buf.mean_ns } or {}
        end
      end
      out[#out + 1] = m
    end
    return { choice = "flow_metrics", flow_metrics = out }
  end
  local out = setmetatable({}, { __json = "array" })
  if not c then return { choice = "port_metrics", port_metrics = out } end
  local want = {}
  for _, n in ipairs(req.port and req.port.port_names or {}) do want[n] = true end
  for i, p in ipairs(c.ports) do
    if next(want) == nil or want[p.name] then
      local m = { name = p.name, location = p.location, link = l1.link(p.id), capture = capture.state(p.name),
                  frames_tx = 0, frames_rx = 0, bytes_tx = 0, bytes_rx = 0, frames_tx_rate = 0, frames_rx_rate = 0,
                  bytes_tx_rate = 0, bytes_rx_rate = 0, transmit = "stopped" }
      if opened[p.id] then
        local port = surge.port(p.id)
        local s, b = port:stats(), run and run.base[p.id]
        if b then
          m.frames_tx, m.frames_rx = s.tx_packets - b.tx_packets, s.rx_packets - b.rx_packets
          -- bytes with the FCS, as the flows' (the model's frame size counts it)
          m.bytes_tx = s.tx_bytes - b.tx_bytes + 4 * m.frames_tx
          m.bytes_rx = s.rx_bytes - b.rx_bytes + 4 * m.frames_rx
        end
        if run then
          for _, f in pairs(run.flows) do
            if f.spec.tx == p.name and state_of(f, c) == "started" then m.transmit = "started" end
          end
          run.ports = run.ports or {}
          run.ports[p.id] = run.ports[p.id] or {}
          set_rates(run.ports[p.id], m, now(), PORT_RATES, #run.tasks > 0)
        end
      end
      out[#out + 1] = m
    end
    local _ = i
  end
  return { choice = "port_metrics", port_metrics = out }
end

return M
