-- surge.scenario - finding a scenario by name, loading it and checking it
-- against the contract, listing them; and the kit every scenario shares
-- (scenario/kit/: options, numbers, rates, ports, report, dry run, partial
-- results, search), re-exported here.
--
-- A scenario is a module returning
--   { description = "one line", options = function(parser) ... end,
--     run = function(opts) ... return results end,
--     report = function(results) ... end }          -- optional: the table printed at the end
-- `surge run NAME` finds it as surge.scenario.NAME (scenario/NAME/init.lua),
-- then NAME.lua in the SURGE_PATH and --path folders; `surge scenarios` lists them.
local check = require("surge.check")
local trace = require("surge.base.trace")
local options = require("surge.scenario.kit.options")
local numbers = require("surge.scenario.kit.numbers")
local rates = require("surge.scenario.kit.rates")
local ports = require("surge.scenario.kit.ports")
local report = require("surge.scenario.kit.report")
local dry = require("surge.scenario.kit.dry")
local partial = require("surge.scenario.kit.partial")

local M = {}

-- The kit, one concern a module (scenario/kit/), its functions also here
-- under the names every scenario and script has used (scenario.refuse,
-- scenario.pps, scenario.session, ...): one module to require.
for _, part in ipairs({ options, numbers, rates, ports, report, dry, partial }) do
  for k, v in pairs(part) do M[k] = v end
end
M.kit = { options = options, numbers = numbers, rates = rates, ports = ports, report = report, dry = dry,
          partial = partial, search = require("surge.scenario.kit.search") }

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
  local ok, text = pcall(trace.message, e)
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

return M
