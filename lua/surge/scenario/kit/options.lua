-- scenario/kit/options.lua - a scenario's options: its parser, the DUT
-- options most take, the one way to refuse a value (refuse), defaults for
-- a run from Lua, checks made when the options are parsed, and lists of
-- items and frame sizes.
local args = require("surge.args")
local check = require("surge.check")
local dut = require("surge.dut")
local numbers = require("surge.scenario.kit.numbers")
local state = require("surge.scenario.kit.state")
local as_given = numbers.given

local M = {}

-- The scenario's parser, with its options declared. Every number a
-- scenario takes has a kind with a range here (the spec of surge.check):
-- checked when the command line is parsed (exit 2, "flood: --flows: ...",
-- before any traffic) and, by defaults() below, when run() is called from Lua.
function M.parser(name, mod)
  local p = args.new(name, true)
  p:description(mod.description)
  mod.options(p)
  return p
end

-- A bad option value the scenario finds itself (a rate with its unit, a
-- list of sizes, a port, a class, options that contradict each other), after
-- parsing: "NAME: --OPTION: why", read like the parser's own errors. From the
-- command line an args.OptionError (surge exits 2; raised before any
-- traffic); from Lua an error at the caller's line. The one way scenarios
-- refuse an option; option: "--max-rate" (nil: the message names it).
function M.refuse(option, fmt, ...)
  local msg = fmt:format(...)
  if option then msg = option .. ": " .. msg end
  if state.current.name then msg = state.current.name .. ": " .. msg end
  if state.current.cli then error(setmetatable({ msg = msg }, args.OptionError), 0) end
  check.raise(msg)
end

-- Options given from Lua: the schema's defaults, then the caller's values
-- (keys as in parsed options: --max-rate is max_rate), each checked against
-- its option's kind at the caller's line. Unknown keys are errors; opts is
-- a table, or nil where the defaults suffice.
function M.defaults(name, mod, given)
  state.current.name = name
  -- a run from Lua starts here (main() clears its own): until done() it is
  -- the scenario a stop cuts (stopped_in_lua)
  if not state.current.cli then state.partial, state.current.active = nil, name end
  if given ~= nil and type(given) ~= "table" then
    check.raise(("%s: run(opts): expected a table of options (or nil), got %s"):format(name, check.show(given)))
  end
  local p = M.parser(name, mod)
  local opts = p:parse({})
  for k, v in pairs(given or {}) do opts[k] = p:value(k, v) end
  return opts
end

-- The options as a task's spec carries them: the strings, numbers and
-- booleans (a table of Lua's run(opts) stays with the caller).
function M.plain(opts)
  local o = {}
  for k, v in pairs(opts) do if type(v) ~= "table" then o[k] = v end end
  return o
end

-- A check of a scenario's options that needs no port (goals, services,
-- group addresses): fn(opts) refuses with M.refuse as run() would, but runs
-- when the options are parsed, so `surge run NAME` exits 2 before EAL. The
-- parser prefixes the scenario's name; any other error passes unchanged.
function M.parse_check(p, fn)
  p:check(function(o)
    local saved_name, saved_cli = state.current.name, state.current.cli
    state.current.name, state.current.cli = nil, true
    local ok, e = pcall(fn, o)
    state.current.name, state.current.cli = saved_name, saved_cli
    if ok then return nil end
    if getmetatable(e) == args.OptionError then return e.msg end
    error(e, 0)
  end)
end

-- A trial counts at most dut.MAX_FLOWS flows: --flows for each of n classes
-- (sizes, qos classes) must fit together. Checked before any traffic.
function M.check_flows(name, flows, n, what)
  if flows * n > dut.MAX_FLOWS then
    M.refuse("--flows", "%d flows x %d %s is %d flows, more than the %d a trial counts",
      flows, n, what, flows * n, dut.MAX_FLOWS)
  end
end

-- The DUT options most scenarios take.
function M.dut_options(p)
  p:option("--tx", "port that sends (number)", "0")
  p:option("--rx", "port that receives (default: --tx)", "")
  p:option("--src", "surge's address on the tx port (IPv4 or IPv6)", "10.0.0.2")
  p:option("--dst", "destination: surge's address on the rx port", "10.1.0.2")
  p:option("--gateway", "the DUT's address on the tx side, resolved by ARP/NDP (none: no resolution)", "")
  p:option("--rx-gateway", "the DUT's address on the rx side, resolved there too before traffic (none: not)", "")
  p:option("--dst-mac", "send to this MAC instead of resolving", "")
  p:option("--vlan", "VLAN id of the test traffic (0 = untagged)", 0, "integer 0..4095")
  p:option("--resolve-timeout", "seconds to wait for the gateway's ARP/NDP answer", 2, "number 0..3600")
  p:option("--link-timeout", "seconds to wait for link up", 2, "number 0..3600")
  -- the addresses need no port: refused when parsed, naming the option
  -- (before EAL starts for `surge run NAME`), by the check dut.session makes
  p:check(function(o)
    local _, why = dut.check_addresses({ src = o.src, dst = o.dst, gateway = o.gateway ~= "" and o.gateway or nil,
      rx_gateway = o.rx_gateway ~= "" and o.rx_gateway or nil, dst_mac = o.dst_mac ~= "" and o.dst_mac or nil },
      function(k) return "--" .. k:gsub("_", "-") end)
    return why
  end)
