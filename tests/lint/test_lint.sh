#!/usr/bin/env bash
# test_lint.sh - luacheck over every Lua file of the tree and shellcheck
# over every shell script (.luacheckrc and .shellcheckrc say what they allow
# and why), each shown failing on a planted defect.
# Usage: test_lint.sh SOURCE_DIR
set -euo pipefail
src=${1:-$SURGE_SRC}
for t in luacheck shellcheck; do
  command -v $t >/dev/null || { echo "test_lint: $t missing (scripts/setup installs it)"; exit 77; }
done
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
# every shell script: the files named *.sh or in scripts/ and .ci/ that
# start with a bash or sh line (a sourced library, tests/e2e/lib.sh, is
# read through the scripts that source it); at severity warning, since the
# tests split an unquoted $DEV or $OPTS into arguments on purpose
mapfile -t scripts < <(find . -path './build*' -prune -o -path ./.git -prune -o -type f -print |
  while read -r f; do
    case $f in
      *.sh|./scripts/*|./.ci/*) head -n 1 "$f" | grep -q '^#!.*\<\(bash\|sh\)\>' && echo "$f";;
    esac
  done | sort)
[ ${#scripts[@]} -ge 50 ] || { echo "FAIL: found only ${#scripts[@]} shell scripts"; fail=1; }
if ! out=$(shellcheck -x -S warning -f gcc "${scripts[@]}" 2>&1); then
  echo "$out"; echo "FAIL: shellcheck"; fail=1
else
  echo "shellcheck: ${#scripts[@]} scripts, no warning"
fi
printf '#!/usr/bin/env bash\ncd /tmp\nrm -rf "$HOME"/x\n' >"$tmp/planted.sh"
if out=$(cd "$tmp" && shellcheck -x -S warning -f gcc planted.sh 2>&1); then
  echo "FAIL: a cd without a check in planted.sh was not reported"; fail=1
elif ! grep -q "planted.sh:2:.*SC2164" <<<"$out"; then
  echo "FAIL: shellcheck did not name the planted cd: $out"; fail=1
fi
# requires at the top of a module (docs/architecture.md, "Requires"),
# read with luacheck's own parser; shown failing on a planted one
mapfile -t modules < <(find lua -name '*.lua' | sort)
if ! out=$(lua5.1 "$src/tests/lint/requires.lua" "${modules[@]}" 2>&1); then
  echo "$out"; echo "FAIL: a require inside a function without its reason"; fail=1
else
  echo "requires: ${#modules[@]} modules, each require at the top or with its reason"
fi
printf 'local M = {}\nfunction M.f()\n  return require("surge.check").show(1)\nend\nreturn M\n' >"$tmp/lua/surge/planted.lua"
if out=$(lua5.1 "$src/tests/lint/requires.lua" "$tmp/lua/surge/planted.lua" 2>&1); then
  echo "FAIL: a require inside a function of planted.lua was not reported"; fail=1
elif ! grep -q 'planted.lua:3: require "surge.check" inside a function' <<<"$out"; then
  echo "FAIL: requires.lua did not name the planted require: $out"; fail=1
fi
# one way to write a require in the tree's Lua: require("name"), a call
# that reads as an import (docs/architecture.md, "Requires")
bare_require='(^|[^"'\''[:alnum:]_.])require[[:space:]]*(["'\''][A-Za-z0-9_.]+["'\'']|\[\[)'
if out=$(grep -rnE --include='*.lua' --exclude-dir='build*' --exclude-dir=.git "$bare_require" . 2>&1); then
  echo "$out"; echo "FAIL: a require without parentheses: write require(\"name\")"; fail=1
fi
printf 'local check = require "surge.check"\nreturn check\n' >"$tmp/lua/surge/planted.lua"
if ! grep -rnE --include='*.lua' "$bare_require" "$tmp" | grep -q 'planted.lua:1:'; then
  echo "FAIL: a require without parentheses in planted.lua was not found"; fail=1
fi
if [ $fail = 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
