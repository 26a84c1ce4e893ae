-- surge.dut - talking to a device under test from master: ports, addresses,
-- ARP/NDP resolution and responding, test-traffic templates and trials.
--
--   local dut = require("surge.dut")
--   local s = dut.session{ tx = 0, rx = 1, src = "10.0.0.2", dst = "10.1.0.2",
--                          gateway = "10.0.0.1" }     -- next hop on the tx port
--   s:resolve()                                      -- the gateway's MAC, by ARP (NDP for IPv6)
--   local r = s:trial{ size = 64, rate = 100000, duration = 1 }
--   --> { sent, received, lost, loss_pct, reordered, duplicated, tx_pps, seconds, classes = {...} }
--
-- Trials run as module tasks on one worker lcore (surge.dut.trial): the
-- task sends, receives every port and answers the DUT's ARP/NDP for `src`
-- (tx port) and `dst` (rx port) while the trial runs.
local surge = require("surge")
local check = require("surge.check")
local results = require("surge.results")
local eth = require("surge.proto.eth")
local ip4 = require("surge.proto.ip4")
local ip6 = require("surge.proto.ip6")

local M = { DPORT = 3842, SPORT0 = 1024, FCS = 4, MAX_FLOWS = require("surge.dut.counters").MAX_FLOWS }
-- The start of the error a trial cut by a stop raises (Ctrl-C, SIGTERM,
-- surge.stop(), --duration): scenario.main keeps the results so far then.
M.STOPPED_DURING = "the run was stopped during "
local Session = require("surge.class").new("dut session", { "tx", "rx", "src", "dst", "gateway", "rx_gateway",
  "dst_mac", "vlan", "dport", "resolve_timeout", "v6", "ifaces", "rx_iface", "rx_info", "tx_info", "ctrl_pool",
  "rx_gateway_mac", "replay_pool" })   -- replay_pool: scenario/replay.lua's, kept across passes

local opened = {}          -- port id -> port, shared by every session of this run
local ctrl_pool            -- control frames (ARP/NDP) and receive bursts
local pools = {}           -- template key -> { pool, l4 } (pools cannot be freed: reuse)

local function open_port(p, link_timeout)
  if type(p) == "table" then return p end
  local id = p
  if type(id) == "string" and tonumber(id) then id = tonumber(id) end
  if type(id) == "number" and (id < 0 or id >= surge.ports()) then
    check.raise(("port %d does not exist (%d port%s: give devices with --vdev or --pci)"):format(id,
      surge.ports(), surge.ports() == 1 and "" or "s"))
  end
  if opened[id] == nil then
    -- clones = true keeps MBUF_FAST_FREE off: test frames and control frames
    -- come from different pools on one queue
    local ok, port = pcall(surge.port, id, { rxq = 1, txq = 1, clones = true, link_timeout = link_timeout or 2 })
    if not ok then check.raise((tostring(port):gsub("^[^\n:]+:%d+: ", ""))) end   -- about the port, not a line here
    opened[id] = port
  end
  return opened[id]
end
M.open_port = open_port

-- Forgets the ports, pools and templates opened so far: only for
-- surge.scenario's dry runs before EAL, whose stand-in ports differ from
-- one run to the next (none of them is real).
function M.forget_standins()
  opened, ctrl_pool, pools = {}, nil, {}
end

local known = { tx = 1, rx = 1, src = 1, dst = 1, gateway = 1, rx_gateway = 1, dst_mac = 1, vlan = 1, dport = 1,
                resolve_timeout = 1, link_timeout = 1 }

-- The one check of a session's addresses (src, dst, gateway, rx_gateway:
-- IPv4 or IPv6 text, all of one family; dst_mac: a MAC), needing no port
-- nor EAL. dut.session raises what it finds at the caller's line; a
-- scenario's parser refuses it naming the command-line option
-- (scenario.dut_options), before EAL starts. name(key) is what the message
-- calls an option ("src", or "--src"). Returns nil, or the key at fault
-- and one line saying why.
function M.check_addresses(o, name)
  name = name or function(k) return k end
  local src, dst = o.src or "10.0.0.2", o.dst or "10.1.0.2"
  for _, k in ipairs({ "src", "dst", "gateway", "rx_gateway", "dst_mac" }) do
    local a = o[k]
    if a ~= nil and type(a) ~= "string" then return k, ("%s: expected text, got %s"):format(name(k), check.show(a)) end
  end
  local v6 = src:find(":", 1, true) ~= nil
  if v6 ~= (dst:find(":", 1, true) ~= nil) then
    return "dst", ("%s %s and %s %s are not of one family"):format(name("src"), src, name("dst"), dst)
  end
  for _, k in ipairs({ "src", "dst", "gateway", "rx_gateway" }) do
    local a = (k == "src" and src) or (k == "dst" and dst) or o[k]
    if a ~= nil then
      local six = a:find(":", 1, true) ~= nil
      if not pcall(six and ip6.addr or ip4.addr, a, k, 1) then
        return k, ("%s: '%s' is not an %s address"):format(name(k), a, six and "IPv6" or "IPv4")
      end
      if six ~= v6 then return k, ("%s %s is not of the family of %s %s"):format(name(k), a, name("src"), src) end
    end
  end
  if o.dst_mac ~= nil and not pcall(eth.mac, o.dst_mac, "dst_mac", 1) then
    return "dst_mac", ("%s: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)"):format(name("dst_mac"), o.dst_mac)
  end
  return nil
