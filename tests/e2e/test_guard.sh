#!/bin/bash
# test_guard.sh - misuse the C core must refuse clearly (issue 7, points 3,
# 8, 9, 11, 14, 16, 18): pcap handles another lcore holds, a thousand opens
# in one run, a second writer of one file (same run or another process),
# a task's own pool used from master, duplicate or failing devices, EAL
# options that would hang, scripts given through a pipe, --quiet and the
# --stats-interval bound.
. "$(dirname "$0")/lib.sh"
need_cmd tshark
SCRIPTS=$E2E_DIR/scripts
DEV="--vdev net_null0,no-rx=1"
BG_PID=
on_exit '[ -n "$BG_PID" ] && kill -KILL $BG_PID'
first_err() { printf '%s\n' "$ERR" | grep -v '^EAL: \|^surge: [0-9]* MB of hugepages\|^vdev_probe\|^open_single' | head -1; }
line() { printf '%s\n' "$OUT" | grep -F -- "$1: " | head -1; }

echo "# pcap handles, pool owners, surge.vdev errors (guard_pcap.lua)"
run_surge 120 run --no-huge --stats-interval 0 --lcores '(0-2)@(0-1)' $DEV "$SCRIPTS/guard_pcap.lua" --dir "$TMP"
check "guard: exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
F=$TMP/guard.pcap
check "master cannot close a reader a task fills from" \
  "close while a task fills: error pcap file '$F' is in use by lcore 1 (a file belongs to the task that first uses it, until that task ends)" \
  "$(line "close while a task fills")"
check "nor rewind it" "rewind while a task fills: error pcap file '$F' is in use by lcore 1 (a file belongs to the task that first uses it, until that task ends)" \
  "$(line "rewind while a task fills")"
check "info reads counters meanwhile" "info while a task fills: ok 8" "$(line "info while a task fills")"
check "after the task ended master closes it" "close after the task ended: ok 8" "$(line "close after the task ended")"
check "closing twice is refused" "close again: error pcap file '$F' is closed" "$(line "close again")"
check "a thousand opens and closes in one run" "reopened: 1000" "$(printf '%s\n' "$OUT" | grep '^reopened:')"
check "a stale handle is refused" "stale handle: error pcap file 256 is closed" "$(line "stale handle")"
check "a second writer of one file is refused" \
  "second writer of a file: error pcap file '$TMP/one.pcap' is being written by another writer (in this run or another surge process): refusing to clobber it" \
  "$(line "second writer of a file")"
check "only regular files are locked: /dev/null takes two writers" "two writers of /dev/null: ok 0" \
  "$(line "two writers of /dev/null")"
check_match "a task's own pool refuses bursts on master's lcore" \
  "^burst from a task's pool in master: error pool [0-9]+ belongs to the task on lcore 1 that made it \\(a single-owner pool\\): lcore 0 cannot take bursts from it" \
  "$(line "burst from a task's pool in master")"
check "surge.vdev of a name in use says so" \
  "vdev twice: error cannot add virtual device 'net_ring5': a device named 'net_ring5' exists already (give each its own number, e.g. net_ring1)" \
  "$(printf '%s\n' "$OUT" | grep -F 'vdev twice: error')"
check_match "surge.vdev of an unknown driver says what failed" \
  "^vdev unknown driver: error cannot add virtual device 'net_bogus7': no driver is named 'net_bogus'" \
  "$(line "vdev unknown driver")"
check_pools "guard"

echo "# two surge processes writing one tx_pcap file"
P=$TMP/tx.pcap
timeout -k 5 60 "$SURGE" run --no-huge -q --duration 4 --vdev "net_pcap0,tx_pcap=$P" \
  "$EXAMPLES/udp-flood.lua" >"$TMP/a.out" 2>"$TMP/a.err" &
BG_PID=$!
for _ in $(seq 100); do [ -s "$P" ] && break; sleep 0.05; done
run_surge 60 run --no-huge -q --duration 1 --vdev "net_pcap0,tx_pcap=$P" "$EXAMPLES/udp-flood.lua"
check_user_error "second tx_pcap writer"
check "second tx_pcap writer: first line" \
  "surge: --vdev net_pcap0,tx_pcap=$P: pcap file '$P' is being written by another writer (in this run or another surge process): refusing to clobber it" \
  "$(first_err)"
wait "$BG_PID"; ARC=$?; BG_PID=
check "the first writer's run: exit 0" 0 "$ARC"
N=$(tshark_q -r "$P" -c 200000 2>/dev/null | wc -l)
check_true "the first writer's file is intact (tshark reads it)" "$N packets" [ "$N" -gt 0 ]

