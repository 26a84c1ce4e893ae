-- surge.scenario - what every scenario shares: finding one by name, its
-- option schema (the parser scripts use in configure), defaults for calls
-- from Lua, the DUT options, rates, progress lines and result tables.
--
-- A scenario is a module returning
--   { description = "one line", options = function(parser) ... end,
--     run = function(opts) ... return results end,
--     report = function(results) ... end }          -- optional: the table printed at the end
-- `surge run NAME` finds it as surge.scenario.NAME, then NAME.lua in the
-- SURGE_PATH and --path folders; `surge scenarios` lists them.
local dut = require "surge.dut"
local check = require "surge.check"

local M = {}

M.builtin = { "rfc2544", "load-latency", "flood", "qos", "replay", "mlrsearch", "y1564", "rfc2889", "rfc3918",
  "rfc9693", "http" }

local function module_name(name) return (name:gsub("%-", "_")) end

local function user_dirs()
  local dirs = {}
  for _, d in ipairs(package.surge_dirs or {}) do dirs[#dirs + 1] = d end   -- a list: a folder may hold ';'
  return dirs
end

-- Whether path names a file that can be read: a folder named NAME.lua in
-- a scenario folder is none (fopen opens a folder; reading it fails).
local function readable(path)
  local f = io.open(path, "r")
  if not f then return false end
  local _, err = f:read(1)          -- nil at the end of a file; nil and "Is a directory" for a folder
  f:close()
  return err == nil
end
M.readable = readable

-- The module name of scenario `name` and, for a user's, its file; or nil.
function M.find(name)
  if type(name) ~= "string" or not name:match("^[%w_%-]+$") then return nil end
  for _, b in ipairs(M.builtin) do
    if b == name or module_name(b) == name then return "surge.scenario." .. module_name(b) end
  end
  for _, d in ipairs(user_dirs()) do
    local file = d .. "/" .. name .. ".lua"
    if readable(file) then return name, file end
  end
  return nil
end

-- What a scenario module must be (docs/scenarios.md, "Write your own
-- scenario"): checked once, when it is loaded, so a module that breaks it
-- is one line at its file instead of an error inside surge.
local contract = { { "description", "string", "one line for `surge scenarios`" },
                   { "options", "function", "options(parser) declares its options" },
                   { "run", "function", "run(opts) returns the results table" },
                   { "report", "function?", "report(results) returns the text printed at the end" } }

local function loaded_from(where, name)
  return where and (where .. ": scenario '" .. name .. "'") or ("scenario '" .. name .. "'")
end

-- The message of an error raised while loading or checking a module: its
-- first line (the position is the module's own; no traceback of surge's).
local function first_line(e)
  local ok, text = pcall(require("surge.base.trace").message, e)
  return (ok and type(text) == "string" and text or tostring(e)):match("^[^\n]*")
end

-- Loads scenario `name` once (a user's from its file, not through
-- package.path, so the file find() saw is the one loaded) and checks it
-- against the contract. Returns the module, or nil, one line naming the
-- file (and line, where the fault has one) and what the file returned
-- when it loaded.
function M.load(name)
  local mod, file = M.find(name)
  if not mod then return nil, ("no script or scenario named '%s' (scenarios: %s; see surge scenarios)"):format(
    tostring(name), M.names()) end
  local m = package.loaded[mod]
  if m == nil then
    if file then
      local chunk, err = loadfile(file)
      if not chunk then return nil, err end                 -- "FILE:LINE: syntax error"
      local ok, v = xpcall(chunk, first_line, mod)
      if not ok then return nil, v end                      -- raised at its top level: "FILE:LINE: ..."
      m = v
    else
      m = require(mod)
    end
  end
  if type(m) ~= "table" then
    return nil, ("%s must return a table { description, options, run, report }, got %s"):format(
      loaded_from(file, name), check.show(m)), m
  end
  for _, c in ipairs(contract) do
    local v, want = m[c[1]], c[2]
    if not (type(v) == want:gsub("%?$", "") or (want:sub(-1) == "?" and v == nil)) then
      return nil, ("%s: %s must be a %s (%s), got %s"):format(loaded_from(file, name), c[1], want:gsub("%?$", ""),
        c[3], check.show(v)), m
    end
  end
  package.loaded[mod] = m
  return m
end

-- Every scenario: { name, module, description, where }; one whose module
-- breaks the contract is listed with what is wrong (a module of those
-- folders that is no scenario at all, a helper returning no table or one
-- with neither run nor description, is not listed).
local LOAD_BUDGET_S = 2   -- a listed module's top level: more is a module that never returns

function M.list()
  local out = {}
  for _, b in ipairs(M.builtin) do
    local m = require("surge.scenario." .. module_name(b))
    out[#out + 1] = { name = b, module = "surge.scenario." .. module_name(b), description = m.description,
                      where = "built in" }
  end
  for _, d in ipairs(user_dirs()) do
    -- quoted for the shell whatever the folder's name holds (a ' in it left it out)
    local p = io.popen("ls -- '" .. d:gsub("'", "'\\''") .. "' 2>/dev/null")
    for f in p:lines() do
      local name = f:match("^([%w_%-]+)%.lua$")
      if name and M.find(name) and select(2, M.find(name)) == d .. "/" .. f then
        -- a module's top level runs to be listed: an os.exit there is its
        -- error, not the end of the listing (and of surge, with its status)
        local exit = os.exit
        os.exit = function() error("os.exit called while the module loads", 2) end
        -- nor is a top level that never returns the end of the listing: it
        -- has LOAD_BUDGET_S of CPU, interpreted (a trace sees no hook)
        local jit_on = jit.status()
        jit.off()
        local deadline = os.clock() + LOAD_BUDGET_S
        debug.sethook(function()
          if os.clock() > deadline then
            error(("its top level ran more than %g s of CPU while the module loads"):format(LOAD_BUDGET_S), 2)
          end
        end, "", 10000)
        local ok, m, err, got = pcall(M.load, name)
        debug.sethook()
        if jit_on then jit.on() end
        os.exit = exit
        if not ok then m, err, got = nil, tostring(m), nil end
        local helper = not m and got ~= nil and (type(got) ~= "table" or (got.run == nil and got.description == nil))
        if not helper then
          out[#out + 1] = { name = name, module = name, where = d,
                            description = m and m.description or ("cannot be used: " .. err) }
        end
      end
    end
    p:close()
  end
  return out
end

function M.names()
  local n = {}
  for _, s in ipairs(M.list()) do n[#n + 1] = s.name end
  return table.concat(n, ", ")
end

-- The scenario's parser, with its options declared. Every number a
-- scenario takes has a kind with a range here (the spec of surge.check):
-- checked when the command line is parsed (exit 2, "flood: --flows: ...",
-- before any traffic) and, by defaults() below, when run() is called from Lua.
function M.parser(name, mod)
  local p = require("surge.args").new(name, true)
  p:description(mod.description)
  mod.options(p)
  return p
end

-- Where a scenario's own function f is, for messages about what it did:
-- "FILE:LINE" of its definition.
local function where(f)
  local i = debug.getinfo(f, "S")
  return ("%s:%d"):format(i.short_src, i.linedefined)
end

-- The scenario running now (defaults() below, which every run() calls
-- first, names it) and whether its options came from the command line
-- (main() runs it): what refuse() needs.
local current = { name = nil, cli = false }

-- A bad option value the scenario finds itself (a rate with its unit, a
-- list of sizes, a port, a class, options that contradict each other), after
-- parsing: "NAME: --OPTION: why", read like the parser's own errors. From the
-- command line an args.OptionError (surge exits 2; raised before any
-- traffic); from Lua an error at the caller's line. The one way scenarios
-- refuse an option; option: "--max-rate" (nil: the message names it).
function M.refuse(option, fmt, ...)
  local msg = fmt:format(...)
  if option then msg = option .. ": " .. msg end
  if current.name then msg = current.name .. ": " .. msg end
  if current.cli then error(setmetatable({ msg = msg }, require("surge.args").OptionError), 0) end
  check.raise(msg)
end

-- Options given from Lua: the schema's defaults, then the caller's values
-- (keys as in parsed options: --max-rate is max_rate), each checked against
-- its option's kind at the caller's line. Unknown keys are errors; opts is
-- a table, or nil where the defaults suffice.
function M.defaults(name, mod, given)
  current.name = name
  if given ~= nil and type(given) ~= "table" then
    check.raise(("%s: run(opts): expected a table of options (or nil), got %s"):format(name, check.show(given)))
  end
  local p = M.parser(name, mod)
  local opts = p:parse({})
  for k, v in pairs(given or {}) do opts[k] = p:value(k, v) end
  return opts
end

-- A check of a scenario's options that needs no port (goals, services,
-- group addresses): fn(opts) refuses with M.refuse as run() would, but runs
-- when the options are parsed, so `surge run NAME` exits 2 before EAL. The
-- parser prefixes the scenario's name; any other error passes unchanged.
function M.parse_check(p, fn)
  p:check(function(o)
    local saved_name, saved_cli = current.name, current.cli
    current.name, current.cli = nil, true
    local ok, e = pcall(fn, o)
    current.name, current.cli = saved_name, saved_cli
    if ok then return nil end
    if getmetatable(e) == require("surge.args").OptionError then return e.msg end
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

-- --tx / --rx: a port number (text from the command line) that exists, or
-- a port opened from Lua.
local function port(v, option)
  if type(v) == "table" then return v end
  local id = tonumber(v)
  if id == nil or id ~= math.floor(id) or id < 0 then
    M.refuse(option, "expected a port number, got %s", type(v) == "string" and "'" .. v .. "'" or check.show(v))
  end
  local n = require("surge").ports()
  if id >= n then
    M.refuse(option, "port %d does not exist (%d port%s: give devices with --vdev or --pci)", id, n,
      n == 1 and "" or "s")
  end
  return id
end

-- A surge.dut session from those options (tx/rx may be opened ports).
function M.session(o)
  local rx = o.rx
  if rx == "" or rx == nil then rx = o.tx end
  return dut.session{ tx = port(o.tx, "--tx"), rx = port(rx, o.rx ~= "" and o.rx ~= nil and "--rx" or "--tx"),
                      src = o.src, dst = o.dst,
                      gateway = (o.gateway ~= "" and o.gateway) or nil,
                      rx_gateway = (o.rx_gateway ~= "" and o.rx_gateway) or nil,
                      dst_mac = (o.dst_mac ~= "" and o.dst_mac) or nil,
                      vlan = (o.vlan and o.vlan ~= 0) and o.vlan or nil,
                      resolve_timeout = o.resolve_timeout, link_timeout = o.link_timeout }
end

-- A value as the user gave it, for messages: text quoted as on the command line.
local function given(v)
  return type(v) == "string" and "'" .. v .. "'" or check.show(v)
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
        M.refuse(option, "%s%s given twice%s", o.what and o.what .. " " or "", given(key),
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
      local n = type(w) == "string" and tonumber(w) or w
      if type(n) ~= "number" or n ~= math.floor(n) or n < 1 or n > 65535 then
        M.refuse(option, "%s is not a frame size in bytes", given(n))
      end
      return n
    end })
  if #out == 0 then M.refuse(option, "no frame sizes given") end
  return out
end

-- Checks frame size `size` against session s's ports (the headers, the MTU),
-- refused as a value of `option`.
function M.check_size(s, size, option)
  local ok, e = pcall(s.check_size, s, size, "frame size")
  -- (raised at the caller's line when called from Lua: that goes too)
  if not ok then M.refuse(option, "%s", (tostring(e):gsub("^[^\n:]+:%d+: ", ""):gsub("^frame size ", ""))) end
  return size
end

-- A rate in frames/s for frames of `size` bytes (with FCS): "100kpps",
-- "1.5mpps", 250000, "1gbit" (L1), "40%" (of line rate). option: the option
-- it came from ("--rate"). Refused (M.refuse): anything else, a rate of 0
-- (not a load; allowed where zero_ok says, a search's bottom), and more than
-- line rate (100 %) where the port reports its speed (line_pps > 0).
function M.pps(text, size, line_pps, option, zero_ok)
  option = option or "rate"
  local rate
  if type(text) == "number" then
    if text == text and text >= 0 and text < math.huge then rate = text end
  elseif type(text) == "string" then
    local v, unit = text:lower():match("^%s*([%d%.]+)%s*([%a%%]*)%s*$")
    v = tonumber(v)
    local mult = { [""] = 1, pps = 1, kpps = 1e3, mpps = 1e6 }
    local bits = { bit = 1, kbit = 1e3, mbit = 1e6, gbit = 1e9 }
    if v and mult[unit] then rate = v * mult[unit]
    elseif v and bits[unit] then rate = v * bits[unit] / ((size + 20) * 8)
    elseif v and unit == "%" then
      if not line_pps or line_pps == 0 then
        M.refuse(option, "'%s': the port reports no link speed; give pps (e.g. 1mpps)", text)
      end
      rate = line_pps * v / 100
    end
  end
  if rate == nil then M.refuse(option, "%s is not a rate (1mpps, 250kpps, 1gbit, 50%%)", given(text)) end
  if rate == 0 and not zero_ok then M.refuse(option, "%s is not a load: give a rate above 0", given(text)) end
  if line_pps and line_pps > 0 and rate > line_pps * (1 + 1e-9) then
    M.refuse(option, "%s is more than 100 %% of line rate (%.0f pps for %g-byte frames)", given(text), line_pps,
      size)
  end
  return rate
end

-- A trial at `rate` pps for `seconds` s must send at least one frame: with
-- fewer, the paced sender sends none (or overruns the trial waiting for its
-- first slot), and a trial that sends nothing measures nothing (its loss
-- reads 0 %). Every rate and trial time a scenario plans is checked here,
-- before any traffic; rate_from, trial_from: the options they come from,
-- for the one line that names them ("0.5 pps (--rate) for 0.1 s (--trial)").
function M.check_frames(rate, seconds, rate_from, trial_from)
  local n = rate * seconds
  if n < 1 - 1e-9 then
    M.refuse(nil, "%.4g pps (%s) for %.4g s (%s) is %.3g frames: a trial must send 1 or more "
      .. "(give a higher rate or a longer trial)", rate, rate_from, seconds, trial_from, n)
  end
end

-- Progress: one plain line per trial (to stdout, flushed so pipes see it);
-- --quiet silences them like every progress line (the result table stays).
-- The progress lines' note of a DUT's copies ("  duplicated N"), there when
-- it sent any: received counts unique frames, the copies are apart.
function M.dup_text(n)
  return (n or 0) > 0 and ("  duplicated %d"):format(n) or ""
end

-- The note of a trial whose offer surge did not reach (dut trial's
-- sender_limited): what it did send, and whose limit that is.
function M.limited_text(t)
  if not t.sender_limited then return "" end
  return ("  (surge sent only %s, %d of %d frames: surge's limit, not the DUT's)"):format(
    require("surge.rate").format_pps(t.tx_pps), t.sent, t.planned)
end

-- The lines under a result table that say what its numbers include:
-- rows limited by surge (their limited_by column) and the receive-poll
-- delay surge adds to every latency (its measured mean poll interval).
-- entries: the results' trials ({ sender_limited, rx_poll_ns, latency }).
function M.notes(entries)
  local limited, poll, n = 0, 0, 0
  for _, e in ipairs(entries) do
    if e.sender_limited then limited = limited + 1 end
    if e.rx_poll_ns and e.latency and (e.latency.probes or 0) > 0 then poll, n = math.max(poll, e.rx_poll_ns), n + 1 end
  end
  local out = {}
  if limited > 0 then
    out[#out + 1] = ("limited_by surge: in %d row(s) surge did not send the offered rate (the progress lines "
      .. "say what it sent): those figures are surge's limit, not the DUT's"):format(limited)
  end
  if n > 0 then
    out[#out + 1] = ("latency includes up to one RX poll interval of surge's own delay: polls %.2f us apart "
      .. "on average (the trial with the longest)"):format(poll / 1e3)
  end
  return #out > 0 and "\n" .. table.concat(out, "\n") or ""
end

function M.progress(fmt, ...)
  if require("surge.core").C.surge_quiet() ~= 0 then return end
  io.write(fmt:format(...), "\n")
  io.flush()
end

-- Progress with an ETA over the steps a scenario plans (a trial, or one test
-- of one frame size): surge.progress draws it on stderr, a line rewritten
-- in place on a terminal, plain lines otherwise, nothing with --quiet.
local steps
function M.steps(total, label)
  steps = { done = 0, total = total, label = label }
  require("surge.results.progress")(0, total, label)
end
function M.step()
  if not steps then return end
  steps.done = steps.done + 1
  require("surge.results.progress")(steps.done, steps.total, steps.label)
  if steps.done >= steps.total then steps = nil end
end

-- A text table: headers, rows of cells (strings or numbers), right-aligned.
function M.table(headers, rows)
  local w = {}
  for i, h in ipairs(headers) do w[i] = #h end
  local cells = {}
  for r, row in ipairs(rows) do
    cells[r] = {}
    for i = 1, #headers do
      local v = row[i]
      if type(v) == "number" then
        v = (v == math.floor(v) and math.abs(v) < 1e15) and ("%d"):format(v) or ("%.2f"):format(v)
      end
      cells[r][i] = tostring(v == nil and "-" or v)
      w[i] = math.max(w[i], #cells[r][i])
    end
  end
  local out = {}
  local function line(c)
    local parts = {}
    for i = 1, #headers do parts[i] = (" "):rep(w[i] - #c[i]) .. c[i] end
    out[#out + 1] = table.concat(parts, "  ")
  end
  line(headers)
  for _, c in ipairs(cells) do line(c) end
  return table.concat(out, "\n")
end

-- A figure formatted for a table or a progress line, "-" when there is none.
function M.cell(v, fmt)
  if v == nil then return "-" end
  return (fmt or "%s"):format(v)
end

-- Latency summary cells in microseconds: min, avg, p50, p99, max.
function M.lat_cells(l)
  if not l or l.probes == 0 then return { "-", "-", "-", "-", "-" } end
  return { l.min_ns / 1e3, l.mean_ns / 1e3, l.p50_ns / 1e3, l.p99_ns / 1e3, l.max_ns / 1e3 }
end

-- A scenario's run() ends with this: its results go to --output (under
-- its name) whether it ran by name, from a script or at the prompt.
function M.done(name, res)
  require("surge.results").scenario_done(name, res)
  return res
end

-- What a scenario measured so far (M.partial): kept when the run stops in
-- the middle of it. `finish` completes such a table (its flat rows).
local partial
function M.partial(res, finish)
  partial = { res = res, finish = finish }
end

-- For the prompt (surge/repl/init.lua), whose commands a Ctrl-C interrupts: the
-- table the last scenario registered with M.partial, completed and marked
-- partial (stopped = why), or nil; it is forgotten either way. take_partial()
-- before a command forgets one left by a scenario that ran to its end.
function M.take_partial(why)
  local p = partial
  partial = nil
  if not (why and p and p.res) then return nil end
  if p.finish then p.finish(p.res) end
  p.res.partial, p.res.stopped = true, why
  return p.res
end

-- Runs scenario `name` (module mod) from the command line: parse argv,
-- run, print its report. Returns the exit code. A run stopped in the middle
-- (SIGINT, SIGTERM, surge.stop(), --duration) is not a failure: what the
-- scenario measured so far is reported and recorded, marked partial.
function M.main(name, mod, argv)
  local p = M.parser(name, mod)
  local opts = p:parse(argv)
  if opts == nil then return 0 end
  local results_file = require("surge.results")
  results_file.run_started(name, opts)
  partial = nil
  current.cli = true    -- what run() refuses is a command-line option: exit 2
  -- an error raised with no message or a plain table gets its position
  -- here, where the stack still has it (surge's own errors pass as they are)
  local ok, results = xpcall(mod.run, function(e)
    if type(e) == "string" or (type(e) == "table" and getmetatable(e) ~= nil) then return e end
    return require("surge.base.trace").message(e)
  end, opts)
  current.cli = false
  if ok and type(results) ~= "table" then
    error(("%s: %s: run(opts) returned %s, not the results table"):format(where(mod.run), name,
      check.show(results)), 0)
  end
  if not ok then
    local why = tostring(results)
    if results ~= require("surge.core").STOPPED and why:sub(1, #dut.STOPPED_DURING) ~= dut.STOPPED_DURING then
      error(results, 0)
    end
    io.stderr:write(("%s: %s: %s\n"):format(name, why,
      partial and "the results so far are partial" or "nothing was measured yet"))
    if not partial then return 0 end
    results = partial.res
    if partial.finish then partial.finish(results) end
    results.partial, results.stopped = true, why
  end
  results_file.scenario_done(name, results) -- for --output and surge plot
  if mod.report then
    local text = mod.report(results)
    if type(text) ~= "string" then
      error(("%s: %s: report(results) returned %s, not the text to print"):format(where(mod.report), name,
        check.show(text)), 0)
    end
    print(text)
  end
  return results.ok == false and 1 or 0
end

return M
