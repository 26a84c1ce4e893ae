-- otg/remote.lua - ports of a surge on another host (docs/otg.md, "Ports
-- on other hosts"): a port whose location is HOST/LOCATION is LOCATION of a
-- `surge otg` that this server starts on HOST over SSH, as surge.fleet's
-- controller reaches its instances: OpenSSH runs it and forwards a socket
-- (`ssh -L LOCAL.sock:127.0.0.1:PORT HOST surge otg --http --listen
-- 127.0.0.1:PORT`), so no protocol of surge's own crosses the network; this
-- server is that one's OTG client (curl over the forwarded socket).
--
-- A config is split by host: each host gets the ports there (their
-- LOCATION), the flows whose tx port is there, and the captures and layer1
-- of its ports; the rest (devices too: none on another host's port) is
-- this server's own. A flow's rx ports must be
-- on its tx port's host (its per-flow receive counts are that server's).
-- A start goes to every host with flows, then to this server's tasks:
-- together within the requests' round trips (milliseconds), not at an
-- armed time as surge.fleet's. Metrics are merged: this server's rows,
-- then each host's.
-- A remote's errors come back with their paths in this config's indexes.
--
-- HOST is [USER@]NAME[:SSH_PORT]. SURGE_OTG_SSH: more ssh options (split
-- on spaces: -i KEY, -o ...); SURGE_OTG_REMOTE: the command run on the
-- host up to its listen option (default `surge otg`). The remote server
-- ends when this one does (the SSH session's stdin closes: it gets SIGTERM).
local json = require "surge.results.json"
local results = require "surge.results"
local surge = require "surge"
local capture = require "surge.otg.capture"

local M = {}

local sessions = {}     -- host -> { pipe, sock, dir }
local split             -- the config's split: nil when no port is remote

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

-- Splits a decoded config body: nil when no port is remote; else the
-- local body and { hosts = { host -> { body, flows = { orig index }, ports =
-- { orig index } ... } }, port_host, flow_host }. Raises 400 for a flow
-- across hosts.
function M.split(body)
  if type(body) ~= "table" or type(body.ports) ~= "table" then split = nil return body end
  local any = false
  for _, p in ipairs(body.ports) do
    if type(p) == "table" and type(p.location) == "string" and M.parse(p.location) then any = true end
  end
  if not any then split = nil return body end
  local sp = { hosts = {}, port_host = {}, flow_host = {}, order = {} }
  local mine = {}
  for k, v in pairs(body) do mine[k] = v end
  mine.ports, mine.flows = arr(), arr()
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
  local function with(t, k, v)
    local q = {}
    for kk, vv in pairs(t) do q[kk] = vv end
    q[k] = v
    return q
  end
  for i, p in ipairs(body.ports) do
    local h, loc = M.parse(type(p) == "table" and type(p.location) == "string" and p.location or "")
    if h then sp.port_host[p.name] = h end
    place("ports", h, h and with(p, "location", loc) or p, i)
  end
  local errs = {}
  for i, f in ipairs(type(body.flows) == "table" and body.flows or {}) do
    local tr = type(f) == "table" and type(f.tx_rx) == "table" and type(f.tx_rx.port) == "table" and f.tx_rx.port
    local h = tr and sp.port_host[tr.tx_name]
    if tr then
      local rx = type(tr.rx_names) == "table" and tr.rx_names or { tr.rx_name }
      for k, n in ipairs(rx) do
        if sp.port_host[n] ~= h then
          errs[#errs + 1] = ("flows[%d].tx_rx.port.rx_names[%d]: port '%s' is on %s, the flow's tx port on %s: a flow "
            .. "across hosts is not implemented by surge (its receive counts are each server's)"):format(i - 1, k - 1,
            tostring(n), sp.port_host[n] or "this host", h or "this host")
        end
      end
    end
    if h then sp.flow_host[f.name] = h end
    place("flows", h, f, i)
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
  sp.local_captures = mine.captures ~= nil and #mine.captures > 0
  split = sp
  return mine
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

-- POST /config: each host's part set (its server started when first needed).
function M.configure()
  if not split then return end
  for _, h in ipairs(split.order) do call(h, "POST", "/config", split.hosts[h].body) end
end

-- The names of a request's list (flows or ports) split: this server's
-- (nil: none asked of it) and per host. Empty asks all of each.
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

-- control/state: what the other hosts do first (a traffic start goes to
-- them, then here); returns the state for this server, nil: none of it is
-- this server's.
function M.control(st)
  if not split then return st end
  local which, field, owner
  if st.choice == "traffic" then which, field, owner = st.traffic.flow_transmit, "flow_names", split.flow_host
  else
    which = st.port[st.port.choice]
    field, owner = "port_names", split.port_host
  end
  local mine, per = names_of(which[field], owner)
  for h, names in pairs(per) do
    local sub = { choice = st.choice }
    if st.choice == "traffic" then
      sub.traffic = { choice = "flow_transmit", flow_transmit = { state = which.state, flow_names = names } }
    else
      sub.port = { choice = st.port.choice, [st.port.choice] = { state = which.state, port_names = names } }
    end
    call(h, "POST", "/control/state", sub)
  end
  if which[field] ~= nil and #which[field] > 0 and mine == nil then return nil end
  if st.choice == "port" and st.port.choice == "capture" and not split.local_captures then return nil end
  which[field] = mine
  return st
end

-- /monitor/metrics: this server's rows (local_metrics(req)), then each
-- other host's; req's names are split as for control.
function M.metrics(req, local_metrics)
  if not split then return local_metrics(req) end
  local flow = req.choice == "flow"
  local sub = flow and req.flow or req.port
  local key = flow and "flow_names" or "port_names"
  local mine, per = names_of(sub[key], flow and split.flow_host or split.port_host)
  local rows = {}
  if sub[key] == nil or #sub[key] == 0 or mine ~= nil then
    sub[key] = mine
    local out = local_metrics(req)
    for _, m in ipairs(out[flow and "flow_metrics" or "port_metrics"]) do rows[#rows + 1] = m end
  end
  for h, names in pairs(per) do
    local r = { choice = req.choice, [req.choice] = { [key] = names } }
    local got = json.decode(call(h, "POST", "/monitor/metrics", r), 64) or {}
    for _, m in ipairs(got[flow and "flow_metrics" or "port_metrics"] or {}) do
      if not flow then m.location = h .. "/" .. tostring(m.location) end
      rows[#rows + 1] = m
    end
  end
  return { choice = flow and "flow_metrics" or "port_metrics", [flow and "flow_metrics" or "port_metrics"] = arr(rows) }
end

-- GET /config: this server's config with the other hosts' ports (their
-- locations HOST/LOCATION again) and flows back at their places.
function M.full(cfg)
  if not split or not cfg then return cfg end
  local out = {}
  for k, v in pairs(cfg) do out[k] = v end
  for _, key in ipairs({ "ports", "flows" }) do
    local all, mine, at = {}, cfg[key] or {}, 1
    local total = #mine
    for _, h in ipairs(split.order) do total = total + #split.hosts[h].body[key] end
    for _, h in ipairs(split.order) do
      local got = json.decode(call(h, "GET", "/config"), 64) or {}
      for i, v in ipairs(got[key] or {}) do
        if key == "ports" then v.location = h .. "/" .. tostring(v.location) end
        all[split.hosts[h].map[key][i - 1] + 1] = v
      end
    end
    for i = 1, total do
      if all[i] == nil then all[i], at = mine[at], at + 1 end
    end
    out[key] = arr(all)
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
