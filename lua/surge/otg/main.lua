-- otg/main.lua - `surge otg`: master serves the OTG API (docs/otg.md) until
-- the run stops (SIGINT, SIGTERM: traffic stopped, pools checked, exit 0).
--
-- The HTTP server is C's (core/front/otg_http.c), pulled from here: the next
-- whole request, routed, answered. A request never ends the server: a bad
-- one is the model's Error (400 validation, 409 conflict), a Lua error in a
-- handler a 500 with its traceback on stderr.
local common = require("surge.otg.common")
local json = require("surge.results.json")
local config = require("surge.otg.config")
local action = require("surge.otg.action")
local traffic = require("surge.otg.traffic")
local remote = require("surge.otg.remote")
local ffi, surge, core, C = common.ffi, common.surge, common.core, common.C
local schema, model, capture, l1, devices = common.schema, common.model, common.capture, common.l1, common.devices

local M = { API_VERSION = "1.3.0", MAX_DEPTH = 64 }

local function err_reply(status, kind, errors)
  return status, { code = status, kind = kind, errors = setmetatable(errors, { __json = "array" }) }
end

-- The body as JSON; or nil, and the error reply's status and table.
local function body_json(req)
  if req.body == "" then return nil, err_reply(400, "validation", { "the request has no body (JSON expected)" }) end
  local v, why = json.decode(req.body, M.MAX_DEPTH)
  if v == nil then return nil, err_reply(400, "validation", { "the body is not JSON: " .. tostring(why) }) end
  return v
end

local function warnings() return 200, { warnings = setmetatable({}, { __json = "array" }) } end

local routes = {}

-- A request's body checked against node of the model: the checked table,
-- or nil and the answer (status, reply).
local function request(req, node)
  local body, status, e = body_json(req)
  if not body then return nil, status, e end
  local t, errs = schema.check(node, body, "")
  if not t then return nil, err_reply(400, "validation", errs) end
  return t
end

routes["GET /capabilities/version"] = function()
  return 200, { api_spec_version = M.API_VERSION, sdk_version = "", app_version = surge.version }
end

routes["POST /config"] = function(req)
  local body, status, e = body_json(req)
  if not body then return status, e end
  local busy = traffic.busy()
  if not busy then traffic.stop() end      -- the last run's tasks, all flows done: ended before the ports change
  -- this host's part; the other hosts' (otg/remote.lua) after it
  local r = config.set(busy and body or remote.split(body), busy)
  if not r then traffic.forget() end
  if not busy then traffic.serve_neigh() end    -- the devices of the config in force answered for, resolved
  if r then return err_reply(r.status, r.kind, r.errors) end
  remote.configure()
  return warnings()
end

routes["GET /config"] = function()
  return 200, remote.full(config.get()) or {}
end

routes["POST /control/state"] = function(req)
  local st, status, e = request(req, model.CONTROL_STATE)
  if not st then return status, e end
  if st.choice == "protocol" then action.protocol(st.protocol.all) return warnings() end   -- devices: this host's
  st = remote.control(st)           -- the other hosts' part first; nil: all of it was theirs
  if not st then return warnings() end
  if st.choice == "port" then
    if st.port.choice == "capture" then capture.control(st.port.capture.port_names, st.port.capture.state)
    else l1.control(st.port.link.port_names, st.port.link.state) end
    return warnings()
  end
  local ft = st.traffic.flow_transmit
  if ft.state == "start" then traffic.start(ft.flow_names)
  elseif ft.state == "pause" or ft.state == "resume" then traffic.pause(ft.flow_names, ft.state == "pause")
  else traffic.stop_flows(ft.flow_names) end
  return warnings()
end

routes["POST /control/action"] = function(req)
  local act, status, e = request(req, model.CONTROL_ACTION)
  if not act then return status, e end
  return 200, action.action(act)
end

routes["POST /monitor/metrics"] = function(req)
  local mr, status, e = request(req, model.METRICS_REQUEST)
  if not mr then return status, e end
  return 200, remote.metrics(mr, traffic.metrics)
end

-- The capture's bytes (a string: sent as application/octet-stream).
routes["POST /monitor/capture"] = function(req)
  local cr, status, e = request(req, model.CAPTURE_REQUEST)
  if not cr then return status, e end
  return 200, remote.capture(cr.port_name) or capture.read(cr.port_name)
end

routes["POST /monitor/states"] = function(req)
  local sr, status, e = request(req, model.STATES_REQUEST)
  if not sr then return status, e end
  local c = config.compiled()
  return 200, devices.states(c and c.devices, sr)
end

local KNOWN = { ["/config"] = 1, ["/control/state"] = 1, ["/control/action"] = 1, ["/monitor/metrics"] = 1,
                ["/monitor/states"] = 1, ["/monitor/capture"] = 1, ["/capabilities/version"] = 1 }

-- One request: status and the reply's table. Errors raised as
-- { status, errors } are the handler's answer; any other is a 500.
function M.handle(method, path, body)
  local fn = routes[method .. " " .. path]
  if not fn then
    if KNOWN[path] and (method == "POST" or method == "GET" or method == "PATCH") then
      return err_reply(501, "internal", { method .. " " .. path .. ": " .. schema.NOT_IMPL })
    end
    if KNOWN[path] then return err_reply(405, "validation", { method .. " " .. path .. ": not a method of the model" }) end
    return err_reply(404, "validation", { path .. ": not a path of the OTG API" })
  end
  local ok, status, reply = xpcall(fn, function(e)
    if type(e) == "table" then return e end
    return { trace = debug.traceback(tostring(e), 2) }
  end, { method = method, path = path, body = body })
  if ok then return status, reply end
  local e = status
  if e.status then return err_reply(e.status, e.status == 500 and "internal" or "validation", e.errors) end
  io.stderr:write("surge otg: internal error in ", method, " ", path, ": ", tostring(e.trace or e.msg), "\n")
  return err_reply(500, "internal", { "internal error in surge (its traceback is on the server's stderr): "
    .. tostring(e.trace):match("^[^\n]*") })
end

-- Serves until the run stops; returns the exit status.
function M.serve()
  local err = ffi.new("char[512]")
  local srv = C.surge_otg_open(nil, -1, nil, nil, err, 512)
  if srv == nil then
    io.stderr:write("surge otg: ", ffi.string(err), "\n")
    return 1
  end
  local req = ffi.new("struct surge_otg_req")
  local poll = surge.poll
  while C.surge_running() ~= 0 do
    local n = C.surge_otg_next(srv, 100, req)
    if n < 0 then core.check(n) end
    if n > 0 then
      local status, reply = M.handle(ffi.string(req.method), ffi.string(req.path), ffi.string(req.body, req.len))
      local text, ctype = reply, "application/octet-stream"
      if type(reply) ~= "string" then text, ctype = json.encode(reply), "application/json" end
      C.surge_otg_reply(srv, req.id, status, ctype, text, #text)
    end
    pcall(poll)     -- progress, --duration
  end
  traffic.stop()
  capture.close()
  remote.close()
  C.surge_otg_close(srv)
  return 0
end

return M
