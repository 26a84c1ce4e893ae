#!/bin/bash
# test_bench_conn_huge.sh - scripts/bench-conn's hugepages (issue 31 item
# 18), without dperf: tests/e2e/scripts/bench_conn_peer.py stands in for
# dperf (a hugepage file named by its PID, allocated and held as DPDK holds
# it, and left behind when it ends) and for surge. One row (tcp), a 1 s
# window,   (a pair needs 8 MB):
#  1. a run to its end: a leftover of an earlier run (a file no process
#     holds) is removed before the first pair, with a line saying so; a
#     live process's file is kept; both of its dperf processes' files and
#     runtime folders are gone after the pair; the table has its ratio;
#     vm.nr_hugepages as before;
#  2. a run interrupted (SIGTERM to its process group, as Ctrl-C or a
#     timeout): exit 130, its peers stopped, their files and folders gone;
#  3. the hugepages a pair needs cannot be had ( ): one
#     line refusing, naming what is free and what holds the mount, exit 1,
#     no table, nothing raised;
#  4. surge fell back to --no-huge: refused, exit 1, no table.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd python3
need_cmd flock
need_cmd fallocate
MNT=$(awk '$3 == "hugetlbfs" { print $2; exit }' /proc/mounts)
[ -n "$MNT" ] || skip "no hugetlbfs mounted"
[ "$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)" -ge 16 ] || skip "fewer than 16 hugepages free"
PEER=$E2E_DIR/scripts/bench_conn_peer.py
BENCH=$SURGE_SRC/scripts/bench-conn
HP0=$(cat /proc/sys/vm/nr_hugepages)
PAGE_MB=$(awk '/^Hugepagesize:/ { print int($2 / 1024) }' /proc/meminfo)

# an earlier run's leftover, and a file a live process holds
STALE=dperf-9$$map_0 HELD=dperf-8$$map_0
on_exit "rm -f '$MNT/$STALE' '$MNT/$HELD'"
fallocate -l "${PAGE_MB}M" "$MNT/$STALE"
fallocate -l "${PAGE_MB}M" "$MNT/$HELD"
# (the shell that locks it becomes the sleep: killing $! lets it go)
( exec 9<"$MNT/$HELD"; flock -s 9; exec sleep 300 ) >/dev/null 2>&1 &
HOLDER=$!
on_exit "kill $HOLDER"

# 1. to its end
OUT=$(SURGE=$PEER DPERF=$PEER timeout -k 5 120 bash "$BENCH" --rows tcp --duration 1 --socket-mem 4 2>"$TMP/err")
RC=$?
ERR=$(cat "$TMP/err")
check "a run: exit 0" 0 "$RC"
check_match "a run: the table, with its ratio" "^tcp +connections/s +[0-9]+ +[0-9]+ +[0-9]+\.[0-9]{2} " "$OUT"
check "a run: the earlier run's leftover removed, and said" \
  "bench-conn: removed a peer's leftover hugepage file: $STALE $PAGE_MB MB" "$(grep -F "$STALE" <<<"$ERR")"
check "a run: the live process's file kept" yes "$([ -e "$MNT/$HELD" ] && echo yes || echo no)"
OWN=$(sed -n "s/^bench-conn: removed a peer's leftover hugepage file: dperf-\([0-9]*\)map_0 4 MB$/\1/p" <<<"$ERR" |
      grep -v "^9$$\$")
check "a run: its two dperf processes' files (4 MB each) removed after the pair" 2 "$(printf '%s\n' "$OWN" | grep -c .)"
check "a run: no dperf file left on $MNT but the live one" "$HELD" "$(find "$MNT" -maxdepth 1 -name 'dperf-*' -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//')"
for p in $OWN; do
  check "a run: dperf $p: stopped, its runtime folder gone" "no no" \
    "$(kill -0 "$p" 2>/dev/null && echo yes || echo no) $([ -e "/var/run/dpdk/dperf-$p" ] && echo yes || echo no)"
done
check "a run: vm.nr_hugepages as before" "$HP0" "$(cat /proc/sys/vm/nr_hugepages)"

# 2. interrupted while its dperf pair runs: the whole group gets SIGTERM
SURGE=$PEER DPERF=$PEER setsid bash "$BENCH" --rows tcp --duration 1 --socket-mem 4 >"$TMP/out2" 2>"$TMP/err2" &
BPID=$!
on_exit "kill -KILL -- -$BPID"
PEERS=
for _ in $(seq 300); do
  PEERS=$(ls "$MNT" | sed -n "s/^dperf-\([0-9]*\)map_0$/\1/p" | grep -v "^[89]$$\$" | tr '\n' ' ')
  [ "$(wc -w <<<"$PEERS")" = 2 ] && break
  sleep 0.1
done
check "interrupted: its dperf pair was running (two files)" 2 "$(wc -w <<<"$PEERS")"
kill -TERM -- -"$BPID"
wait "$BPID"
check "interrupted: exit 130" 130 "$?"
for p in $PEERS; do
  check "interrupted: dperf $p stopped, its file and runtime folder gone" "no no no" \
    "$(kill -0 "$p" 2>/dev/null && echo yes || echo no) $([ -e "$MNT/dperf-${p}map_0" ] && echo yes || echo no) $([ -e "/var/run/dpdk/dperf-$p" ] && echo yes || echo no)"
done
check "interrupted: no table" "" "$(cat "$TMP/out2")"
check "interrupted: vm.nr_hugepages as before" "$HP0" "$(cat /proc/sys/vm/nr_hugepages)"

# 3. the hugepages cannot be had: refused before anything runs
OUT=$(SURGE=$PEER DPERF=$PEER timeout -k 5 60 bash "$BENCH" --rows tcp --duration 1 --socket-mem 100000 2>"$TMP/err")
RC=$?
ERR=$(cat "$TMP/err")
check "too few hugepages: exit 1, no table" "1 " "$RC $OUT"
check "too few hugepages: one line" 1 "$(printf '%s\n' "$ERR" | wc -l)"
check_match "too few hugepages: says what is free, what is needed, what holds the mount" \
  "^bench-conn: refusing to measure: [0-9]+ MB of hugepages free, 200000 MB needed \(figures without them are not comparable\); on $MNT: .*$HELD $PAGE_MB MB \(in use\)" "$ERR"
check "too few hugepages: vm.nr_hugepages as before" "$HP0" "$(cat /proc/sys/vm/nr_hugepages)"

# 4. surge ran without hugepages: its figures are not set against dperf's
OUT=$(BENCH_PEER_NOHUGE=1 SURGE=$PEER DPERF=$PEER timeout -k 5 60 bash "$BENCH" --rows tcp --duration 1 --socket-mem 4 2>"$TMP/err")
RC=$?
check "surge without hugepages: exit 1, no table" "1 " "$RC $OUT"
check_match "surge without hugepages: refused, saying why" \
  "^bench-conn: refusing to measure: surge's tcp pair ran without hugepages: surge: .*running with --no-huge" "$(cat "$TMP/err")"
finish