end

-- opts: tx, rx (port numbers or opened ports; rx defaults to tx), src (surge's
-- address on tx), dst (the destination, surge's address on rx), gateway (the
-- DUT's address to resolve on tx; none: dst_mac or the rx port's MAC),
-- rx_gateway (the DUT's address on the rx side, resolved there too: that side
-- answers before traffic starts), dst_mac, vlan, dport, resolve_timeout,
-- link_timeout (seconds).
function M.session(opts)
  for k in pairs(opts) do
    if not known[k] then check.raise(("surge.dut.session: unknown option '%s'"):format(tostring(k))) end
  end
  -- numbers checked here, at the caller's line, not deep in a port or a template
  local f = "surge.dut.session"
  check.field(opts, "vlan", "integer? 0..4095", f)
  check.field(opts, "dport", "integer? 0..65535", f)
  check.field(opts, "resolve_timeout", "number? 0..3600", f)
  check.field(opts, "link_timeout", "number? 0..3600", f)
  local k, why = M.check_addresses(opts)
  if k then check.raise(f .. ": " .. why) end
  local tx = open_port(opts.tx or 0, opts.link_timeout)
  local rx = open_port(opts.rx or opts.tx or 0, opts.link_timeout)
  local s = setmetatable({ tx = tx, rx = rx, src = opts.src or "10.0.0.2", dst = opts.dst or "10.1.0.2",
                           gateway = opts.gateway, rx_gateway = opts.rx_gateway, dst_mac = opts.dst_mac,
                           vlan = opts.vlan,
                           dport = opts.dport or M.DPORT, resolve_timeout = opts.resolve_timeout or 2 }, Session)
  s.v6 = s.src:find(":", 1, true) ~= nil
  s.tx_info, s.rx_info = tx:info(), rx:info()
  local fam = s.v6 and "ip6" or "ip4"
  s.ifaces = { { rxq = tx:rxq(0), txq = tx:txq(0), mac = s.tx_info.mac, [fam] = s.src, vlan = s.vlan } }
  s.rx_iface = 1
  if rx.id ~= tx.id then
    s.ifaces[2] = { rxq = rx:rxq(0), txq = rx:txq(0), mac = s.rx_info.mac, [fam] = s.dst, vlan = s.vlan }
    s.rx_iface = 2
  end
  if not ctrl_pool then ctrl_pool = surge.pool{ size = 1023 } end
  s.ctrl_pool = ctrl_pool
  return s
end

-- Resolves the gateway's MAC on the tx port (ARP, or NDP for IPv6), once.
-- Without a gateway the frames go to dst_mac, or to the rx port's own MAC.
local function resolve_on(self, iface, addr)
  return M.task("surge.dut.trial:resolve", { ifaces = self.ifaces, ctrl_pool = self.ctrl_pool,
    iface = iface, addr = addr, timeout = self.resolve_timeout })
end

function Session:resolve()
  if self.rx_gateway and not self.rx_gateway_mac then
    self.rx_gateway_mac = resolve_on(self, self.rx_iface, self.rx_gateway)
  end
  if self.dst_mac then return self.dst_mac end
  if not self.gateway then
    self.dst_mac = self.rx_info.mac
    return self.dst_mac
  end
  self.dst_mac = resolve_on(self, 1, self.gateway)
  return self.dst_mac
end

-- Where the test frames go, for a progress line (after resolve()): "via
-- gateway 10.0.0.1 (MAC)", "to MAC X (dst_mac)", or, with neither, "to the
-- rx port's own MAC X (no gateway)" (a loopback's: net_ring's is all zeros).
function Session:next_hop()
  local mac = self:resolve()
  if self.gateway then return ("via gateway %s (%s)"):format(self.gateway, mac) end
  if self.dst_mac ~= self.rx_info.mac then return ("to MAC %s (dst_mac)"):format(mac) end
  return ("to the rx port's own MAC %s (no gateway)"):format(mac)
