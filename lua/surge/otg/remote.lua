-- otg/remote.lua - ports of a surge on another host (docs/otg.md, "Ports
-- on other hosts"): a port whose location is HOST/LOCATION is LOCATION of a
-- `surge otg` that this server starts on HOST over SSH, as surge.fleet's
-- controller reaches its instances: OpenSSH runs it and forwards a socket
-- (`ssh -L LOCAL.sock:127.0.0.1:PORT HOST surge otg --http --listen
-- 127.0.0.1:PORT`), so no protocol of surge's own crosses the network; this
-- server is that one's OTG client (curl over the forwarded socket).
--
-- A config is split by host: each host (this one too) gets the ports there
-- (their LOCATION), the captures and layer1 of its ports, and the flows at
-- their indexes in the whole config, so that a flow's number (its tag,
-- otg/flows.lua) is the same on every host: a flow whose tx port is there
-- as given (its rx ports there only); a flow another host sends to one of
-- its ports as an rx-only entry (tx_name one of its ports, never sent,
-- counted on its rx ports there); below the last of those, a filler (no
-- metrics, never sent) for each flow it has no part in. The config's
-- private member x_surge_part ({ rx_only, no_rx }: flow indexes) says
-- which are not sent there and which sent flows count on no port there
-- (all their rx ports elsewhere); this module takes it off before the
-- model's check. Devices stay with this server (none on another host's
-- port); a flow across hosts measures no latency (no common clock).
--
-- A start is two steps over every host concerned: each starts its port
-- tasks receiving and holds its flows (a start on a host configured with
-- x_surge_part), then each lets them go (a resume naming no flow while so
-- held): no frame is sent before every port receives; the flows start
-- within the go requests' round trips (milliseconds), not at an armed time
-- as surge.fleet's. A stop of all with a flow across hosts first stops
-- those flows' sending (a named stop on their tx hosts), waits until every
-- rx host's counts are quiet (drain), then stops every host: the counts are
-- final. Metrics are merged by flow: sent from the tx host, received summed
-- over the rx hosts. A remote's errors come back with their paths in this
-- config's indexes.
--
-- HOST is [USER@]NAME[:SSH_PORT]. SURGE_OTG_SSH: more ssh options (split
-- on spaces: -i KEY, -o ...); SURGE_OTG_REMOTE: the command run on the
-- host up to its listen option (default `surge otg`). The remote server
-- ends when this one does (the SSH session's stdin closes: it gets SIGTERM).
local json = require("surge.results.json")
local results = require("surge.results")
local surge = require("surge")
local capture = require("surge.otg.capture")
local config = require("surge.otg.config")
local traffic = require("surge.otg.traffic")

local M = {}

local HERE = ""         -- this server in a flow's hosts (a HOST is never empty)
local PART = "x_surge_part"
local SETTLE_S = 0.5    -- a drain's end without every frame in: rx counts quiet that long (traffic.lua's settle)
local QUIET_S = 0.05    -- ... with every frame in: quiet between two reads that far apart
local DRAIN_MAX_S = 5   -- counts that never stop moving (frames of another sender): the drain ends anyway

local sessions = {}     -- host -> { pipe, sock, dir }
local split             -- the config's split: nil when no port is remote
local pending           -- a config's split (and its part for this host) until the config is set
local held = false      -- this server's config came with x_surge_part: its starts wait for a go
local rx_polls = {}     -- flow name -> the last read of what it received on several hosts (traffic.set_rates)
local RX_RATE = { "frames_rx" }

local function fail(status, errs) error({ status = status, errors = errs }, 0) end

