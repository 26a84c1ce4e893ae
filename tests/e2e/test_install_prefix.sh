#!/bin/bash
# test_install_prefix.sh - an install prefix holding Lua's path characters
# (';' separates package.path templates, '?' stands for the module name) and
# a space: the installed surge finds its library through its own loader,
# never through a path template built from the prefix (core/run/vm.c
# folder_loader), so it starts, and the README's first job runs from the
# installed share folder and through PATH. A --path folder and a script's
# own folder with those characters work too (issue 23 item 13f).
. "$(dirname "$0")/lib.sh"
need_cmd cmake
BUILD=$(cd "$(dirname "$SURGE")" && pwd)
[ -f "$BUILD/cmake_install.cmake" ] || skip "no cmake build folder next to $SURGE"

P="$TMP/pre;fix?x y"
cmake --install "$BUILD" --prefix "$P" >"$TMP/install.log" 2>&1
check "cmake --install to '$P': exit 0" 0 "$?"

# the README's first job, from the installed share folder
OUT=$(cd "$P/share/surge" && timeout 60 "$P/bin/surge" run --no-huge --duration 1 examples/udp-flood.lua 2>&1)
check "installed under ';' and '?': udp-flood.lua runs" 0 "$?"
check_match "installed under ';' and '?': it sent packets" 'port 0  TX [1-9][0-9]* packets' "$OUT"
check_nomatch "no module went missing" "module '[^']*' not found" "$OUT"
# through PATH, the script given by its absolute path (its folder has them too)
OUT=$(cd "$TMP" && PATH="$P/bin:$PATH" timeout 60 surge run --no-huge -q --duration 1 "$P/share/surge/examples/udp-flood.lua" 2>&1)
check "through PATH, the script in the odd folder: exit 0" 0 "$?"
# a script requiring its neighbour, and a scenario, in folders with ';' and '?'
D="$TMP/mods;a?b"
mkdir -p "$D"
printf 'return { answer = 42 }\n' >"$D/neighbour.lua"
printf 'local n = require "neighbour"\nfunction master() print("neighbour says " .. n.answer) end\n' >"$D/main.lua"
OUT=$(timeout 60 "$P/bin/surge" run --no-huge -q "$D/main.lua" 2>&1)
check_match "a script's neighbour in a folder with ';' and '?'" '^neighbour says 42$' "$OUT"
cat >"$D/answer.lua" <<'LUA'
return { description = "says 42", options = function(p) end,
  run = function(o) return { n = 42 } end, report = function(r) return "answer " .. r.n end }
LUA
OUT=$(timeout 60 "$P/bin/surge" run --no-huge -q --path "$D" answer 2>&1)
check_match "a --path folder with ';' and '?': its scenario runs" '^answer 42$' "$OUT"
OUT=$(timeout 60 "$P/bin/surge" scenarios --path "$D" 2>&1)
check "surge scenarios lists it" 1 "$(grep -cF "says 42 [$D]" <<<"$OUT")"
finish
