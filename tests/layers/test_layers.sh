#!/usr/bin/env bash
# test_layers.sh - the core's folders are layers (docs/architecture.md):
# a file includes only headers of its own folder, of the folders below it
# and the ABI (core/include), and calls only functions defined there.
#
# The order comes from the one place that defines it, the surge_layer()
# lines of CMakeLists.txt ("surge_layer(report BELOW control io ...").
#   1. every #include "..." of core/LAYER/* is checked against it;
#   2. every symbol a layer's objects need (nm -u) must not be defined by
#      a layer above (an upward call through surge.h compiles, so the
#      objects are checked too);
#   3. the checks themselves are shown to fail: an upward #include added
#      to a copy of a base file is reported, and the compiler refuses it
#      with base's include path, as the build does;
#   4. no two files call each other, directly or round a loop, inside a
#      folder too (cycles.py: the core's objects and private headers, the
#      Lua modules' requires and their packages), and that check is shown
#      to fail on a planted C cycle and a planted Lua cycle;
#   5. docs/architecture.md names every .c file of the core and none that
#      is gone (shown failing on a planted file).
# Usage: test_layers.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=${1:-$SURGE_SRC}
build=${2:-}
fail=0

# layer -> the layers it may use (itself and everything below it)
declare -A below
while read -r name rest; do
  below[$name]=$rest
done < <(sed -n 's/^surge_layer(\([a-z]*\)\( BELOW \([a-z ]*\)\)\? SOURCES.*/\1 \3/p' "$src/CMakeLists.txt")
[ ${#below[@]} -ge 6 ] || { echo "test_layers: found only ${#below[@]} layers in CMakeLists.txt"; exit 1; }

allowed() {  # allowed LAYER: LAYER and every layer below it, transitively
  local seen=" $1 " todo=$1 l b
  while [ -n "$todo" ]; do
    set -- $todo; l=$1; shift; todo="$*"
    for b in ${below[$l]}; do
      case "$seen" in *" $b "*) ;; *) seen="$seen$b "; todo="$todo $b";; esac
    done
  done
  echo "$seen"
}

# where a header lives: its layer, "abi" or "generated"
header_layer() {
  local h=$1 l
  [ -f "$core/include/$h" ] && { echo abi; return; }
  case "$h" in surge_git.h|surge_abi_table.h) echo generated; return;; esac
  for l in "${!below[@]}"; do [ -f "$core/$l/$h" ] && { echo "$l"; return; }; done
  echo unknown
}

