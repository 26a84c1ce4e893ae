-- requires.lua - a module's requires sit at its top (docs/architecture.md,
-- "Requires"): lists each require of a module by its literal name inside a
-- function, unless the file is an entry point (lua/surge/vm/: each command
-- loads what it needs when it runs) or the line says why with `-- lazy:`.
-- A require by a computed name (a protocol, a scenario, a task's module)
-- is not listed: it cannot be at the top. Run with lua5.1 and luacheck's
-- parser: lua5.1 requires.lua FILE... ; exits 1 when it lists one.
local parser = require("luacheck.parser")
local decoder = require("luacheck.decoder")

local found = 0
for _, path in ipairs(arg) do
  local f = assert(io.open(path))
  local src = f:read("*a")
  f:close()
  local lines = {}
  for l in (src .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  local ok, ast = pcall(parser.parse, decoder.decode(src))
  if not ok then
    print(("%s: cannot be parsed: %s"):format(path, tostring(ast.msg or ast)))
    found = found + 1
  elseif not path:match("lua/surge/vm/[^/]+%.lua$") then
    local function walk(node, depth)
      if type(node) ~= "table" then return end
      if node.tag == "Function" then depth = depth + 1 end
      if node.tag == "Call" and depth > 0 and node[1].tag == "Id" and node[1][1] == "require"
          and node[2] and node[2].tag == "String" and not (lines[node.line] or ""):match("%-%- lazy: %S") then
        print(("%s:%d: require \"%s\" inside a function: move it to the top, or say why on its line (-- lazy: ...)")
          :format(path, node.line, node[2][1]))
        found = found + 1
      end
      for _, child in ipairs(node) do walk(child, depth) end
    end
    walk(ast, 0)
  end
end
os.exit(found == 0 and 0 or 1)