end

-- The one-line reason of a failed task (its first line, without "(task ...)").
function M.reason(e)
  local msg = tostring(e):match("^[^\n]*")
  return (msg:gsub(" %(task '[^']*', lcore %d+%)$", ""))
end

-- Runs the module task fn ("surge.dut.l2:run") with spec and waits for it:
-- what it returns, or its error raised as M.reason's one line.
function M.task(fn, spec)
  local ok, r = pcall(surge.wait, surge.launch(fn, spec))
  if not ok then error(M.reason(r), 0) end
  return r
end

-- Largest frame (with FCS) the ports take.
function Session:max_size()
  local mtu = math.min(self.tx_info.mtu, self.rx_info.mtu)
  return mtu + 14 + (self.vlan and 4 or 0) + M.FCS
end

-- Smallest frame (with FCS) that holds the headers, the flow sequence number
-- and a latency probe.
function Session:min_size()
  return (self.v6 and 54 or 34) + (self.vlan and 4 or 0) + 8 + 2 + 16 + M.FCS
end

-- Checks a frame size (bytes on the wire, FCS included, as RFC 2544 counts).
function Session:check_size(size, what)
  what = what or "frame size"
  if type(size) ~= "number" or size ~= math.floor(size) then
    check.raise(("%s %s is not a whole number of bytes"):format(what, tostring(size)))
  end
  if size < self:min_size() then
    check.raise(("%s %d is below %d, the smallest frame that holds the headers, a sequence number and a "
      .. "latency probe"):format(what, size, self:min_size()))
  end
  if size > self:max_size() then
    check.raise(("%s %d is above the MTU: port %d takes frames up to %d bytes (MTU %d)"):format(what, size,
      self.tx.id, self:max_size(), self:max_size() - 18 - (self.vlan and 4 or 0)))
  end
  return size
end