check_includes() {  # check_includes CORE_DIR: prints one line per upward include
  local core=$1 bad=0 f layer ok inc hl line
  for layer in "${!below[@]}"; do
    ok=$(allowed "$layer")
    for f in "$core/$layer"/*.[ch]; do
      while IFS=: read -r line inc; do
        inc=${inc#*\"}; inc=${inc%%\"*}
        hl=$(core=$core header_layer "$inc")
        case "$hl" in
          abi|generated) ;;
          unknown) echo "${f#$core/}:$line: includes \"$inc\", which no layer of core/ has"; bad=1;;
          *) case "$ok" in *" $hl "*) ;; *)
               echo "${f#$core/}:$line: includes \"$inc\" of layer $hl, which is not below $layer"; bad=1;;
             esac;;
        esac
      done < <(grep -n '^#include "' "$f" || true)
    done
  done
  return $bad
}

# 1. the tree as it is
core=$src/core
if ! out=$(check_includes "$core"); then
  echo "$out"; echo "FAIL: upward #include"; fail=1
fi
# every folder of core/ is a layer (a new folder must be placed in the order)
for d in "$src"/core/*/; do
  d=$(basename "$d")
  [ "$d" = include ] || [ -n "${below[$d]+x}" ] || { echo "FAIL: core/$d is not a layer in CMakeLists.txt"; fail=1; }
done

# 2. the objects: what each layer needs must not be defined above it
if [ -n "$build" ] && [ -d "$build/CMakeFiles" ]; then
  declare -A owner
  for layer in "${!below[@]}"; do
    for o in "$build/CMakeFiles/surge_$layer.dir/core/$layer"/*.o; do
      [ -f "$o" ] || continue
      while read -r sym; do owner[$sym]=$layer; done < <(nm --defined-only -g "$o" | awk '{print $3}')
    done
  done
  [ ${#owner[@]} -gt 100 ] || { echo "FAIL: found only ${#owner[@]} symbols in $build"; fail=1; }
  for layer in "${!below[@]}"; do
    ok=$(allowed "$layer")
    for o in "$build/CMakeFiles/surge_$layer.dir/core/$layer"/*.o; do
      [ -f "$o" ] || continue
      while read -r sym; do
        l=${owner[$sym]:-}
        [ -z "$l" ] && continue          # DPDK, LuaJIT, libc
        case "$ok" in *" $l "*) ;; *)
          echo "FAIL: core/$layer/$(basename "$o" .o): calls $sym of layer $l, which is not below $layer"; fail=1;;
        esac
      done < <(nm -u "$o" | awk '{print $2}')
    done
  done
else
  echo "test_layers: no build folder given: symbol check skipped"
fi

# 3. the checks fail on a deliberate upward include
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp -r "$src/core" "$tmp/core"
sed -i '0,/^#include "base.h"/s//#include "base.h"\n#include "report.h"/' "$tmp/core/base/clock.c"
if out=$(check_includes "$tmp/core"); then
  echo "FAIL: an upward #include \"report.h\" in core/base/clock.c was not reported"; fail=1
elif ! grep -q 'base/clock.c:[0-9]*: includes "report.h" of layer report, which is not below base' <<<"$out"; then
  echo "FAIL: the report does not name the upward include: $out"; fail=1
fi
# ... and the build refuses it: base's objects see only core/base and core/include
if command -v pkg-config >/dev/null && pkg-config --exists libdpdk luajit; then
  read -ra cflags <<<"$(pkg-config --cflags libdpdk luajit)"
  if cc -fsyntax-only "${cflags[@]}" -I"$tmp/core/base" -I"$src/core/include" \
       "$tmp/core/base/clock.c" 2>"$tmp/cc.err"; then
    echo "FAIL: base/clock.c with an upward include compiled with base's include path"; fail=1
  elif ! grep -q 'report.h' "$tmp/cc.err"; then
    echo "FAIL: the compiler failed for another reason:"; cat "$tmp/cc.err"; fail=1
  fi
  # the unchanged file compiles with the same flags (the check above is not vacuous)
  cc -fsyntax-only "${cflags[@]}" -I"$src/core/base" -I"$src/core/include" \
     "$src/core/base/clock.c" || { echo "FAIL: base/clock.c does not compile on base's include path"; fail=1; }
fi

# 4. no call cycle between files; the check fails on planted ones
here=$(dirname "$0")
if [ -n "$build" ] && [ -d "$build/CMakeFiles" ]; then
  python3 "$here/cycles.py" c "$src" "$build" || { echo "FAIL: a call cycle between files of the core"; fail=1; }
fi
python3 "$here/cycles.py" lua "$src/lua" || { echo "FAIL: a require cycle in the Lua API"; fail=1; }
# a planted C cycle: two files of one folder calling each other (and ten
# files of another folder, since the check wants a tree of some size)
plant=$tmp/plant
mkdir -p "$plant/core/x" "$plant/core/y" "$plant/build/CMakeFiles/surge_x.dir/core/x" \
  "$plant/build/CMakeFiles/surge_y.dir/core/y"
printf 'int b_half(int n);\nint a_count(int n) { return n > 0 ? b_half(n - 1) : 0; }\n' >"$plant/core/x/a.c"
printf 'int a_count(int n);\nint b_half(int n) { return a_count(n / 2); }\n' >"$plant/core/x/b.c"
for i in $(seq 10); do echo "int f$i(void) { return $i; }" >"$plant/core/y/f$i.c"; done
for f in x/a x/b $(for i in $(seq 10); do echo y/f$i; done); do
  cc -c -o "$plant/build/CMakeFiles/surge_${f%%/*}.dir/core/$f.c.o" "$plant/core/$f.c"
done
if out=$(python3 "$here/cycles.py" c "$plant" "$plant/build"); then
  echo "FAIL: a planted cycle a.c <-> b.c was not reported"; fail=1
elif ! grep -q 'x/a.c -> x/b.c (calls b_half)' <<<"$out" || ! grep -q 'x/b.c -> x/a.c (calls a_count)' <<<"$out"; then
  echo "FAIL: the report does not name the planted C cycle: $out"; fail=1
fi
# a planted Lua cycle: check.lua, which flow.lua requires, requires flow
cp -r "$src/lua" "$tmp/lua"
echo 'local function later() return require "surge.flow" end' >>"$tmp/lua/surge/check.lua"
if out=$(python3 "$here/cycles.py" lua "$tmp/lua"); then
  echo "FAIL: a planted require cycle check.lua <-> flow.lua was not reported"; fail=1
elif ! grep -q 'surge/check.lua -> surge/flow.lua (line [0-9]* requires surge.flow)' <<<"$out"; then
  echo "FAIL: the report does not name the planted Lua cycle: $out"; fail=1
fi

# 5. docs/architecture.md names every .c file of the core, and each core
# file it names exists: its picture and ladders cannot drift from the tree
doc_names() { grep -o '[a-z0-9_]*\.c\b' "$1" | sort -u; }
tree_names() { find "$1" -mindepth 2 -maxdepth 2 -name '*.c' -printf '%f\n' | sort -u; }
missing=$(comm -13 <(doc_names "$src/docs/architecture.md") <(tree_names "$src/core"))
stale=$(comm -23 <(doc_names "$src/docs/architecture.md") <(tree_names "$src/core") |
  grep -Ev '^(test_[a-z0-9_]*|main_lua)\.c$' || true)
if [ -n "$missing" ]; then echo "FAIL: docs/architecture.md does not name core files:" $missing; fail=1; fi
if [ -n "$stale" ]; then echo "FAIL: docs/architecture.md names core files that do not exist:" $stale; fail=1; fi
# ... and that check fails on a planted file
mkdir -p "$tmp/docs_plant/core/x"
touch "$tmp/docs_plant/core/x/planted_file.c"
if [ -z "$(comm -13 <(doc_names "$src/docs/architecture.md") <(tree_names "$tmp/docs_plant/core"))" ]; then
  echo "FAIL: a core file not in docs/architecture.md was not reported"; fail=1
fi

if [ $fail = 0 ]; then
  echo "layers: ${#below[@]} layers, every #include and call goes to its own layer or below, no two files in a cycle"
  echo "docs/architecture.md names every .c file of the core, and no other"
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed"
fi
exit $fail
