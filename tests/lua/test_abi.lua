-- The FFI ABI: LuaJIT's view of every struct in surge.h (generated cdef.lua)
-- must match the compiler's, field by field, and the C-side table must cover
-- every field the header declares, so the two cannot drift silently.
local ffi = require("ffi")
local cdef = require("surge.cdef")
local C = ffi.C

local T = {}

-- Fields surge.h marks "read-only in Lua" are ro_NAME in Lua's cdef.
local function lua_name(ctype, field)
  if field ~= "" and ffi.offsetof(ctype, field) == nil and ffi.offsetof(ctype, "ro_" .. field) then
    return "ro_" .. field
  end
  return field
end

local function c_table()
  local n = ffi.new("uint32_t[1]")
  local rows = C.surge_abi_fields(n)
  local out = {}
  for i = 0, n[0] - 1 do
    local r = rows[i]
    out[#out + 1] = { type = ffi.string(r.type), field = ffi.string(r.field),
                      offset = r.offset, size = r.size }
  end
  return out
end

function T.sizes_and_offsets_agree()
  local rows = c_table()
  assert(#rows > 40, "layout table looks truncated: " .. #rows)
  for _, r in ipairs(rows) do
    if r.field == "" then
      assert(ffi.sizeof(r.type) == r.size,
        ("%s: C sizeof %d, LuaJIT %d"):format(r.type, r.size, ffi.sizeof(r.type)))
    else
      local field = lua_name(r.type, r.field)
      local off = ffi.offsetof(r.type, field)
      assert(off == r.offset, ("%s.%s: C offset %d, LuaJIT %s"):format(r.type, r.field, r.offset, tostring(off)))
      local probe = ffi.new(r.type)
      local ok, fsize = pcall(function() return ffi.sizeof(probe[field]) end)
      if ok and fsize then
        assert(fsize == r.size, ("%s.%s: C size %d, LuaJIT %d"):format(r.type, r.field, r.size, fsize))
      end
    end
  end
end

-- Every field declared in the header's structs has a row in the C table.
function T.table_covers_every_declared_field()
  local have = {}
  for _, r in ipairs(c_table()) do have[r.type .. "." .. r.field] = true end
  local structs = 0
  for name, body in cdef:gmatch("struct%s+([%w_]+)%s*(%b{})") do
    structs = structs + 1
    assert(have["struct " .. name .. "."], "struct " .. name .. " has no size row in surge_abi_fields")
    body = body:gsub("/%*.-%*/", "")
    for decl in body:sub(2, -2):gmatch("[^;]+") do
      local field = decl:gsub("%b[]", ""):match("([%w_]+)%s*$")
      if field then
        field = field:gsub("^ro_", "")
        assert(have["struct " .. name .. "." .. field],
          ("struct %s.%s is not in surge_abi_fields (core/base/abi.c, generated from surge.h)"):format(name, field))
      end
    end
  end
  assert(structs >= 7, "found only " .. structs .. " structs in cdef")
end

function T.burst_capacity_matches_enum()
  assert(C.SURGE_BURST_MAX == 256)
  local b = ffi.new("struct surge_burst")
  assert(ffi.sizeof(b.ro_mbuf) == C.SURGE_BURST_MAX * ffi.sizeof("void *"))
end

return T