end


-- The items of list option `option`: "64,128,imix" (comma-separated,
-- spaces around an item ignored), a table of items from Lua, or one number.
-- o.parse(item) -> value, when given, checks and converts each item. An
-- empty item ("64,,128", a comma at either end) is refused naming the
-- option; text with no item at all ("", ",") is an empty list, which the
-- caller refuses in its own words ("no frame sizes given"). o.unique: an
-- item whose value (or o.unique(value), its key) an earlier item had is
-- refused ("size 64 given twice in '64,128,64'"); o.what names an item
-- ("size"), o.expected what the option takes (for a value of another type).
-- Every list option of every scenario goes through here.
function M.items(v, option, o)
  o = o or {}
  if type(v) == "number" then v = { v } end
  local raw = {}
  if type(v) == "table" then
    for _, x in ipairs(v) do raw[#raw + 1] = x end
  elseif type(v) == "string" then
    if v:find("[^,%s]") then
      for w in (v .. ","):gmatch("([^,]*),") do
        w = w:match("^%s*(.-)%s*$")
        if w == "" then M.refuse(option, "empty item in '%s'", v) end
        raw[#raw + 1] = w
      end
    end
  else
    M.refuse(option, "expected %s, got %s", o.expected or "a comma-separated list", check.show(v))
  end
  local out, seen = {}, {}
  for i, w in ipairs(raw) do
    if o.parse then out[i] = o.parse(w) else out[i] = w end
    if o.unique then
      local key = out[i]
      if o.unique ~= true then key = o.unique(key) end
      if key ~= nil and seen[key] then
        M.refuse(option, "%s%s given twice%s", o.what and o.what .. " " or "", as_given(key),
          type(v) == "string" and (" in '%s'"):format(v) or "")
      end
      if key ~= nil then seen[key] = true end
    end
  end
  return out
end

-- "64,128,imix" style lists of frame sizes (or a number, or a list from Lua),
-- each size once; option: the option they came from ("--sizes").
function M.sizes(text, option)
  option = option or "--sizes"
  local out = M.items(text, option, { what = "size", unique = true, expected = "frame sizes (\"64,512\")",
    parse = function(w)
      local n = type(w) == "string" and (numbers.finite(w) or w) or w
      if type(n) ~= "number" or n ~= math.floor(n) or n < 1 or n > 65535 then
        M.refuse(option, "%s is not a frame size in bytes", as_given(n))
      end
      return n
    end })
  if #out == 0 then M.refuse(option, "no frame sizes given") end
  return out
end

-- A unicast MAC given as option's value ("02:00:00:00:00:01") with room for
-- n more after it (hosts 0..n: no carry into the first byte, where a group
-- bit would be): refused naming option. Checked whether or not the option
-- it serves is in use, so a bad value never waits for the run that needs it.
function M.unicast_mac(mac, option, n)
  if type(mac) ~= "string" or not mac:match("^%x%x:%x%x:%x%x:%x%x:%x%x:%x%x$")
     or tonumber(mac:sub(1, 2), 16) % 2 == 1 then
    M.refuse(option, "'%s' is not a unicast MAC", tostring(mac))
  end
  local low = 0
  for h in mac:sub(4):gmatch("%x%x") do low = low * 256 + tonumber(h, 16) end
  if low + (n or 0) > 2 ^ 40 - 1 then
    M.refuse(option, "%s + %d hosts carries into the first byte", mac, n)
  end
  return mac
end

-- Checks frame size `size` against session s's ports (the headers, the MTU),
-- refused as a value of `option`.
function M.check_size(s, size, option)
  local ok, e = pcall(s.check_size, s, size, "frame size")
  -- (raised at the caller's line when called from Lua: that goes too)
  if not ok then M.refuse(option, "%s", (tostring(e):gsub("^[^\n:]+:%d+: ", ""):gsub("^frame size ", ""))) end
  return size
end

return M
