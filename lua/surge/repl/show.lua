-- repl/show.lua - how values print at the prompt.
--
-- Plain values print as Lua would write them; surge's objects print what a
-- person wants to know about them: a port its driver, link and counters, a
-- queue its owner and rate, a pool how full it is, a burst n/cap and its
-- first packet decoded, a template its layers, a flow its fields, a task its
-- lcore, state and rate.
local ffi = require("ffi")
local class = require("surge.class")
local decoder = require("surge.proto.decode")
local port = require("surge.port")
local M = {}

local function decode(bytes)
  return decoder.decode(bytes)
end

local function num(v)
  if v == math.floor(v) and math.abs(v) < 2^53 then return ("%d"):format(v) end
  return ("%.14g"):format(v)   -- what Lua's own print shows
end

local function mpps(pps) return ("%.3f Mpps"):format(pps / 1e6) end

-- A string as Lua source, every control byte escaped: %q leaves bytes like
-- ESC raw, and a packet's bytes printed at the prompt would drive the
-- terminal. Bytes from 128 up stay as they are (UTF-8 text).
local named = { ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t", ['"'] = '\\"', ["\\"] = "\\\\" }
local function quoted(v)
  return '"' .. v:gsub('[%c"\\]', function(c)
    return named[c] or ("\\%03d"):format(c:byte())
  end) .. '"'
end

local function port_text(id)
  -- (not surge.port(id): that would open a port that is closed)
  local p = port.wrap(id)
  local ok, info = pcall(p.info, p)
  if not ok then return ("port %d (not open)"):format(id) end
  local s = p:stats()
  return ("port %d: %s (%s), link %s, %d txq %d rxq, TX %d packets, RX %d packets"):format(
    id, info.name, info.driver, info.link_up and "up" or "down", info.txq, info.rxq,
    s.tx_packets, s.rx_packets)
end

local function txq_text(q)
  local ok, s = pcall(q.stats, q)
  if not ok then return ("txq(%d,%d)"):format(q.port, q.id) end
  local r = q:rate_stats()
  local owner = s.lcore >= 0 and ("lcore " .. s.lcore) or "unused"
  local rate = r.target_pps > 0 and (", rate " .. mpps(r.target_pps) .. " set, " .. mpps(r.pps) .. " achieved") or ""
  return ("txq(%d,%d): %s, %d packets, %d drops%s"):format(q.port, q.id, owner, s.packets, s.drops, rate)
end

local function rxq_text(q)
  local ok, s = pcall(q.stats, q)
  if not ok then return ("rxq(%d,%d)"):format(q.port, q.id) end
  return ("rxq(%d,%d): %s, %d packets"):format(q.port, q.id,
    s.lcore >= 0 and ("lcore " .. s.lcore) or "unused", s.packets)
end

local function pool_text(p)
  local i = p:info()
  return ("pool %d (%s): %d/%d mbufs free, template %d bytes, %d failed allocations"):format(
    p.id, i.name, i.avail, i.size, i.template_len, i.alloc_fail)
end

local function burst_text(b)
  local head = ("burst %d/%d"):format(b.n, b.cap)
  if b.n == 0 then return head .. " (empty)" end
  return head .. ", packet 0 (" .. b.len[0] .. " bytes): " .. decode(ffi.string(b.data[0], b.len[0]))
end

local function template_text(t)
  local names = {}
  for _, l in ipairs(t.layers) do names[#names + 1] = l.name end
  return ("template, %d bytes: %s\n  %s"):format(#t.bytes, table.concat(names, " / "), decode(t.bytes))
end

local function flow_text(f)
  local first = f:frames(1)[1]
  return f:describe() .. (first and ("\n  first: " .. decode(first)) or "")
end

-- Task handles of the prompt (repl/helpers.lua) carry their own text.
M.Task = {}

local function table_text(t, depth, seen)
  if seen[t] then return "{ <cycle> }" end
  seen[t] = true
  local keys, parts = {}, {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "number" or ta == "string" then return a < b end
    return tostring(a) < tostring(b)
  end)
  local n = #t
  for i, k in ipairs(keys) do
    if i > 30 then parts[#parts + 1] = ("... (%d more)"):format(#keys - 30) break end
    local v = t[k]
    local vt = depth > 1 and type(v) == "table" and getmetatable(v) == nil and table_text(v, depth - 1, seen)
      or M.format(v, 0)
    if type(k) == "number" and k >= 1 and k <= n and k == math.floor(k) then parts[#parts + 1] = vt
    elseif type(k) == "string" and k:match("^[%a_][%w_]*$") then parts[#parts + 1] = k .. " = " .. vt
    else parts[#parts + 1] = "[" .. M.format(k, 0) .. "] = " .. vt end
  end
  seen[t] = nil
  if #parts == 0 then return "{}" end
  local one = "{ " .. table.concat(parts, ", ") .. " }"
  if #one <= 100 then return one end
  return "{\n  " .. table.concat(parts, ",\n  ") .. "\n}"
end

-- The text of one value; depth: how many levels of plain tables to open.
function M.format(v, depth)
  local t = type(v)
  if t == "string" then return quoted(v) end
  if t == "number" then return num(v) end
  if t == "function" then
    local i = debug.getinfo(v, "S")
    return ("function (%s)"):format(i.what == "C" and "builtin" or (i.short_src .. ":" .. i.linedefined))
  end
  if t == "cdata" then
    if ffi.istype("struct surge_burst", v) then return burst_text(v) end
    return tostring(v)
  end
  if t ~= "table" then return tostring(v) end
  -- the real metatable: a __metatable field hides it from getmetatable,
  -- not from tostring
  local mt = debug.getmetatable(v)
  if mt == M.Task then return v:text() end
  if mt and mt.__handle then
    local h = mt.__handle(v)
    if h:match("^port%(") then return port_text(v.id) end
    if h:match("^txq%(") then return txq_text(v) end
    if h:match("^rxq%(") then return rxq_text(v) end
    if h:match("^pool%(") then return pool_text(v) end
    return h
  end
  local get = class.get   -- a strict handle's missing field is nil here, not an error
  if type(get(v, "bytes")) == "string" and type(get(v, "layers")) == "table" then return template_text(v) end
  if type(get(v, "frames")) == "function" and type(get(v, "describe")) == "function" then return flow_text(v) end
  if mt and mt.__tostring then
    -- one that fails is the line's error; one that gives no string too
    -- (LuaJIT's tostring passes it on: a table would print as a number)
    local text = tostring(v)
    if type(text) ~= "string" then
      error(("its __tostring gave %s, not a string"):format(text == nil and "nil" or "a " .. type(text)), 0)
    end
    return text
  end
  -- no levels left to open (a table inside a table shown at depth 1, a
  -- table as a key): its place only, so cycles end here too
  if (depth or 2) < 1 then return "{...}" end
  return table_text(v, depth or 2, {})
end

return M
