-- base/serial.lua - pass plain data between LuaJIT VMs as Lua-like text.
--
-- Tasks run in separate VMs, so arguments and results cross as text:
-- numbers, strings, booleans, nested tables, and surge handles (ports,
-- queues, pools), which travel as ids and are rebuilt on the other side.
-- What cannot cross (functions, cdata, userdata, coroutines, cycles, more
-- than MAX_DEPTH nested tables) is refused when encoded, naming where it is.
--
-- The decoder is a parser of exactly what encode writes, not loadstring: the
-- text runs no code, and any malformed text is an error "corrupt task data:
-- ... at byte N", never a hang or a crash (tests/fuzz feeds it garbage).
local M = {}

local fmt, concat, byte, sub, find = string.format, table.concat, string.byte, string.sub, string.find

M.MAX_DEPTH = 100

local function encode(v, out, seen, path, depth)
  local t = type(v)
  if t == "nil" then out[#out + 1] = "nil"
  elseif t == "boolean" then out[#out + 1] = tostring(v)
  elseif t == "number" then
    if v ~= v then out[#out + 1] = "0/0"
    elseif v == math.huge then out[#out + 1] = "1/0"
    elseif v == -math.huge then out[#out + 1] = "-1/0"
    elseif v == math.floor(v) and math.abs(v) < 2^53 then out[#out + 1] = fmt("%d", v)
    else out[#out + 1] = fmt("%.17g", v) end
  elseif t == "string" then out[#out + 1] = fmt("%q", v)
  elseif t == "table" then
    local mt = getmetatable(v)
    if type(mt) == "table" and mt.__handle then
      out[#out + 1] = mt.__handle(v)
      return
    end
    if seen[v] then error(("cannot pass %s: it contains a cycle"):format(path), 0) end
    if depth >= M.MAX_DEPTH then
      error(("cannot pass %s: tables nested more than %d deep"):format(path:match("^%a+ %d+"), M.MAX_DEPTH), 0)
    end
    seen[v] = true
    out[#out + 1] = "{"
    local n = #v
    for i = 1, n do
      encode(v[i], out, seen, path .. "[" .. i .. "]", depth + 1)
      out[#out + 1] = ","
    end
    for k, x in pairs(v) do
      local kt = type(k)
      if not (kt == "number" and k >= 1 and k <= n and k == math.floor(k)) then
        if kt ~= "string" and kt ~= "number" and kt ~= "boolean" then
          error(("cannot pass %s: table keys must be strings, numbers or booleans"):format(path), 0)
        end
        if k ~= k then error(("cannot pass %s: a table key is NaN"):format(path), 0) end
        out[#out + 1] = "["
        encode(k, out, seen, path, depth + 1)
        out[#out + 1] = "]="
        encode(x, out, seen, path .. "." .. tostring(k), depth + 1)
        out[#out + 1] = ","
      end
    end
    out[#out + 1] = "}"
    seen[v] = nil
  else
    error(("cannot pass %s to or from a task: it is a %s (only numbers, strings, booleans, "
      .. "tables and surge handles cross between lcores)"):format(path, t), 0)
  end
end

-- Encodes a list of n values as "return {n=N,v1,v2,...}"; `what` names the
-- values in errors ("argument", "result").
function M.encode(list, n, what)
  local out = { "return {n=", fmt("%d", n), "," }
  for i = 1, n do
    encode(list[i], out, {}, (what or "argument") .. " " .. i, 0)
    out[#out + 1] = ","
  end
  out[#out + 1] = "}"
  return concat(out)
end

-------------------------------------------------------------------------------
-- Decoder: a recursive-descent parser over the text, position in `pos`.

local P = {}
P.__index = P

local function corrupt(p, what)
  error(fmt("corrupt task data: %s at byte %d", what, p.pos), 0)
end

function P:ws()
  self.pos = find(self.s, "[^ \t\r\n]", self.pos) or #self.s + 1
end

function P:eat(lit)
  self:ws()
  if sub(self.s, self.pos, self.pos + #lit - 1) ~= lit then corrupt(self, fmt("expected '%s'", lit)) end
  self.pos = self.pos + #lit
end

function P:peek(lit)
  self:ws()
  return sub(self.s, self.pos, self.pos + #lit - 1) == lit
end

local escapes = { n = "\n", t = "\t", r = "\r", a = "\a", b = "\b", f = "\f", v = "\v",
                  ["\\"] = "\\", ['"'] = '"', ["'"] = "'", ["\n"] = "\n" }

function P:string()
  local s, i, parts = self.s, self.pos + 1, {}
  while true do
    local j = find(s, '["\\\n]', i)
    if j == nil or byte(s, j) == 10 then self.pos = j or #s + 1; corrupt(self, "unfinished string") end
    parts[#parts + 1] = sub(s, i, j - 1)
    if byte(s, j) == 34 then self.pos = j + 1; return concat(parts) end
    local c = sub(s, j + 1, j + 1)
    if escapes[c] then parts[#parts + 1] = escapes[c]; i = j + 2
    elseif find(c, "^%d") then
      local d = s:match("^%d%d?%d?", j + 1)
      local v = tonumber(d)
      if v > 255 then self.pos = j; corrupt(self, "bad escape in string") end
      parts[#parts + 1] = string.char(v)
      i = j + 1 + #d
    else self.pos = j; corrupt(self, "bad escape in string") end
  end
end

function P:number()
  local s = self.s
  for _, special in ipairs({ "0/0", "-1/0", "1/0" }) do
    if sub(s, self.pos, self.pos + #special - 1) == special then
      self.pos = self.pos + #special
      return special == "0/0" and 0 / 0 or special == "1/0" and math.huge or -math.huge
    end
  end
  local text = s:match("^%-?%d+%.?%d*[eE]?[-+]?%d*", self.pos)
  local v = text and tonumber(text)
  if v == nil then corrupt(self, "bad number") end
  self.pos = self.pos + #text
  return v
end

function P:value(depth)
  if depth > M.MAX_DEPTH then corrupt(self, fmt("tables nested more than %d deep", M.MAX_DEPTH)) end
  self:ws()
  local s, pos = self.s, self.pos
  local c = byte(s, pos)
  if c == nil then corrupt(self, "unexpected end") end
  if c == 34 then return self:string() end                        -- "
  if c == 123 then return self:table(depth + 1) end              -- {
  if c == 45 or (c >= 48 and c <= 57) then return self:number() end
  local word = s:match("^[%a_][%w_]*", pos)
  if word == nil then corrupt(self, fmt("unexpected '%s'", sub(s, pos, pos))) end
  self.pos = pos + #word
  if word == "nil" then return nil end
  if word == "true" then return true end
  if word == "false" then return false end
  local make = self.env[word]
  if type(make) ~= "function" then self.pos = pos; corrupt(self, fmt("unknown handle '%s'", word)) end
  self:eat("(")
  local args, n = {}, 0
  while not self:peek(")") do
    local c2 = byte(s, self.pos)
    if c2 ~= 34 and c2 ~= 45 and not (c2 and c2 >= 48 and c2 <= 57) then corrupt(self, "bad handle argument") end
    n = n + 1
    if n > 8 then corrupt(self, "too many handle arguments") end
    args[n] = self:value(depth + 1)
    if not self:peek(")") then self:eat(",") end
  end
  self:eat(")")
  return make(unpack(args, 1, n))
end

function P:table(depth)
  self.pos = self.pos + 1                                        -- past {
  local t, i = {}, 0
  while not self:peek("}") do
    if self:peek("[") then
      self.pos = self.pos + 1
      local k = self:value(depth)
      if k == nil or k ~= k then corrupt(self, "nil or NaN table key") end
      self:eat("]")
      self:eat("=")
      t[k] = self:value(depth)
    elseif self.s:match("^[%a_][%w_]*%s*=", self.pos) then     -- n=N, as encode writes
      local name = self.s:match("^[%a_][%w_]*", self.pos)
      self.pos = self.pos + #name
      self:eat("=")
      t[name] = self:value(depth)
    else
      i = i + 1
      t[i] = self:value(depth)
    end
    if not self:peek("}") then self:eat(",") end
  end
  self.pos = self.pos + 1
  return t
end

-- Decodes text made by encode; `env` maps handle names to constructors.
-- Returns the list (with its count in .n).
function M.decode(text, env)
  if type(text) ~= "string" then error("corrupt task data: not a string", 0) end
  local p = setmetatable({ s = text, pos = 1, env = env or {} }, P)
  p:eat("return")
  p:ws()
  if byte(text, p.pos) ~= 123 then corrupt(p, "expected '{'") end
  local list = p:value(0)
  p:ws()
  if p.pos <= #text then corrupt(p, "trailing text") end
  if type(list.n) ~= "number" or list.n < 0 or list.n > 1e6 or list.n ~= math.floor(list.n) then
    corrupt(p, "bad value count")
  end
  return list
end

return M