local function shq(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- HOST, LOCATION of a remote location; nil for a local one (a DPDK device
-- string with a path has its ',' before the '/'; interface names have no '/').
function M.parse(loc)
  local host, rest = loc:match("^([^/,]+)/(.+)$")
  -- a letter or digit first: never an ssh option (-F..., -o...)
  if host and host:match("^[%w][%w%.%-_@:]*$") then return host, rest end
  return nil
end

-- One request to a host's server: status, body text.
local function http(s, method, path, body)
  local out = s.dir .. "/resp"
  os.remove(out)
  local data = ""
  if body then
    local f = assert(io.open(s.dir .. "/req", "wb"))
    f:write(body)
    f:close()
    data = "-H 'Content-Type: application/json' --data-binary @" .. shq(s.dir .. "/req")
  end
  local p = io.popen(("curl -sS --max-time 60 --unix-socket %s -X %s %s -o %s -w '%%{http_code}' %s 2>&1")
    :format(shq(s.sock), method, data, shq(out), shq("http://otg" .. path)))
  local code = p:read("*a")
  p:close()
  return tonumber(code:match("(%d%d%d)$")) or 0, results.read_file(out) or code
end

-- The session of host (started at its first use, kept for the next configs).
local function session(host)
  if sessions[host] then return sessions[host] end
  local dir = capture.temp_folder("remote")
  local s = { dir = dir, sock = dir .. "/http.sock", host = host }
  local dest, port = host:match("^(.-):(%d+)$")
  dest = dest or host
  local rport = 20000 + math.random(0, 39999)
  local remote = ("%s --http --listen 127.0.0.1:%d --stats-interval 0 </dev/null & p=$!; read _; kill -TERM $p; "
    .. "wait $p"):format(os.getenv("SURGE_OTG_REMOTE") or "surge otg", rport)
  -- ssh's status in ssh.rc when it ends: a refused login fails at once, not after the wait
  local cmd = ("ssh -o BatchMode=yes -o ExitOnForwardFailure=yes %s %s -L %s:127.0.0.1:%d %s %s >%s 2>&1; "
    .. "echo $? >%s"):format(port and ("-p " .. port) or "", os.getenv("SURGE_OTG_SSH") or "", shq(s.sock), rport,
    shq(dest), shq(remote), shq(dir .. "/ssh.log"), shq(dir .. "/ssh.rc"))
  s.pipe = io.popen(cmd, "w")
  for _ = 1, 300 do
    if results.read_file(dir .. "/ssh.rc") then break end
    if http(s, "GET", "/capabilities/version") == 200 then
      sessions[host] = s
      return s
    end
    surge.sleep(0.1)
  end
  s.pipe:close()
  local log = (results.read_file(dir .. "/ssh.log") or ""):gsub("%s+$", ""):gsub("\n", " | ")
  for _, f in ipairs({ "ssh.log", "ssh.rc", "req", "resp" }) do os.remove(dir .. "/" .. f) end
  os.remove(dir)
  fail(400, { ("host %s: its surge otg did not answer over SSH (ssh said: %s)"):format(host, log) })
end

local function arr(t) return json.array(t or {}) end

local function copy(t)
  local q = {}
  for k, v in pairs(t) do q[k] = v end
  return q
end

local function with(t, k, v)
  local q = copy(t)
  q[k] = v
  return q
end

-- x_surge_part of a host's config (a controlling server's, above) checked
-- against its nflows flows: { rx_only, no_rx } (0-based indexes), or a 400.
local function check_part(x, nflows)
  local out = {}
  for _, key in ipairs({ "rx_only", "no_rx" }) do
    local list = type(x) == "table" and x[key] or nil
    if type(list) ~= "table" then
      fail(400, { ("%s.%s: an array of flow indexes expected (surge's own, from the server that drives this one)")
        :format(PART, key) })
    end
    for k, i in ipairs(list) do
      if type(i) ~= "number" or i % 1 ~= 0 or i < 0 or i >= nflows then
        fail(400, { ("%s.%s[%d]: %s is no flow index of this config"):format(PART, key, k - 1, tostring(i)) })
      end
    end
    out[key] = list
  end
  return out
end

