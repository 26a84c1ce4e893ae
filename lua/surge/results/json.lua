-- results/json.lua - JSON encode/decode for results files (RFC 8259).
--
--   json.encode(v [, indent])  tables with keys 1..n are arrays, other tables
--                              objects (keys sorted, so output is stable);
--                              json.array(t) marks a table (even empty) as an
--                              array; NaN and infinities become null;
--                              json.null encodes null.
--   json.decode(text)          -> value, or nil, "json: ... at byte N"
--
-- Results files are written once per run, so clarity wins over speed here.
local M = {}

local array_mt = { __json = "array" }
M.null = setmetatable({}, { __json = "null", __tostring = function() return "null" end })

function M.array(t) return setmetatable(t or {}, array_mt) end

local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
                  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return escapes[c] or ("\\u%04x"):format(c:byte())
  end) .. '"'
end

local function number(x)
  if x ~= x or x == math.huge or x == -math.huge then return "null" end
  if x == math.floor(x) and math.abs(x) < 2^53 then return ("%d"):format(x) end
  return ("%.17g"):format(x)
end

local function is_array(t)
  local mt = getmetatable(t)
  if mt and mt.__json == "array" then return true end
  local n = #t
  if n == 0 then return false end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == n
end

local encode_value

local function encode_table(t, out, indent, depth, seen)
  if seen[t] then error("json.encode: a table contains itself", 0) end
  seen[t] = true
  local nl, pad, pad_in = "", "", ""
  if indent then
    nl = "\n"
    pad = (" "):rep(indent * depth)
    pad_in = (" "):rep(indent * (depth + 1))
  end
  if is_array(t) then
    if #t == 0 then out[#out + 1] = "[]"; seen[t] = nil; return end
    out[#out + 1] = "[" .. nl
    for i = 1, #t do
      out[#out + 1] = pad_in
      encode_value(t[i], out, indent, depth + 1, seen)
      out[#out + 1] = (i < #t and "," or "") .. nl
    end
    out[#out + 1] = pad .. "]"
  else
    local keys = {}
    for k in pairs(t) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    if #keys == 0 then out[#out + 1] = "{}"; seen[t] = nil; return end
    out[#out + 1] = "{" .. nl
    for i, k in ipairs(keys) do
      local v = t[k]
      if v == nil then v = t[tonumber(k)] end
      out[#out + 1] = pad_in .. quote(k) .. (indent and ": " or ":")
      encode_value(v, out, indent, depth + 1, seen)
      out[#out + 1] = (i < #keys and "," or "") .. nl
    end
    out[#out + 1] = pad .. "}"
  end
  seen[t] = nil
end

function encode_value(v, out, indent, depth, seen)
  local ty = type(v)
  if v == nil or v == M.null then out[#out + 1] = "null"
  elseif ty == "boolean" then out[#out + 1] = tostring(v)
  elseif ty == "number" then out[#out + 1] = number(v)
  elseif ty == "string" then out[#out + 1] = quote(v)
  elseif ty == "table" then encode_table(v, out, indent, depth, seen)
  elseif ty == "cdata" and tonumber(v) then out[#out + 1] = number(tonumber(v))
  else out[#out + 1] = quote(tostring(v))
  end
end

function M.encode(v, indent)
  local out = {}
  encode_value(v, out, indent, 0, {})
  return table.concat(out)
end

-- Decoder: a recursive descent over the text, positions are byte offsets.
local decode_value

local function fail(s, pos, what)
  error(("json: %s at byte %d"):format(what, pos), 0)
end

local function skip(s, pos)
  return s:find("[^ \t\r\n]", pos) or #s + 1
end

local function decode_string(s, pos)
  local out, i = {}, pos + 1
  while true do
    local c = s:sub(i, i)
    if c == "" then fail(s, pos, "unterminated string") end
    if c == '"' then return table.concat(out), i + 1 end
    if c == "\\" then
      local e = s:sub(i + 1, i + 1)
      local map = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", ['"'] = '"', ["\\"] = "\\", ["/"] = "/" }
      if map[e] then
        out[#out + 1] = map[e]; i = i + 2
      elseif e == "u" then
        local hex = s:sub(i + 2, i + 5)
        local cp = tonumber(hex, 16)
        if not cp or #hex < 4 then fail(s, i, "bad \\u escape") end
        if cp < 0x80 then out[#out + 1] = string.char(cp)
        elseif cp < 0x800 then out[#out + 1] = string.char(0xc0 + math.floor(cp / 64), 0x80 + cp % 64)
        else out[#out + 1] = string.char(0xe0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64) end
        i = i + 6
      else
        fail(s, i, "bad escape")
      end
    else
      out[#out + 1] = c; i = i + 1
    end
  end
end

function decode_value(s, pos)
  pos = skip(s, pos)
  local c = s:sub(pos, pos)
  if c == "{" then
    local t = {}
    pos = skip(s, pos + 1)
    if s:sub(pos, pos) == "}" then return t, pos + 1 end
    while true do
      if s:sub(pos, pos) ~= '"' then fail(s, pos, "expected a string key") end
      local k
      k, pos = decode_string(s, pos)
      pos = skip(s, pos)
      if s:sub(pos, pos) ~= ":" then fail(s, pos, "expected ':'") end
      t[k], pos = decode_value(s, pos + 1)
      pos = skip(s, pos)
      local d = s:sub(pos, pos)
      if d == "}" then return t, pos + 1 end
      if d ~= "," then fail(s, pos, "expected ',' or '}'") end
      pos = skip(s, pos + 1)
    end
  elseif c == "[" then
    local t = M.array({})
    pos = skip(s, pos + 1)
    if s:sub(pos, pos) == "]" then return t, pos + 1 end
    while true do
      local v
      v, pos = decode_value(s, pos)
      t[#t + 1] = v
      pos = skip(s, pos)
      local d = s:sub(pos, pos)
      if d == "]" then return t, pos + 1 end
      if d ~= "," then fail(s, pos, "expected ',' or ']'") end
      pos = pos + 1
    end
  elseif c == '"' then
    return decode_string(s, pos)
  elseif s:sub(pos, pos + 3) == "true" then return true, pos + 4
  elseif s:sub(pos, pos + 4) == "false" then return false, pos + 5
  elseif s:sub(pos, pos + 3) == "null" then return M.null, pos + 4
  end
  local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
  if num == nil or tonumber(num) == nil then fail(s, pos, "unexpected character") end
  return tonumber(num), pos + #num
end

function M.decode(text)
  local ok, v, pos = pcall(decode_value, text, 1)
  if not ok then return nil, v end
  if skip(text, pos) <= #text then return nil, ("json: trailing text at byte %d"):format(pos) end
  return v
end

return M