-- A pool of test frames: size with FCS, tos (IPv4 TOS / IPv6 traffic class),
-- vlan (the frames' VLAN id; nil: the session's), dport (their UDP
-- destination port; nil: the session's). A class of its own VLAN or port is
-- a service the DUT tells apart by it (y1564).
function Session:template(size, tos, vlan, dport)
  vlan = vlan or self.vlan
  dport = dport or self.dport
  self:check_size(size)
  if vlan and not self.vlan and size - 4 < self:min_size() then
    check.raise(("frame size %d is below %d, the smallest VLAN-tagged frame that holds the headers, a sequence "
      .. "number and a latency probe"):format(size, self:min_size() + 4))
  end
  local mac = self:resolve()
  local key = table.concat({ self.tx_info.mac, mac, self.src, self.dst, tostring(vlan), dport,
                             size, tos or 0 }, "|")
  local e = pools[key]
  if not e then
    local t = surge.proto.udp{ src_mac = self.tx_info.mac, dst_mac = mac, src = self.src, dst = self.dst,
                               sport = M.SPORT0, dport = dport, size = size - M.FCS, vlan = vlan,
                               tos = tos, ttl = 64 }
    e = { pool = surge.pool{ template = t, size = 4095 }, l4 = t.l4 }
    pools[key] = e
  end
  return e
end

-- Bits of the wire one frame of `size` bytes (with FCS) takes: the frame,
-- preamble and start delimiter (8) and the inter-frame gap (12). The one
-- L1 formula (scenario/kit/rates.lua l1 is this one).
function M.l1_bits(size) return (size + 20) * 8 end

-- Line rate in frames/s for this size on the tx port (0 when unknown).
function Session:line_pps(size)
  local mbps = self.tx_info.speed_mbps
  if not mbps or mbps == 0 then return 0 end
  return mbps * 1e6 / M.l1_bits(size)
end

-- One trial. t: size (with FCS), rate (pps; nil = as fast as possible),
-- duration (s) or count (packets), settle (s, default 0.5), flows (default 1),
-- probe_every (0 = no latency probes), classes = { { size, tos, flows, share,
-- probe_every, vlan, dport, interval_frames, intervals } } instead of one
-- size (vlan, dport: the class's own, see template; interval_frames > 0:
-- the class's sent and received frames counted per interval of that many of
-- its frames, intervals of them, the last one taking the rest: its
-- intervals = { sent = {...}, received = {...} }, for availability). Returns sent, received (unique
-- frames), lost (sent - received), loss_pct, reordered, duplicated (copies of
-- frames already received), tx_pps, seconds, classes = { { sent, received,
-- lost, loss_pct, reordered, duplicated, latency } }, planned (the frames of
-- the schedule), sender_limited (fewer sent than planned: surge did not
-- offer the rate), rx_poll_ns (mean time between RX polls while sending).
function Session:trial(t)
  local list = t.classes or { { size = t.size, tos = t.tos, flows = t.flows, share = 1,
                                probe_every = t.probe_every } }
  local classes, first, dports = {}, 0, {}
  for k, c in ipairs(list) do
    local flows = check.expect(c.flows or 1, "integer 1.." .. M.MAX_FLOWS, "session:trial", "flows")
    local e = self:template(c.size, c.tos, c.vlan, c.dport)
    classes[k] = { pool = e.pool, l4 = e.l4, flows = flows, first = first, share = c.share or 1,
                   probe_every = c.probe_every or 0, probe_off = e.l4 + 10,
                   -- C counts the intervals (struct surge_dut_ivl: uint32_t per and n)
                   interval_frames = check.expect(c.interval_frames, "integer? 0..4294967295", "session:trial",
                                                  "interval_frames"),
                   intervals = check.expect(c.intervals, (c.interval_frames or 0) > 0 and "integer 1..4294967295"
                                            or "integer?", "session:trial", "intervals") }
    if c.dport then dports[#dports + 1] = { first = first, flows = flows, dport = c.dport } end
    first = first + flows
  end
  if first > M.MAX_FLOWS then   -- the receiver counts the classes' flows together
    check.raise(("session:trial: the classes have %d flows in all, more than %d"):format(first, M.MAX_FLOWS))
  end
  local watch = { self.tx.id }
  if self.rx.id ~= self.tx.id then watch[2] = self.rx.id end
  -- the trial's boundaries and its latency receivers' names, for the results
  -- file (`surge plot` marks them): "64 B at 1.49 Mpps", "64 B, 1000 frames"
  local sizes = {}
  for k, c in ipairs(list) do sizes[k] = ("%d B"):format(c.size) end
  local function pps(v)
    return v >= 1e6 and ("%.4g Mpps"):format(v / 1e6) or v >= 1e3 and ("%.4g kpps"):format(v / 1e3) or ("%.4g pps"):format(v)
  end
  local label = table.concat(sizes, " + ")
    .. (t.rate and " at " .. pps(t.rate) or t.count and (", %d frames"):format(t.count) or ", unpaced")
  local what = t.what or "a trial"
  results.event("trial_start", ("%s: %s"):format(what, label), { label = label })
  local id = surge.launch("surge.dut.trial:run", {
    ifaces = self.ifaces, ctrl_pool = self.ctrl_pool, tx_iface = 1, classes = classes,
    total_flows = first, sport0 = M.SPORT0, dport = self.dport, dports = dports, rate = t.rate, duration = t.duration,
    count = t.count, settle = t.settle, watch = watch, what = t.what, burst = t.burst })
  local ok, r = pcall(surge.wait, id)
  results.event("trial_end", ("%s ends"):format(what), { label = label })
  if not ok then error(M.reason(r), 0) end
  for k, c in ipairs(r.classes or {}) do
    if c.latency_id then
      results.latency_label(c.latency_id, #list > 1 and ("%s (class %d of %s)"):format(sizes[k], k, label) or label)
      c.latency_id = nil
    end
  end
  if not surge.running() then
    -- Ctrl-C or --duration: a cut trial's counts mean nothing, stop the scenario
    error(M.STOPPED_DURING .. (t.what or "a trial"), 0)
  end
  local function loss(x)
    x.lost = math.max(0, x.sent - x.received)
    x.loss_pct = x.sent > 0 and x.lost * 100 / x.sent or 0
  end
  loss(r)
  for _, c in ipairs(r.classes) do loss(c) end
  -- the offer not reached: fewer frames left than the schedule had (surge's
  -- own send limit, a preempted core, a driver that pushed back). What the
  -- trial measured is then at tx_pps, not at the rate asked: a result
  -- limited by surge, not by the DUT (scenarios flag and say so)
  r.sender_limited = r.planned ~= nil and r.sent < r.planned
  return r
end

-- Answers the DUT's ARP/NDP for `seconds` (or until the run stops) on a worker
-- lcore; returns the task id (surge.wait(id) gives the number of answers).
function Session:respond(seconds)
  return surge.launch("surge.dut.trial:respond", { ifaces = self.ifaces, ctrl_pool = self.ctrl_pool,
                                                   seconds = seconds })
end

return M
