-- luacheck over the whole tree (tests/lint/test_lint.sh runs it).
std = "luajit"
max_line_length = 160
-- A callback keeps the signature its caller gives it, used or not.
ignore = { "212" }
-- surge sets package.surge_dirs and package.surge_lua (core/run/vm.c) for
-- its own searchers; os.exit is wrapped so a script's exit stops the run
-- cleanly (lua/surge/core.lua)
read_globals = { package = { other_fields = true } }
globals = { os = { fields = { "exit" } } }
-- A script's functions are found by name (master, configure, show and its
-- tasks), so a script defines globals at its top level on purpose and need
-- not read them.
for _, dir in ipairs { "examples", "bench", "scripts", "tests/e2e", "tests/lua", "tests/python" } do
  files[dir] = { allow_defined_top = true, ignore = { "131", "212" } }
end
-- the misuse tests' scripts make a handle and drop it on purpose
files["tests/e2e/scripts"].ignore = { "131", "211", "212", "241" }
-- a test names its cases by what they show, reusing short names inside
files["tests/lua"].ignore = { "131", "212", "421", "431" }
-- Lines typed at the prompt (its globals, its '= expr' shorthand), and
-- scripts that are wrong on purpose (the misuse tests' inputs).
exclude_files = { "tests/e2e/repl/*_session.lua", "tests/e2e/scripts/syntax_error.lua",
  "tests/e2e/scripts/strict_global.lua", "build*/**" }
