-- results/json.lua - JSON encode/decode for results files (RFC 8259).
--
--   json.encode(v [, indent])  tables with keys 1..n are arrays, other tables
--                              objects (keys sorted, so output is stable);
--                              json.array(t) marks a table (even empty) as an
--                              array; NaN and infinities become null;
--                              json.null encodes null; strings are
--                              made valid UTF-8 (below), so any JSON tool
--                              reads the file.
--   json.decode(text [, max_depth]) -> value, or nil, "json: ... at byte N";
--                              arrays and objects nest at most max_depth
--                              deep (default 200): text from the network
--                              (surge otg) cannot run the parser out of stack
--
-- Results files are written once per run, so clarity wins over speed here.
local M = {}

local array_mt = { __json = "array" }
M.null = setmetatable({}, { __json = "null", __tostring = function() return "null" end })

function M.array(t) return setmetatable(t or {}, array_mt) end

local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
                  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

-- Lua strings are bytes; JSON text is UTF-8 (RFC 8259 section 8.1). The one
-- rule: a well-formed UTF-8 sequence (no overlong form, no surrogate, at most
-- U+10FFFF) is kept as it is, and every other byte becomes U+FFFD, the
-- replacement character (one per byte, so the length of the damage shows).
local REPLACEMENT = "\239\191\189"
local byte = string.byte

-- The length of the well-formed sequence starting at s[i], or nil.
local function utf8_len(s, i)
  local c = byte(s, i)
  local n, lo, hi                        -- continuation bytes, range of the 2nd byte
  if c < 0x80 then return 1
  elseif c >= 0xc2 and c <= 0xdf then n, lo, hi = 1, 0x80, 0xbf
  elseif c == 0xe0 then n, lo, hi = 2, 0xa0, 0xbf     -- no overlong
  elseif c == 0xed then n, lo, hi = 2, 0x80, 0x9f     -- no surrogates
  elseif c >= 0xe1 and c <= 0xef then n, lo, hi = 2, 0x80, 0xbf
  elseif c == 0xf0 then n, lo, hi = 3, 0x90, 0xbf     -- no overlong
  elseif c >= 0xf1 and c <= 0xf3 then n, lo, hi = 3, 0x80, 0xbf
  elseif c == 0xf4 then n, lo, hi = 3, 0x80, 0x8f     -- at most U+10FFFF
  else return nil end
  local b = byte(s, i + 1)
  if not b or b < lo or b > hi then return nil end
  for k = i + 2, i + n do
    b = byte(s, k)
    if not b or b < 0x80 or b > 0xbf then return nil end
  end
  return n + 1
end

function M.utf8(s)
  if not s:find("[\128-\255]") then return s end
  local out, i, n, start = {}, 1, #s, 1
  while i <= n do
    local l = utf8_len(s, i)
    if l then
      i = i + l
    else
      out[#out + 1] = s:sub(start, i - 1)
      out[#out + 1] = REPLACEMENT
      i = i + 1
      start = i
    end
  end
  out[#out + 1] = s:sub(start)
  return table.concat(out)
end

local function quote(s)
  return '"' .. M.utf8(s):gsub('[%c"\\]', function(c)
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
    local keys, shown, taken = {}, {}, {}
    for k in pairs(t) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    if #keys == 0 then out[#out + 1] = "{}"; seen[t] = nil; return end
    -- keys go through the UTF-8 rule too; two that end up equal (they
    -- differed only in invalid bytes) get #2, #3 so neither is lost
    for _, k in ipairs(keys) do if M.utf8(k) == k then taken[k], shown[k] = true, k end end
    for _, k in ipairs(keys) do
      if not shown[k] then
        local u, n = M.utf8(k), 1
        while taken[u] do n = n + 1; u = ("%s#%d"):format(M.utf8(k), n) end
        taken[u], shown[k] = true, u
      end
    end
    out[#out + 1] = "{" .. nl
    for i, k in ipairs(keys) do
      local v = t[k]
      if v == nil then v = t[tonumber(k)] end
      out[#out + 1] = pad_in .. quote(shown[k]) .. (indent and ": " or ":")
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

local escape_of = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", ['"'] = '"', ["\\"] = "\\", ["/"] = "/" }

local function decode_string(s, pos)
  local out, i = {}, pos + 1
  while true do
    -- a run of plain characters at once: a long string is not a table entry per byte
    local j = s:find('["\\%c]', i)
    if j == nil then fail(s, pos, "unterminated string") end
    if j > i then out[#out + 1] = s:sub(i, j - 1) end
    i = j
    local c = s:sub(i, i)
    if c == '"' then return table.concat(out), i + 1 end
    if c ~= "\\" then fail(s, i, "a control character in a string") end
    local e = s:sub(i + 1, i + 1)
    if escape_of[e] then
      out[#out + 1] = escape_of[e]; i = i + 2
    elseif e == "u" then
      local hex = s:sub(i + 2, i + 5)
      local cp = hex:match("^%x%x%x%x$") and tonumber(hex, 16)
      if not cp then fail(s, i, "bad \\u escape") end
      if cp < 0x80 then out[#out + 1] = string.char(cp)
      elseif cp < 0x800 then out[#out + 1] = string.char(0xc0 + math.floor(cp / 64), 0x80 + cp % 64)
      else out[#out + 1] = string.char(0xe0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64) end
      i = i + 6
    else
      fail(s, i, "bad escape")
    end
  end
end

local max_depth, depth = 200, 0

function decode_value(s, pos)
  pos = skip(s, pos)
  local c = s:sub(pos, pos)
  if c == "{" or c == "[" then
    depth = depth + 1
    if depth > max_depth then fail(s, pos, ("nested deeper than %d"):format(max_depth)) end
  end
  if c == "{" then
    local t = {}
    pos = skip(s, pos + 1)
    if s:sub(pos, pos) == "}" then depth = depth - 1 return t, pos + 1 end
    while true do
      if s:sub(pos, pos) ~= '"' then fail(s, pos, "expected a string key") end
      local k
      k, pos = decode_string(s, pos)
      pos = skip(s, pos)
      if s:sub(pos, pos) ~= ":" then fail(s, pos, "expected ':'") end
      t[k], pos = decode_value(s, pos + 1)
      pos = skip(s, pos)
      local d = s:sub(pos, pos)
      if d == "}" then depth = depth - 1 return t, pos + 1 end
      if d ~= "," then fail(s, pos, "expected ',' or '}'") end
      pos = skip(s, pos + 1)
    end
  elseif c == "[" then
    local t = M.array({})
    pos = skip(s, pos + 1)
    if s:sub(pos, pos) == "]" then depth = depth - 1 return t, pos + 1 end
    while true do
      local v
      v, pos = decode_value(s, pos)
      t[#t + 1] = v
      pos = skip(s, pos)
      local d = s:sub(pos, pos)
      if d == "]" then depth = depth - 1 return t, pos + 1 end
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

function M.decode(text, limit)
  if type(text) ~= "string" then return nil, "json: the text is not a string" end
  max_depth, depth = limit or 200, 0
  local ok, v, pos = pcall(decode_value, text, 1)
  if not ok then return nil, v end
  if skip(text, pos) <= #text then return nil, ("json: trailing text at byte %d"):format(pos) end
  return v
end

return M
