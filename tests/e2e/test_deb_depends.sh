#!/bin/bash
# test_deb_depends.sh - the .deb depends on the DPDK drivers surge loads at
# run time (issue 23 item 13g). EAL dlopens them from its pmds folder, so
# dpkg-shlibdeps cannot find them; CMakeLists.txt names the package that
# holds each. Checks: `cpack -G DEB` builds; its Depends (dpkg-deb -f) keeps
# what shlibdeps found and adds, for each driver surge needs (the vdev and
# PCI buses, the ring mempool, net_null, net_ring, net_pcap, net_af_packet,
# net_memif, net_tap), the package dpkg says owns that driver's file here.
. "$(dirname "$0")/lib.sh"
need_cmd cpack
need_cmd dpkg
need_cmd dpkg-deb
BUILD=$(cd "$(dirname "$SURGE")" && pwd)
[ -f "$BUILD/CPackConfig.cmake" ] || skip "no cmake build folder next to $SURGE"
PMDS=$(ls -d /usr/lib/*/dpdk/pmds-* 2>/dev/null | head -1)
[ -n "$PMDS" ] || skip "no Debian DPDK pmds folder"

(cd "$BUILD" && timeout 300 cpack -G DEB -B "$TMP/pkg" >"$TMP/cpack.log" 2>&1)
check "cpack -G DEB: exit 0" 0 "$?"
DEB=$(ls "$TMP"/pkg/surge_*.deb 2>/dev/null | head -1)
check "cpack: a .deb" yes "$([ -f "$DEB" ] && echo yes || echo no)"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
echo "Depends: $DEPENDS"
check_match "shlibdeps' dependencies are kept" 'librte-ethdev[0-9]+' "$DEPENDS"
check_match "LuaJIT is kept" 'libluajit' "$DEPENDS"
for drv in bus_vdev bus_pci mempool_ring net_null net_ring net_pcap net_af_packet net_memif net_tap; do
  f=$(ls "$PMDS"/librte_"$drv".so.* 2>/dev/null | head -1)
  pkg=$(dpkg -S "$f" 2>/dev/null | sed 's/[:,].*//')
  check_true "driver $drv is in a package here ($pkg)" "$f" test -n "$pkg"
  check "the .deb depends on $pkg ($drv)" 1 "$(printf '%s\n' "$DEPENDS" | tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep -cx -- "$pkg")"
done
if command -v apt-get >/dev/null; then
  check_match "apt resolves the .deb's dependencies here" '^Inst surge ' "$(apt-get -s install "$DEB" 2>&1)"
fi
finish