-- The hosts of flow f, index i: tx (HERE or a HOST), rx = { host ->
-- its rx port names there }, all (no rx port named: every port of every
-- host), cross (an rx host not its tx host). A port name of no port of the
-- config is a line in errs (otg/flows.lua's); anything else odd leaves the
-- flow whole with this server, whose check names it.
local function flow_hosts(f, i, port_host, ports_of, errs)
  local tr = type(f) == "table" and type(f.tx_rx) == "table" and type(f.tx_rx.port) == "table" and f.tx_rx.port
  local info = { tx = HERE, rx = {}, cross = false, orig = f }
  if not tr or type(tr.tx_name) ~= "string" or (tr.rx_names ~= nil and type(tr.rx_names) ~= "table") then
    return info
  end
  local names = tr.rx_name ~= nil and { tr.rx_name } or tr.rx_names or {}
  local known = true
  for k, n in ipairs({ tr.tx_name, unpack(names) }) do
    if ports_of.known[n] == nil then
      errs[#errs + 1] = ("flows[%d].tx_rx.port.%s: '%s' is not a port of this config"):format(i - 1,
        k == 1 and "tx_name" or ("rx_names[%d]"):format(k - 2), tostring(n))
      known = false
    end
  end
  if not known then return info end
  info.tx, info.first_rx = port_host[tr.tx_name] or HERE, names[1]
  if #names == 0 then
    info.all = true
    for h, list in pairs(ports_of.hosts) do if #list > 0 then info.rx[h] = {} end end
  end
  for _, n in ipairs(names) do
    local h = port_host[n] or HERE
    info.rx[h] = info.rx[h] or {}
    info.rx[h][#info.rx[h] + 1] = n
  end
  for h in pairs(info.rx) do if h ~= info.tx then info.cross = true end end
  return info
end

-- Host h's entry of flow i (info: flow_hosts'), adding its index to part's
-- rx_only or no_rx; nil: h has no part in it.
local function entry(info, i, h, ports, part)
  local f = info.orig
  if not info.cross then
    if info.tx == h then return f end
    return nil
  end
  local rx = info.rx[h]
  if info.tx == h then
    local here = arr(rx and (info.all and {} or rx) or { f.tx_rx.port.tx_name })
    if not rx then part.no_rx[#part.no_rx + 1] = i - 1 end
    return with(f, "tx_rx", { choice = "port", port = { tx_name = f.tx_rx.port.tx_name, rx_names = here } })
  end
  if not rx then return nil end
  part.rx_only[#part.rx_only + 1] = i - 1
  return with(f, "tx_rx", { choice = "port", port = { tx_name = info.all and ports[1] or rx[1],
                                                      rx_names = arr(info.all and {} or rx) } })
end

-- Splits a decoded config body: returns this server's part (the body
-- itself when no port is remote) and what is pending until M.configure:
-- { part = this server's x_surge_part, split = nil (no port remote) or
-- { hosts = { host -> { body, map } }, order, port_host, flows = { info },
-- by_name } }. Raises 400 for a device on another host's port, latency
-- across hosts, a name of no port, a bad x_surge_part.
function M.split(body)
  pending = { part = nil }
  if type(body) == "table" and body[PART] ~= nil then
    local x = body[PART]
    body = with(body, PART, nil)
    pending.part = check_part(x, type(body.flows) == "table" and #body.flows or 0)
  end
  if type(body) ~= "table" or type(body.ports) ~= "table" then return body, pending end
  local any = false
  for _, p in ipairs(body.ports) do
    if type(p) == "table" and type(p.location) == "string" and M.parse(p.location) then any = true end
  end
  if not any then return body, pending end
  if pending.part then
    fail(400, { PART .. ": a host's part of a config names ports on other hosts (one server drives them all)" })
  end
  local sp = { hosts = {}, port_host = {}, order = {}, flows = {}, by_name = {} }
  local mine = copy(body)
  mine.ports = arr()
  local function host_of(h)
    if not sp.hosts[h] then
      sp.hosts[h] = { body = { ports = arr(), flows = arr(), captures = arr(), layer1 = arr() },
                      map = { ports = {}, flows = {}, captures = {}, layer1 = {} } }
      sp.order[#sp.order + 1] = h
    end
    return sp.hosts[h]
  end
  -- item (index i of body[key]) to host h's part (nil: this server's)
  local function place(key, h, item, i)
    if not h then
      mine[key][#mine[key] + 1] = item
      return
    end
    local x = host_of(h)
    x.body[key][#x.body[key] + 1] = item
    x.map[key][#x.body[key] - 1] = i - 1
  end
  local ports_of = { known = {}, hosts = { [HERE] = {} } }    -- every port name; host -> its port names in order
  for i, p in ipairs(body.ports) do
    local h, loc = M.parse(type(p) == "table" and type(p.location) == "string" and p.location or "")
    local name = type(p) == "table" and p.name
    if h and type(name) == "string" then sp.port_host[name] = h end
    if type(name) == "string" then
      ports_of.known[name] = true
      ports_of.hosts[h or HERE] = ports_of.hosts[h or HERE] or {}
      table.insert(ports_of.hosts[h or HERE], name)
    end
    place("ports", h, h and with(p, "location", loc) or p, i)
  end
  local errs = {}
  for i, f in ipairs(type(body.flows) == "table" and body.flows or {}) do
    local info = flow_hosts(f, i, sp.port_host, ports_of, errs)
    info.name = type(f) == "table" and f.name or nil
    sp.flows[i] = info
    if info.name ~= nil then sp.by_name[info.name] = info end
    local m = info.cross and type(f.metrics) == "table" and f.metrics
    if m and type(m.latency) == "table" and m.latency.enable == true then
      errs[#errs + 1] = ("flows[%d].metrics.latency.enable: the flow's tx port is on %s and rx ports on other "
        .. "hosts: a latency across hosts needs a clock common to them, which surge does not have (timestamps "
        .. "are each receiving host's own clock)"):format(i - 1, info.tx == HERE and "this host" or info.tx)
    end
  end
  -- a device stays with this server (its neighbour task, /monitor/states): none on another host's port
  for i, d in ipairs(type(body.devices) == "table" and body.devices or {}) do
    for k, e in ipairs(type(d) == "table" and type(d.ethernets) == "table" and d.ethernets or {}) do
      local n = type(e) == "table" and type(e.connection) == "table" and e.connection.port_name
      if n and sp.port_host[n] then
        errs[#errs + 1] = ("devices[%d].ethernets[%d].connection.port_name: port '%s' is on %s: a device on "
          .. "another host is not implemented by surge"):format(i - 1, k - 1, tostring(n), sp.port_host[n])
      end
    end
  end
  if #errs > 0 then fail(400, errs) end
  -- every host's flows, each at its index in the whole config; fillers below its last part
  local function flows_of(h)
    local ports = ports_of.hosts[h]
    local part, out, last = { rx_only = arr(), no_rx = arr() }, arr(), 0
    for i, info in ipairs(sp.flows) do
      out[i] = entry(info, i, h, ports, part) or false
      if out[i] then last = i end
    end
    for i = #sp.flows, last + 1, -1 do out[i] = nil end
    for i = 1, last do
      if out[i] == false then
        local name = sp.flows[i].name
        out[i] = { name = type(name) == "string" and name or ("flows[%d]"):format(i - 1),
                   tx_rx = { choice = "port", port = { tx_name = ports[1], rx_names = arr({ ports[1] }) } } }
        part.rx_only[#part.rx_only + 1] = i - 1
      end
    end
    table.sort(part.rx_only)
    return out, part
  end
  -- (this server's part: the flows as given when none is on another host)
  if type(body.flows) == "table" then mine.flows, pending.part = flows_of(HERE) end
  for _, h in ipairs(sp.order) do
    local x = sp.hosts[h]
    x.body.flows, x.body[PART] = flows_of(h)
    for i = 1, #x.body.flows do x.map.flows[i - 1] = i - 1 end
  end
  for _, key in ipairs({ "captures", "layer1" }) do
    if type(body[key]) == "table" then
      mine[key] = arr()
      for i, c in ipairs(body[key]) do
        local per, here = {}, arr()
        for _, n in ipairs(type(c) == "table" and type(c.port_names) == "table" and c.port_names or {}) do
          local h = sp.port_host[n]
          if h then
            per[h] = per[h] or arr()
            per[h][#per[h] + 1] = n
          else here[#here + 1] = n end
        end
        for h, names in pairs(per) do place(key, h, with(c, "port_names", names), i) end
        if type(c) ~= "table" then place(key, nil, c, i)      -- this server's checker refuses it by path
        elseif #here > 0 or next(per) == nil then place(key, nil, with(c, "port_names", here), i) end
      end
    end
  end
  sp.local_captures = type(mine.captures) == "table" and #mine.captures > 0
  pending.split = sp
  return mine, pending
end

-- A remote's error lines with this config's indexes.
local function mapped(x, errs)
  local out = {}
  for _, e in ipairs(errs) do
    local line = tostring(e):gsub("^(%a[%w_]*)%[(%d+)%]", function(key, k)
      local m = x.map[key] and x.map[key][tonumber(k)]
      return m and ("%s[%d]"):format(key, m) or nil
    end)
    out[#out + 1] = ("%s (on %s)"):format(line, x.host)
  end
  return out
end

-- A request to a host; its decoded answer, or the error raised as this
-- server's (the remote's status, its lines mapped).
local function call(h, method, path, body)
  local x = split and split.hosts[h] or { map = {} }
  x.host = h
  local s = session(h)
  local status, text = http(s, method, path, body and json.encode(body))
  if status == 200 then return text end
  if status == 0 then
    -- no answer (the remote server or the SSH session ended): the next use of the host starts it again
    pcall(s.pipe.close, s.pipe)
    os.remove(s.sock)
    sessions[h] = nil
    fail(500, { ("host %s: no answer over SSH (%s); the next config starts its surge otg again"):format(h,
      tostring(text):gsub("%s+$", "")) })
  end
  local e = json.decode(text or "", 64)
  local errs = type(e) == "table" and type(e.errors) == "table" and e.errors or { tostring(text) }
  fail(status >= 400 and status or 500, mapped(x, errs))
end

-- After this server's part is set (POST /config): the split in force, this
-- server's flows marked (rx_only: never sent here; no_rx: counted on no
-- port here, its spec.rx naming none), each host's part set.
function M.configure()
  local p = pending or {}
  pending = nil
  split, held = p.split, p.split == nil and p.part ~= nil
  rx_polls = {}
  local c = config.compiled()
  if p.part and c then
    for _, i in ipairs(p.part.rx_only) do if c.flows[i + 1] then c.flows[i + 1].rx_only = true end end
    for _, i in ipairs(p.part.no_rx) do if c.flows[i + 1] then c.flows[i + 1].rx = { false } end end
  end
  if not split then return end
  for _, h in ipairs(split.order) do call(h, "POST", "/config", split.hosts[h].body) end
end

-- The names of a request's ports split: this server's (nil: none asked of
-- it) and per host. Empty asks all of each.
local function names_of(names, owner)
  if names == nil or #names == 0 then
    local per = {}
    for _, h in ipairs(split.order) do per[h] = arr() end
    return names, per
  end
  local mine, per = arr(), {}
  for _, n in ipairs(names) do
    local h = owner[n]
    if h then
      per[h] = per[h] or arr()
      per[h][#per[h] + 1] = n
    else mine[#mine + 1] = n end
  end
  return #mine > 0 and mine or nil, per
end

-- The names of a request's flows per host concerned (HERE too): its tx
-- host, and with rx too its rx hosts; all of each (an empty list) when
-- names is empty. A name of no flow of the config: a 400 at path.
local function flow_hosts_of(names, rx, path)
  local per = {}
  if names == nil or #names == 0 then
    per[HERE] = arr()
    for _, h in ipairs(split.order) do per[h] = arr() end
    return per
  end
  local function add(h, n)
    per[h] = per[h] or arr()
    if per[h][#per[h]] ~= n then per[h][#per[h] + 1] = n end
  end
  for k, n in ipairs(names) do
    local info = split.by_name[n]
    if not info then fail(400, { ("%s[%d]: '%s' is not a flow of the config"):format(path, k - 1, tostring(n)) }) end
    add(info.tx, n)
    if rx then for h in pairs(info.rx) do add(h, n) end end
  end
  return per
end

local function transmit(h, state, names)
  local body = { choice = "traffic", traffic = { choice = "flow_transmit",
                                                 flow_transmit = { state = state, flow_names = names } } }
  if h == HERE then
    if state == "start" then traffic.start(names, true)
    elseif state == "resume" then traffic.go()
    else traffic.stop_flows(names) end
    return
  end
  call(h, "POST", "/control/state", body)
end

local function now() return tonumber(surge.tsc()) / surge.tsc_hz() end

local flow_rows

-- A stop of all: the sending of each flow across hosts stopped on its tx
-- host (a named stop: every port still receives), then the drain: until
-- the counts of those flows have not moved for QUIET_S with every frame
-- sent received, or for SETTLE_S (what did not arrive is lost).
local function drain()
  local per, names = {}, arr()
  for _, info in ipairs(split.flows) do
    if info.cross then
      per[info.tx] = per[info.tx] or arr()
      per[info.tx][#per[info.tx] + 1] = info.name
      names[#names + 1] = info.name
    end
  end
  if #names == 0 then return end
  for h, list in pairs(per) do transmit(h, "stop", list) end
  local t0 = now()
  local last, since
  while now() - t0 < DRAIN_MAX_S do
    local key, all_in = {}, true
    for _, m in ipairs(flow_rows(names, traffic.metrics)) do
      key[#key + 1] = m.frames_tx .. "/" .. m.frames_rx
      if m.frames_rx < m.frames_tx then all_in = false end
    end
    key = table.concat(key, " ")
    local t = now()
    if key ~= last then last, since = key, t
    elseif t - since >= (all_in and QUIET_S or SETTLE_S) then return end
    surge.sleep(QUIET_S / 2)
  end
end

-- control/state: the other hosts' part done; returns the state for this
-- server, nil: none of it is this server's (or done here already). On a
-- held server (driven by another) a start holds and a resume naming no
-- flow lets it go.
function M.control(st)
  if not split then
    if held and st.choice == "traffic" then
      local ft = st.traffic.flow_transmit
      if ft.state == "start" then traffic.start(ft.flow_names, true) return nil end
      if ft.state == "resume" and (ft.flow_names == nil or #ft.flow_names == 0) and traffic.held() then
        traffic.go()
        return nil
      end
    end
    return st
  end
  if st.choice == "traffic" then
    local ft = st.traffic.flow_transmit
    local per = flow_hosts_of(ft.flow_names, ft.state == "start", "traffic.flow_transmit.flow_names")
    if ft.state == "start" then
      -- every host's ports receiving first, then each host's flows let go
      local armed = {}
      local ok, e = pcall(function()
        for _, h in ipairs(split.order) do
          if per[h] then transmit(h, "start", per[h]) armed[#armed + 1] = h end
        end
        if per[HERE] then transmit(HERE, "start", per[HERE]) armed[#armed + 1] = HERE end
      end)
      if not ok then
        for _, h in ipairs(armed) do pcall(transmit, h, "stop", arr()) end
        error(e, 0)
      end
      for _, h in ipairs(armed) do transmit(h, "resume", arr()) end
      rx_polls = {}
      return nil
    end
    local all = ft.flow_names == nil or #ft.flow_names == 0
    if ft.state == "stop" and all then pcall(drain) end   -- (a host gone: the stops below say so)
    for _, h in ipairs(split.order) do if per[h] then transmit(h, ft.state, per[h]) end end
    if not per[HERE] then return nil end
    ft.flow_names = per[HERE]
    return st
  end
  local which = st.port[st.port.choice]
  local mine, per = names_of(which.port_names, split.port_host)
  for h, names in pairs(per) do
    call(h, "POST", "/control/state", { choice = "port", port = { choice = st.port.choice,
      [st.port.choice] = { state = which.state, port_names = names } } })
  end
  if which.port_names ~= nil and #which.port_names > 0 and mine == nil then return nil end
  if st.port.choice == "capture" and not split.local_captures then return nil end
  which.port_names = mine
  return st
end

-- The merged rows of the named flows (all: empty), in order: each from its
-- tx host, and for a flow across hosts what was received (frames, bytes,
-- rate, the first and last receive times) summed over its rx hosts, its
-- loss from those sums.
flow_rows = function(names, local_metrics)
  local per = flow_hosts_of(names, true, "flow.flow_names")
  local rows = {}
  for h, list in pairs(per) do
    local r = { choice = "flow", flow = { flow_names = list } }
    local got = h == HERE and local_metrics(r) or json.decode(call(h, "POST", "/monitor/metrics", r), 64) or {}
    rows[h] = {}
    for _, m in ipairs(got.flow_metrics or {}) do rows[h][m.name] = m end
  end
  local out = arr()
  local list = names
  if list == nil or #list == 0 then
    list = {}
    for i, info in ipairs(split.flows) do list[i] = info.name end
  end
  for _, n in ipairs(list) do
    local info = split.by_name[n]
    local m = rows[info.tx][n]
    if m and info.cross then
      m = copy(m)
      m.port_rx, m.frames_rx, m.bytes_rx = info.first_rx, 0, 0
      local first, last
      for h in pairs(info.rx) do
        local r = rows[h] and rows[h][n] or {}
        m.frames_rx = m.frames_rx + (r.frames_rx or 0)
        m.bytes_rx = m.bytes_rx + (r.bytes_rx or 0)
        local ts = type(r.timestamps) == "table" and r.timestamps
        if ts and ts.first_timestamp_ns then
          if not first or ts.first_timestamp_ns < first then first = ts.first_timestamp_ns end
          if not last or ts.last_timestamp_ns > last then last = ts.last_timestamp_ns end
        end
      end
      if m.timestamps then
        m.timestamps = first and { first_timestamp_ns = first, last_timestamp_ns = last } or {}
      end
      m.loss = m.frames_tx > 0 and math.max(0, (m.frames_tx - m.frames_rx) / m.frames_tx * 100) or 0
      rx_polls[n] = rx_polls[n] or {}
      traffic.set_rates(rx_polls[n], m, now(), RX_RATE, m.transmit ~= "stopped")
    end
    if m then out[#out + 1] = m end
  end
  return out
end

-- /monitor/metrics: flows merged (flow_rows); ports this server's rows
-- (local_metrics(req)), then each other host's; req's names are split as
-- for control.
function M.metrics(req, local_metrics)
  if not split then return local_metrics(req) end
  if req.choice == "flow" then return { choice = "flow_metrics", flow_metrics = flow_rows(req.flow.flow_names,
    local_metrics) } end
  local sub = req.port
  local mine, per = names_of(sub.port_names, split.port_host)
  local rows = arr()
  if sub.port_names == nil or #sub.port_names == 0 or mine ~= nil then
    sub.port_names = mine
    for _, m in ipairs(local_metrics(req).port_metrics) do rows[#rows + 1] = m end
  end
  for h, names in pairs(per) do
    local got = json.decode(call(h, "POST", "/monitor/metrics", { choice = "port", port = { port_names = names } }),
      64) or {}
    for _, m in ipairs(got.port_metrics or {}) do
      m.location = h .. "/" .. tostring(m.location)
      rows[#rows + 1] = m
    end
  end
  return { choice = "port_metrics", port_metrics = rows }
end

-- GET /config: this server's config with the other hosts' ports (their
-- locations HOST/LOCATION again) at their places and each flow as its tx
-- host has it (rx ports as given).
function M.full(cfg)
  if not split or not cfg then return cfg end
  local out = copy(cfg)
  local got = { [HERE] = cfg }
  for _, h in ipairs(split.order) do got[h] = json.decode(call(h, "GET", "/config"), 64) or {} end
  local all, mine, at = {}, cfg.ports or {}, 1
  local total = #mine
  for _, h in ipairs(split.order) do total = total + #split.hosts[h].body.ports end
  for _, h in ipairs(split.order) do
    for i, v in ipairs(got[h].ports or {}) do
      v.location = h .. "/" .. tostring(v.location)
      all[split.hosts[h].map.ports[i - 1] + 1] = v
    end
  end
  for i = 1, total do
    if all[i] == nil then all[i], at = mine[at], at + 1 end
  end
  out.ports = arr(all)
  if cfg.flows then
    local flows = arr()
    for i, info in ipairs(split.flows) do
      local v = (got[info.tx].flows or {})[i]
      if v and info.cross then v = with(v, "tx_rx", { choice = "port", port = info.orig.tx_rx.port }) end
      flows[i] = v
    end
    out.flows = flows
  end
  return out
end

-- /monitor/capture of a port on another host: its bytes; nil: this server's.
function M.capture(name)
  local h = split and split.port_host[name]
  if not h then return nil end
  return call(h, "POST", "/monitor/capture", { port_name = name })
end

-- The server ends: every remote server with it.
function M.close()
  for _, s in pairs(sessions) do
    pcall(s.pipe.close, s.pipe)
    os.remove(s.dir .. "/req")
    os.remove(s.dir .. "/resp")
    os.remove(s.dir .. "/ssh.log")
    os.remove(s.dir .. "/ssh.rc")
    os.remove(s.sock)
    os.remove(s.dir)
  end
  sessions = {}
end

return M