echo "# the same device twice"
run_surge 30 run --no-huge --vdev net_ring0 --vdev net_ring0 "$EXAMPLES/udp-flood.lua"
check "device twice: exit 2" 2 "$RC"
check "device twice: names it" \
  "surge: option --vdev: device 'net_ring0' given twice (each device needs its own name, e.g. net_ring0 and net_ring1)" \
  "$(first_err)"

echo "# a device that fails to start"
for cmd in run devices; do
  if [ $cmd = run ]; then set -- "$EXAMPLES/udp-flood.lua"; else set --; fi
  run_surge 30 $cmd --no-huge --vdev "net_pcap0,rx_pcap=$TMP/none.pcap" "$@"
  check "$cmd with a failing device: exit 1" 1 "$RC"
  check "$cmd with a failing device: names it" \
    "surge: --vdev net_pcap0,rx_pcap=$TMP/none.pcap: the device failed to start (its driver's reason is printed above)" \
    "$(first_err)"
  check_match "$cmd with a failing device: the driver's reason is shown" "Couldn't open $TMP/none.pcap" "$ERR"
  check_no_runtime_dir "$cmd with a failing device" "$SURGE_PID"
done

echo "# a PCI device that does not come up"
for cmd in run devices; do
  if [ $cmd = run ]; then set -- "$EXAMPLES/udp-flood.lua"; else set --; fi
  run_surge 30 $cmd --no-huge --pci 0000:ff:1f.7 "$@"
  check "$cmd --pci with no such device: exit 1" 1 "$RC"
  check "$cmd --pci with no such device: one line naming it" \
    "surge: --pci 0000:ff:1f.7: no port came up for this device (not bound to a DPDK driver, or its driver failed; see above)" \
    "$(first_err)"
  check_no_runtime_dir "$cmd --pci with no such device" "$SURGE_PID"
done

echo "# EAL options that would wait forever are refused"
run_surge 30 run --no-huge --eal "--proc-type=secondary" $DEV "$EXAMPLES/udp-flood.lua"
check "--proc-type=secondary: exit 1" 1 "$RC"
check "--proc-type=secondary: says why" \
  "surge: --eal: --proc-type is not supported: surge always runs as its own primary process (a secondary would wait forever for a primary)" \
  "$(first_err)"
check_true "--proc-type=secondary: refused at once" "took $SECS s" lt "$SECS" 10

echo "# scripts through a pipe: read once, every VM runs the text"
run_surge 60 run --no-huge -q --lcores '(0-1)@(0-1)' $DEV <(cat "$SCRIPTS/pipe_task.lua")
check "process substitution: exit 0" 0 "$RC"
check "process substitution: master and task ran" "master: 21" "$(printf '%s\n' "$OUT" | grep '^master:')"
timeout -k 5 60 "$SURGE" run --no-huge -q --lcores '(0-1)@(0-1)' $DEV - <"$SCRIPTS/pipe_task.lua" >"$TMP/p.out" 2>"$TMP/p.err"
check "stdin (-): exit 0" 0 "$?"
check "stdin (-): master and task ran" "master: 21" "$(grep '^master:' "$TMP/p.out")"
printf 'function master()\n  error("from a pipe")\nend\n' >"$TMP/e.lua"
timeout -k 5 60 "$SURGE" run --no-huge -q $DEV - <"$TMP/e.lua" >"$TMP/p.out" 2>"$TMP/p.err"
check "stdin (-): errors name stdin:LINE" "stdin:2: from a pipe" "$(head -1 "$TMP/p.err")"

run_surge 30 run --no-huge $DEV "$TMP"
check "a folder as the script: exit 2" 2 "$RC"
check "a folder as the script: says so" "surge: cannot read script '$TMP': Is a directory" "$(first_err)"

echo "# --quiet: no EAL notices; --stats-interval has a lower bound"
run_surge 60 run -q "$EXAMPLES/udp-flood.lua" --count 1000
check "quiet run: exit 0" 0 "$RC"
check_nomatch "quiet run: no 'EAL: No free/available ... hugepages' notice" 'EAL: No (free|available) ' "$ERR"
run_surge 30 run --stats-interval 0.001 $DEV "$EXAMPLES/udp-flood.lua"
check "--stats-interval 0.001: exit 2" 2 "$RC"
check "--stats-interval 0.001: names the option" \
  "surge: option --stats-interval: '0.001' is not 0 (none) or a time of 10ms or more (try 1, 0.5s)" "$(first_err)"
finish
