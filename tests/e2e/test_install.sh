#!/bin/bash
# test_install.sh - `cmake --install` and `cpack -G DEB`: the installed
# surge finds its Lua library from its own location, so it runs with the
# source and build trees out of reach (hidden under an empty tmpfs in a
# private mount namespace) and after the prefix was moved elsewhere; `surge
# run --duration 1 examples/udp-flood.lua` works from the installed share
# folder and from any other folder through PATH. The .deb holds the binary,
# the library with the generated cdef.lua, the examples and the schema and
# nothing of the tests; dpkg installs it into an empty root and that copy
# runs too; apt resolves its dependencies on this machine.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd unshare
need_cmd cmake
BUILD=$(cd "$(dirname "$SURGE")" && pwd)
[ -f "$BUILD/cmake_install.cmake" ] || skip "no cmake build folder next to $SURGE"

cmake --install "$BUILD" --prefix "$TMP/p" >"$TMP/install.log" 2>&1
check "cmake --install: exit 0" 0 "$?"
for f in bin/surge share/surge/lua/surge/init.lua share/surge/lua/surge/cdef.lua share/surge/lua/surge/proto/udp.lua \
  share/surge/examples/udp-flood.lua share/surge/results.schema.json share/doc/surge/README.md \
  lib/python3/dist-packages/surge/__init__.py lib/python3/dist-packages/surge/fleet.py; do
  check "installed: $f" yes "$([ -e "$TMP/p/$f" ] && echo yes || echo no)"
done

# hidden SRC BUILD -- COMMAND: runs COMMAND where the source and build trees are empty folders
hidden() {
  unshare -m --propagation private bash -c '
    mount -t tmpfs tmpfs "$2" && mount -t tmpfs tmpfs "$1" || exit 99; shift 2; "$@"' _ "$SURGE_SRC" "$BUILD" "$@"
}
check "the trees are out of reach in the namespace" "0 0" \
  "$(hidden bash -c 'echo $(ls -A "$1" 2>/dev/null | wc -l) $(ls -A "$2" 2>/dev/null | wc -l)' _ "$SURGE_SRC" "$BUILD")"

mkdir -p "$TMP/other"
mv "$TMP/p" "$TMP/moved"           # relocatable: not where it was installed
cat >"$TMP/run.sh" <<SH
set -e
cd "$TMP/moved/share/surge"
timeout 60 "$TMP/moved/bin/surge" run --no-huge --duration 1 examples/udp-flood.lua
cd "$TMP/other"
PATH="$TMP/moved/bin:\$PATH" timeout 60 surge run --no-huge -q --duration 1 --output r.json "$TMP/moved/share/surge/examples/udp-flood.lua"
PYTHONPATH="$TMP/moved/lib/python3/dist-packages" python3 -c 'import surge; print("python", surge.__file__)'
PATH="$TMP/moved/bin:\$PATH" surge --version
SH
OUT=$(hidden bash "$TMP/run.sh" 2>&1)
ERR=
check "installed surge runs with the trees hidden" 0 "$?"
check_match "installed: udp-flood sent packets from share/surge" 'port 0  TX [1-9][0-9]* packets' "$OUT"
check_match "installed: the Python package imports from lib/python3/dist-packages" \
  "^python $TMP/moved/lib/python3/dist-packages/surge/__init__.py\$" "$OUT"
check_match "installed: from another folder through PATH" '^surge [0-9.]+$' "$(printf '%s\n' "$OUT" | tail -1)"
check "installed: the results file was written" ok \
  "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["status"])' "$TMP/other/r.json" 2>&1)"
SURGE_PID='' check_pools "installed run"

# the Debian package
need_cmd cpack
need_cmd dpkg
(cd "$BUILD" && timeout 300 cpack -G DEB -B "$TMP/pkg" >"$TMP/cpack.log" 2>&1)
check "cpack -G DEB: exit 0" 0 "$?"
DEB=$(ls "$TMP"/pkg/surge_*.deb 2>/dev/null | head -1)
check "cpack: a .deb" yes "$([ -f "$DEB" ] && echo yes || echo no)"
LIST=$(dpkg -c "$DEB" | awk '{print $6}')
for f in ./usr/bin/surge ./usr/share/surge/lua/surge/cdef.lua ./usr/share/surge/lua/surge/results/init.lua \
  ./usr/share/surge/examples/udp-flood.lua ./usr/share/surge/results.schema.json \
  ./usr/lib/python3/dist-packages/surge/__init__.py ./usr/lib/python3/dist-packages/surge/client.py; do
  check "deb holds $f" 1 "$(printf '%s\n' "$LIST" | grep -cx -- "$f")"
done
check "deb holds no tests" 0 "$(printf '%s\n' "$LIST" | grep -c 'tests/')"
check_match "deb depends on DPDK and LuaJIT" 'librte-ethdev.*|libluajit' "$(dpkg-deb -f "$DEB" Depends)"
check_match "deb depends on libmicrohttpd (--metrics), as dpkg-shlibdeps found" 'libmicrohttpd12' "$(dpkg-deb -f "$DEB" Depends)"
if command -v apt-get >/dev/null; then
  check_match "apt resolves the .deb's dependencies here" '^Inst surge ' "$(apt-get -s install "$DEB" 2>&1)"
fi
ROOT=$TMP/root
mkdir -p "$ROOT/var/lib/dpkg/info" "$ROOT/var/lib/dpkg/updates"
touch "$ROOT/var/lib/dpkg/status"
# an empty root has none of the libraries: dpkg records the dependencies,
# the binary runs with this machine's libraries
dpkg --root="$ROOT" --force-depends --force-not-root -i "$DEB" >"$TMP/dpkg.log" 2>&1
check "dpkg -i into an empty root: exit 0" 0 "$?"
OUT=$(hidden bash -c "cd '$TMP/other' && timeout 60 '$ROOT/usr/bin/surge' run --no-huge --duration 1 '$ROOT/usr/share/surge/examples/udp-flood.lua'" 2>&1)
check "the packaged surge runs with the trees hidden" 0 "$?"
check_match "packaged: udp-flood sent packets" 'port 0  TX [1-9][0-9]* packets' "$OUT"
finish
