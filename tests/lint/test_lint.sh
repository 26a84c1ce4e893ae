#!/usr/bin/env bash
# test_lint.sh - luacheck over every Lua file of the tree (.luacheckrc says
# what it allows and why), and shows the check failing on a planted global.
# Usage: test_lint.sh SOURCE_DIR
set -euo pipefail
src=${1:-$SURGE_SRC}
command -v luacheck >/dev/null || { echo "test_lint: luacheck missing (scripts/setup installs lua-check)"; exit 77; }
fail=0
cd "$src"
if ! out=$(luacheck . --codes --no-color -q 2>&1); then
  echo "$out"; echo "FAIL: luacheck"; fail=1
else
  echo "luacheck: $(tail -n 1 <<<"$out")"
fi
# the check is not vacuous: a module of lua/ that sets a global is reported
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp .luacheckrc "$tmp/"; mkdir -p "$tmp/lua/surge"
printf 'local M = {}\nfunction M.f() leaked = 1 end\nreturn M\n' >"$tmp/lua/surge/planted.lua"
if out=$(cd "$tmp" && luacheck . --codes --no-color -q 2>&1); then
  echo "FAIL: a global set in lua/surge/planted.lua was not reported"; fail=1
elif ! grep -q "lua/surge/planted.lua:2:.*(W111) setting non-standard global variable 'leaked'" <<<"$out"; then
  echo "FAIL: luacheck did not name the planted global: $out"; fail=1
fi
if [ $fail = 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
