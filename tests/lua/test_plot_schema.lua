-- The fields surge plot reads (results/plot.lua READS) against the one
-- description of a results file, docs/results.schema.json: each field is
-- there at its path, with the same JSON type, and one the charts read as
-- always present is required there. A field renamed or retyped in the
-- schema (or in plot.lua alone) fails here, not in a user's plot.
local plot = require("surge.results.plot")
local json = require("surge.results.json")
local T = {}

local function src_dir()
  local here = debug.getinfo(1, "S").source:match("^@(.*)/tests/lua/[^/]*$")
  return here or os.getenv("SURGE_SRC") or "."
end

local function load_schema()
  local f = assert(io.open(src_dir() .. "/docs/results.schema.json", "r"))
  local text = f:read("*a")
  f:close()
  return json.decode(text)
end

-- The schema node at `path` ("series.ports[]", "latency[].buckets"), $refs followed.
local function node(schema, path)
  local function deref(n)
    while type(n) == "table" and n["$ref"] do
      local name = n["$ref"]:match("^#/%$defs/(.+)$")
      n = schema["$defs"][name]
    end
    return n
  end
  local n = schema
  for part in path:gmatch("[^.]+") do
    local name, items = part:match("^([%w_]+)(%[?%]?)$")
    n = deref(n)
    n = n.properties and n.properties[name]
    assert(n, path .. ": no " .. name .. " in the schema")
    if items == "[]" then n = deref(n).items end
  end
  return deref(n)
end

local function json_type(prop, schema)
  while prop["$ref"] do prop = schema["$defs"][prop["$ref"]:match("^#/%$defs/(.+)$")] end
  local t = prop.type
  if t == "integer" then return "number" end
  if prop.enum then return type(prop.enum[1]) end
  return t
end

function T.reads_match_schema()
  local schema = load_schema()
  local n = 0
  for path, fields in pairs(plot.READS) do
    local obj = node(schema, path)
    local required = {}
    for _, r in ipairs(obj.required or {}) do required[r] = true end
    for _, f in ipairs(fields) do
      local name, want = f[1], f[2]
      local kind, mark = want:match("^(%a+)([?!]?)$")
      local prop = obj.properties and obj.properties[name]
      assert(prop, ("%s.%s: read by surge plot, not in docs/results.schema.json"):format(path, name))
      local t = json_type(prop, schema)
      assert(t == kind, ("%s.%s: surge plot reads a %s, the schema says %s"):format(path, name, kind, tostring(t)))
      if mark == "" then
        assert(required[name], ("%s.%s: surge plot needs it, the schema does not require it"):format(path, name))
      end
      n = n + 1
    end
  end
  assert(n >= 10, "checked " .. n .. " fields")
end

-- the check can fail: a field the schema does not have, and one of another type
function T.disagreement_fails()
  local saved = plot.READS["series.ports[]"]
  plot.READS["series.ports[]"] = { { "tx_ppss", "number" } }
  local ok, e = pcall(T.reads_match_schema)
  assert(not ok and tostring(e):find("tx_ppss: read by surge plot, not in", 1, true), tostring(e))
  plot.READS["series.ports[]"] = { { "port", "string" } }
  ok, e = pcall(T.reads_match_schema)
  assert(not ok and tostring(e):find("port: surge plot reads a string, the schema says number", 1, true), tostring(e))
  plot.READS["series.ports[]"] = saved
end

return T
