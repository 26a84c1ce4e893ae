# shellcheck shell=bash
# scripts/bench-huge.sh - hugepages for the benches (sourced by scripts/bench
# and scripts/bench-conn, not run): removing what the peers leave on the
# hugepage mount, and the pre-flight check that the hugepages a bench
# measures with are there (issue 31 item 18).
#
# A DPDK process keeps its hugepage files (PREFIXmap_N on the hugetlbfs
# mount) after it ends, unless it ran --in-memory (surge) or --huge-unlink
# (scripts/bench's testpmd); only a later process of the same --file-prefix
# reclaims them. dperf's prefix holds its PID, so each dperf run leaves its
# socket_mem (1 GB) that nobody reclaims, and every later bench finds that
# much less. DPDK holds a shared flock(2) on every file it maps and, at
# start-up, removes the files of its prefix that no process holds: the same
# rule here, for the peers' prefixes, so a file a live process uses stays.

# the first hugetlbfs mount ("" when none)
huge_mount() { awk '$3 == "hugetlbfs" { print $2; exit }' /proc/mounts; }
huge_page_kb() { awk '/^Hugepagesize:/ { print $2 }' /proc/meminfo; }
huge_free_mb() {
  awk '/^HugePages_Free:/ { f = $2 } /^Hugepagesize:/ { s = $2 } END { print int(f * s / 1024) }' /proc/meminfo
}

# huge_sweep GLOB...: removes the files on the mount whose names match a
# GLOB and that no process holds; one line per file removed ("NAME N MB")
huge_sweep() {
  local m g f kb
  m=$(huge_mount)
  [ -n "$m" ] || return 0
  for g in "$@"; do
    for f in "$m"/$g; do
      [ -f "$f" ] || continue
      # an exclusive lock at once: no process holds it (DPDK's own test)
      flock -n -x "$f" true 2>/dev/null || continue
      kb=$(du -k "$f" 2>/dev/null | cut -f1)
      rm -f "$f" && echo "${f##*/} $(( ${kb:-0} / 1024 )) MB"
    done
  done
  return 0     # (a file that could not go is named by huge_preflight's refusal)
}

# huge_listing: the files on the mount, "NAME N MB (in use|unused)", ", "-separated
huge_listing() {
  local m f kb out=
  m=$(huge_mount)
  [ -n "$m" ] || { echo "no hugetlbfs mounted"; return; }
  for f in "$m"/*; do
    [ -f "$f" ] || continue
    kb=$(du -k "$f" 2>/dev/null | cut -f1)
    out+="${out:+, }${f##*/} $(( ${kb:-0} / 1024 )) MB ($(flock -n -x "$f" true 2>/dev/null && echo unused || echo in use))"
  done
  echo "${out:-no files}"
}

# huge_preflight WHO NEED_MB MAX_ADD_PAGES: NEED_MB of hugepages free on a
# mounted hugetlbfs, raising vm.nr_hugepages by what is missing (at most
# MAX_ADD_PAGES; HUGE_ADDED counts the pages added, for huge_restore).
# Otherwise one line on stderr, "WHO: refusing to measure: ...", and 1.
HUGE_ADDED=0
huge_preflight() {
  local who=$1 need=$2 max=$3 free page_kb short cur
  free=$(huge_free_mb) page_kb=$(huge_page_kb)
  if [ -z "$(huge_mount)" ]; then
    echo "$who: refusing to measure: no hugetlbfs mounted (mount -t hugetlbfs nodev /dev/hugepages)" >&2
    return 1
  fi
  if [ "$free" -lt "$need" ]; then
    short=$(( ((need - free) * 1024 + ${page_kb:-2048} - 1) / ${page_kb:-2048} ))
    if [ "$short" -le "$max" ] && [ -w /proc/sys/vm/nr_hugepages ]; then
      cur=$(cat /proc/sys/vm/nr_hugepages)
      if echo $((cur + short)) > /proc/sys/vm/nr_hugepages 2>/dev/null; then
        # the kernel may give fewer than asked (memory too fragmented)
        HUGE_ADDED=$((HUGE_ADDED + $(cat /proc/sys/vm/nr_hugepages) - cur))
      fi
      free=$(huge_free_mb)
    fi
  fi
  if [ "$free" -lt "$need" ]; then
    echo "$who: refusing to measure: $free MB of hugepages free, $need MB needed (figures without them are" \
         "not comparable); on $(huge_mount): $(huge_listing)" >&2
    return 1
  fi
}

# huge_restore: takes back the pages huge_preflight added, from the value
# now (others may have changed it meanwhile: the machine is shared). Call
# it after the peers' files are removed: pages a file holds cannot go.
huge_restore() {
  local now
  [ "$HUGE_ADDED" -gt 0 ] 2>/dev/null || return 0
  now=$(cat /proc/sys/vm/nr_hugepages)
  echo $((now > HUGE_ADDED ? now - HUGE_ADDED : 0)) > /proc/sys/vm/nr_hugepages 2>/dev/null
  HUGE_ADDED=0
}
