#!/bin/bash
# test_stop.sh - the one stop path (issue 7, points 4-7 and 10): loops that
# never ask surge.running() still end after --duration or a signal ("run
# stopped" from calls into surge, a normal end), code that never calls surge
# is named by the watchdog (exit 3, with a summary), surge.wait()/poll() in a
# task are errors, master-only scripts get --duration, stats and a summary,
# the summary covers the whole run, a VM that allocates without bound fails
# with "not enough memory", SIGHUP stops like SIGTERM and a closed stdout
# (| head) kills nothing.
. "$(dirname "$0")/lib.sh"
need_cmd tshark
SCRIPTS=$E2E_DIR/scripts
DEV="--vdev net_null0,no-rx=1"
BG_PID=
on_exit '[ -n "$BG_PID" ] && kill -KILL $BG_PID'
line_of() { grep -n -- "$2" "$SCRIPTS/$1" | head -1 | cut -d: -f1; }
first_err() { printf '%s\n' "$ERR" | grep -v '^EAL: \|^surge: [0-9]* MB of hugepages' | head -1; }
summary_secs() { printf '%s\n' "$OUT" | sed -n 's/^surge: summary over \([0-9.]*\) s$/\1/p'; }
between() { awk -v s="${1:-0}" -v a="$2" -v b="$3" 'BEGIN { exit !(s >= a && s < b) }'; }
# "still runs N s" with --stop-grace 1: the grace counts the CPU time the
# stuck code ran, so on a loaded machine N may pass 2 s; it is never below 1
GRACE_1S='[1-9][0-9]*\.[0-9]'

echo "# a task whose loop never calls surge: the watchdog names it, summary, exit 3"
run_surge 60 run --no-huge --stats-interval 0 --duration 0.5 --stop-grace 1 --lcores '(0-1)@(0-1)' \
  "$SCRIPTS/stop_spin_task.lua"
check "spin task: exit 3 (watchdog)" 3 "$RC"
check_match "spin task: names the task and its lcore" \
  "^surge: error: task 'spin' \\(lcore 1\\) still runs $GRACE_1S s after the run stopped" "$ERR"
check_match "spin task: summary printed" '^surge: summary over [0-9.]+ s$' "$OUT"
check_match "spin task: says the pool check was skipped" 'pool check skipped' "$ERR"
# (its grace is CPU time: on a loaded machine it takes longer, bounded by the
# wall bound, max(5 s, 10 x --stop-grace), plus any time the process got no CPU)
check_true "spin task: ends within 25 s" "took $SECS s" lt "$SECS" 25
check_no_crash "spin task"
check_no_runtime_dir "spin task" "$SURGE_PID"

# Issue 23 (open finding): on a loaded machine a task that checks
# surge.running() got no CPU for seconds after the stop and the watchdog
# ended it (exit 3). The grace counts the CPU time the code ran since.
echo "# starved of CPU after the stop (the whole process SIGSTOPped 3 s): task and master end by themselves"
run_surge 60 run --no-huge --stats-interval 0 --stop-grace 0.5 --lcores '(0-1)@(0-1)' $DEV \
  "$SCRIPTS/stop_starved.lua" --mode starved
check "starved: exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_nomatch "starved: no watchdog line" 'still runs|pool check skipped' "$ERR"
N=$(printf '%s\n' "$OUT" | sed -n 's/^starved: \([0-9]*\) bursts of 32 sent$/\1/p')
check_true "starved: the task returned its count" "N '$N'" [ "${N:-0}" -gt 0 ]
check "starved: the summary counts every packet it sent" "$(( ${N:-0} * 32 ))" "$(summary_count "$OUT" 0 TX)"
check_pools "starved"

echo "# a task blocked in a C sleep(30) outside surge (no CPU burnt): the wall bound ends the run"
run_surge 60 run --no-huge --stats-interval 0 --stop-grace 0.5 --lcores '(0-1)@(0-1)' $DEV \
  "$SCRIPTS/stop_starved.lua" --mode blocked
check "blocked: exit 3 (watchdog)" 3 "$RC"
check_match "blocked: names the task, after the 5 s wall bound, and why" \
  "^surge: error: task 'blocked' \\(lcore 1\\) still runs ([5-9]|[1-9][0-9])\\.[0-9] s after the run stopped: it waits in a call outside surge" "$ERR"
check_match "blocked: summary printed" '^surge: summary over [0-9.]+ s$' "$OUT"
check_no_crash "blocked"

echo "# the watchdog's exit removes a runtime folder named with --file-prefix, as a normal exit does"
prefix=surge_wd_$$
run_surge 60 run --no-huge --stats-interval 0 --duration 0.5 --stop-grace 1 --lcores '(0-1)@(0-1)' \
  --file-prefix "$prefix" "$SCRIPTS/stop_spin_task.lua"
check "spin task, --file-prefix: exit 3 (watchdog)" 3 "$RC"
check "spin task, --file-prefix: /var/run/dpdk/$prefix removed" "absent" \
  "$([ -e "/var/run/dpdk/$prefix" ] && echo present || echo absent)"
rm -rf "/var/run/dpdk/$prefix"

echo "# tasks sending/receiving in loops without surge.running(): 'run stopped' ends them, exit 0"
run_surge 60 run --no-huge --stats-interval 0 --duration 1 --lcores '(0-2)@(0-1)' $DEV \
  "$SCRIPTS/stop_tight_send.lua"
check "tight send/recv: exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_match "tight send/recv: master went on after wait" '^master: after wait$' "$OUT"
TX=$(summary_count "$OUT" 0 TX)
check_true "tight send/recv: summary shows TX > 0" "TX '$TX'" [ "${TX:-0}" -gt 0 ]
check_true "tight send/recv: ends within 4 s" "took $SECS s" lt "$SECS" 4
check_nomatch "tight send/recv: no error printed" 'error|run stopped' "$ERR"
check_pools "tight send/recv"

echo "# sends into a queue nobody drains (net_ring, no reader): each gives up, the loop ends"
run_surge 60 run --no-huge --stats-interval 0 --lcores '(0-1)@(0-1)' --vdev net_ring0 \
  "$SCRIPTS/stop_stalled_queue.lua"
check "stalled queue: exit 0 without --duration or a signal" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_match "stalled queue: the ring took 1023, the other 3777 are drops" '^stalled: sent 1023 drops 3777$' "$OUT"
check_match "stalled queue: the summary counts them as tx-drops" 'port 0  tx-drops 3777 ' "$OUT"
# one send waits a second for the driver, later ones a millisecond each
check_true "stalled queue: ends within 4 s" "took $SECS s" lt "$SECS" 4
check_pools "stalled queue"

echo "# master-only script looping on surge.sleep: --duration, stats lines and a summary"
run_surge 60 run --no-huge --stats-interval 0.2 --duration 1 $DEV "$SCRIPTS/stop_master_sleep.lua"
check "master sleep loop: exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_true "master sleep loop: summary over 1..2.5 s" "summary over '$(summary_secs)' s" between "$(summary_secs)" 0.99 2.5
check_true "master sleep loop: at least 3 stats lines" "$(printf '%s\n' "$OUT" | grep -c '^\[ *[0-9.]*s\] port 0')" \
  [ "$(printf '%s\n' "$OUT" | grep -c '^\[ *[0-9.]*s\] port 0')" -ge 3 ]
TX=$(summary_count "$OUT" 0 TX)
check_true "master sleep loop: TX > 0" "TX '$TX'" [ "${TX:-0}" -gt 0 ]
check_pools "master sleep loop"

echo "# master-only script sending in its own loop: stats lines without poll or sleep"
run_surge 60 run --no-huge --stats-interval 0.2 --duration 1 $DEV "$SCRIPTS/stop_master_send.lua"
check "master send loop: exit 0" 0 "$RC"
NL=$(printf '%s\n' "$OUT" | grep -c '^\[ *[0-9.]*s\] port 0  TX *[1-9]')
check_true "master send loop: at least 3 stats lines with TX > 0" "$NL lines" [ "$NL" -ge 3 ]
check_true "master send loop: summary over 1..2.5 s" "summary over '$(summary_secs)' s" between "$(summary_secs)" 0.99 2.5
check_pools "master send loop"

echo "# master in a loop that never calls surge: watchdog, exit 3, summary"
run_surge 60 run --no-huge --stats-interval 0 --duration 0.5 --stop-grace 1 $DEV "$SCRIPTS/stop_master_spin.lua"
check "master spin: exit 3" 3 "$RC"
check_match "master spin: names master" '^surge: error: master\(\) still runs '"$GRACE_1S"' s after the run stopped' "$ERR"
check_match "master spin: summary printed" '^surge: summary over [0-9.]+ s$' "$OUT"
check_no_crash "master spin"
check_no_runtime_dir "master spin" "$SURGE_PID"

echo "# master catching 'run stopped' with pcall and calling again: watchdog, exit 3, summary"
run_surge 60 run --no-huge --stats-interval 0 --duration 0.5 --stop-grace 1 $DEV "$SCRIPTS/stop_master_pcall.lua"
check "master pcall: exit 3" 3 "$RC"
check_match "master pcall: says why" \
  '^surge: error: master\(\) still runs '"$GRACE_1S"' s after the run stopped: it goes on after its calls into surge raised "run stopped"' "$ERR"
check_match "master pcall: summary printed" '^surge: summary over [0-9.]+ s$' "$OUT"
check_no_crash "master pcall"

echo "# a task catching 'run stopped' with pcall: the watchdog says so"
run_surge 60 run --no-huge --stats-interval 0 --duration 0.5 --stop-grace 1 --lcores '(0-1)@(0-1)' $DEV \
  "$SCRIPTS/stop_task_pcall.lua"
check "task pcall: exit 3" 3 "$RC"
check_match "task pcall: says why" \
  "^surge: error: task 'spin' \\(lcore 1\\) still runs $GRACE_1S s after the run stopped: it goes on after its calls into surge raised" "$ERR"

echo "# a client's command catching its interrupt after the client left: the run stops, exit 3, socket removed"
SOCK=$TMP/ctl.sock
# stdin a FIFO this shell holds open (the prompt stays up) and closes when done:
# a `sleep N |` feeder would hold the `wait` below for its N seconds
mkfifo "$TMP/cl.in"
timeout -k 5 40 "$SURGE" repl --no-huge --stop-grace 1 --control "$SOCK" $DEV <"$TMP/cl.in" >"$TMP/cl.out" 2>"$TMP/cl.err" &
RPID=$!
exec 8>"$TMP/cl.in"
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
timeout 2 "$SURGE" attach "$SOCK" -e 'while true do pcall(function() while true do end end) end' >/dev/null 2>&1
T0=$(date +%s)
SPID=$(pgrep -P "$RPID" -x surge)
# (the watchdog's grace is CPU time: 25 s leaves a loaded machine the wall bound)
for _ in $(seq 300); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
check_true "client pcall loop: surge ends within 25 s of the client leaving" "took $(( $(date +%s) - T0 )) s" \
  [ "$(( $(date +%s) - T0 ))" -le 25 ]
exec 8>&-
kill "$RPID" 2>/dev/null; wait "$RPID" 2>/dev/null
check_match "client pcall loop: says why" \
  "^surge: error: the command goes on [0-9.]+ s after it was interrupted \\(the client left\\)" "$(cat "$TMP/cl.err")"
check_match "client pcall loop: the watchdog ended it" "still runs" "$(cat "$TMP/cl.err")"
check_true "client pcall loop: the socket is removed" "$SOCK exists" [ ! -e "$SOCK" ]

echo "# a command typed at the prompt catching its interrupt: SIGTERM ends surge repl (watchdog, exit 3)"
SPIN='local function f() local x = 0 for i = 1, 1e12 do x = x + 1 end end while true do pcall(f) end'
mkfifo "$TMP/rs.in"
timeout -k 5 40 "$SURGE" repl --no-huge --stop-grace 1 $DEV <"$TMP/rs.in" >"$TMP/rs.out" 2>"$TMP/rs.err" &
RPID=$!
exec 8>"$TMP/rs.in"
echo "$SPIN" >&8
sleep 2
SPID=$(pgrep -P "$RPID" -x surge)   # ($! is timeout's pid: surge is its child)
kill -TERM "$SPID"
T0=$(date +%s)
for _ in $(seq 300); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
check_true "repl pcall loop: surge ends within 25 s of SIGTERM" "took $(( $(date +%s) - T0 )) s" \
  [ "$(( $(date +%s) - T0 ))" -le 25 ]
exec 8>&-
kill "$RPID" 2>/dev/null; wait "$RPID" 2>/dev/null
check_match "repl pcall loop: says why" \
  '^surge: error: the command typed at the prompt still runs '"$GRACE_1S"' s after the run stopped: it goes on after being interrupted' \
  "$(cat "$TMP/rs.err")"

echo "# surge repl --duration ends the session"
(echo "p = surge.port(0)"; sleep 4) | timeout -k 5 30 "$SURGE" repl --no-huge --duration 1 $DEV >"$TMP/rd.out" 2>&1
RC=${PIPESTATUS[1]}
check "repl --duration 1: exit 0" 0 "$RC"
check_match "repl --duration 1: summary printed" '^surge: summary over 1\.[0-9]+ s$' "$(cat "$TMP/rd.out")"

echo "# before EAL, code the pre-pass's hook cannot end: exit 3 after the grace period"
printf 'local surge = require "surge"\nlocal function f() local x = 0 for i = 1, 1e12 do x = x + 1 end end\nwhile true do pcall(f) end\nfunction master() end\n' >"$TMP/pre_pcall.lua"
# an error handler that loops (hooks do not run in it), a finalizer that loops as the VM closes
printf 'local surge = require "surge"\nxpcall(function() while true do end end, function() while true do end end)\nfunction master() end\n' >"$TMP/pre_handler.lua"
printf 'local p = newproxy(true)\ngetmetatable(p).__gc = function() while true do end end\nrawset(_G, "keep", p)\nfunction master() end\n' >"$TMP/pre_gc.lua"
for s in pre_pcall pre_handler pre_gc; do
  timeout -k 5 30 "$SURGE" run --no-huge --stop-grace 1 "$TMP/$s.lua" >"$TMP/pre.out" 2>"$TMP/pre.err" &
  PPID_=$!
  sleep 1.5
  kill -INT "$(pgrep -P "$PPID_" | head -1)"
  wait "$PPID_"
  RC=$?
  check "$s: exit 3" 3 "$RC"
  check_match "$s: says why" \
    "^surge: error: the script's top level or configure\\(\\) still runs --stop-grace after the stop" "$(cat "$TMP/pre.err")"
done

echo "# before EAL, a top level blocked in a call (no CPU) when SIGTERM comes is not ended at the grace"
# (system() waits for its child through the signal; the loop after it is
# the hook's to end: exit 0 once the call returned, 3 s > --stop-grace)
printf 'local surge = require "surge"\nprint("blocked") io.stdout:flush()\nos.execute("sleep 3 </dev/null >/dev/null 2>&1")\nwhile true do end\nfunction master() end\n' >"$TMP/pre_block.lua"
timeout -k 5 30 "$SURGE" run --no-huge --stop-grace 1 "$TMP/pre_block.lua" >"$TMP/pre.out" 2>"$TMP/pre.err" &
PPID_=$!
wait_for_text "$TMP/pre.out" '^blocked$' 20 "$PPID_"
kill -TERM "$(pgrep -P "$PPID_" | head -1)"
wait "$PPID_"
RC=$?
check "pre_block: exit 0 (the hook ended the loop after the call)" 0 "$RC"
check_match "pre_block: one line at the loop's line" \
  "pre_block\\.lua:4: stopped while the script's top level or configure\\(\\) ran" "$(cat "$TMP/pre.err")"

echo "# master's VM closing with a finalizer that loops: SIGINT, watchdog, exit 3"
printf 'function master()\n  local p = newproxy(true)\n  getmetatable(p).__gc = function() while true do end end\n  rawset(_G, "keep", p)\n  print("master done")\nend\n' >"$TMP/gc.lua"
timeout -k 5 30 "$SURGE" run --no-huge --stop-grace 1 $DEV "$TMP/gc.lua" >"$TMP/gc.out" 2>"$TMP/gc.err" &
PPID_=$!
wait_for_text "$TMP/gc.out" 'master done' 20 "$PPID_"
sleep 0.5
kill -INT "$(pgrep -P "$PPID_" | head -1)"
wait "$PPID_"
RC=$?
check "master finalizer loop: exit 3" 3 "$RC"
check_match "master finalizer loop: names master" '^surge: error: master\(\) still runs '"$GRACE_1S"' s after the run stopped' \
  "$(cat "$TMP/gc.err")"

for call in wait poll; do
  echo "# surge.$call() in a task is an error at the task's line"
  L=$(line_of stop_wait_in_task.lua "$(echo "$call" | tr a-z A-Z)_LINE")
  run_surge 60 run --no-huge -q --duration 10 --lcores '(0-1)@(0-1)' $DEV "$SCRIPTS/stop_wait_in_task.lua" --call "$call"
  check_user_error "$call in a task"
  # (LuaJIT shortens long paths from the left: match the file name)
  check_match "$call in a task: first line" \
    "stop_wait_in_task\\.lua:$L: surge\\.$call\\(\\) is for master\\(\\): a task cannot wait for tasks \\(task 't', lcore 1\\)\$" \
    "$(first_err)"
  check_true "$call in a task: no deadlock" "took $SECS s" lt "$SECS" 8
done

echo "# the summary covers the whole run, also after the last task ended"
run_surge 60 run --no-huge --stats-interval 0 --lcores '(0-1)@(0-1)' $DEV "$SCRIPTS/stop_two_tasks.lua"
check "two tasks: exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_true "two tasks: summary over >= 1.5 s (0.3 + 0.6 + 0.3 + 0.3)" "summary over '$(summary_secs)' s" \
  between "$(summary_secs)" 1.49 6
check_pools "two tasks"

for where in task master; do
  echo "# a $where that allocates without bound: not enough memory, normal end"
  run_surge 120 run --no-huge --stats-interval 0 --vm-memory 64M --lcores '(0-2)@(0-1)' $DEV \
    "$SCRIPTS/oom.lua" --where "$where"
  check_user_error "oom in $where"
  if [ "$where" = task ]; then want="not enough memory (task 'hog', lcore [12])"; else want="not enough memory (master, lcore 0)"; fi
  check_match "oom in $where: first line" "^$(printf '%s' "$want" | sed 's/[()]/\\&/g')\$" "$(first_err)"
  check_match "oom in $where: names the budget" 'memory budget of 64 MB \(--vm-memory\)' "$ERR"
  check_match "oom in $where: summary printed" '^surge: summary over' "$OUT"
  check_pools "oom in $where"
done

# In a 512 MiB memory cgroup the default budget follows the cgroup, not 1 GiB
# per VM: the allocating task ends with surge's error, not the kernel's
# OOM kill (exit 137, no summary). Issue 23.4.
mem_cgroup() {  # mem_cgroup BYTES: prints a new memory cgroup's procs file, or nothing
  local d
  if [ -w /sys/fs/cgroup/memory ]; then
    d=/sys/fs/cgroup/memory/surge-test-$$
    mkdir "$d" 2>/dev/null && echo "$1" >"$d/memory.limit_in_bytes" && echo 0 >"$d/memory.swappiness" 2>/dev/null
  elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
    d=/sys/fs/cgroup/surge-test-$$
    mkdir "$d" 2>/dev/null && echo "$1" >"$d/memory.max" && echo 0 >"$d/memory.swap.max" 2>/dev/null
  fi
  [ -n "$d" ] && [ -f "$d/cgroup.procs" ] && echo "$d/cgroup.procs"
}
# (Not under AddressSanitizer: its shadow memory and redzones are memory no
# budget inside the process sees.)
if ldd "$SURGE" | grep -q libasan; then CG=; else CG=$(mem_cgroup $((512 << 20)) || true); fi
if [ -z "$CG" ]; then
  echo "ok   oom in a cgroup: SKIPPED (AddressSanitizer build, or no memory cgroup can be made here)"
else
  printf '#!/bin/bash\necho $$ >%s\nexec %q "$@"\n' "$CG" "$SURGE" >"$TMP/in_cgroup"
  chmod +x "$TMP/in_cgroup"
  for where in task master; do
    echo "# a $where that allocates without bound in a 512 MiB cgroup, default --vm-memory"
    SURGE=$TMP/in_cgroup run_surge 120 run --no-huge --stats-interval 0 --lcores '(0-2)@(0-1)' $DEV \
      "$SCRIPTS/oom.lua" --where "$where"
    check "oom in a cgroup ($where): exit 1, not killed" 1 "$RC"
    if [ "$where" = task ]; then want="not enough memory (task 'hog', lcore [12])"; else want="not enough memory (master, lcore 0)"; fi
    check_match "oom in a cgroup ($where): first line" "^$(printf '%s' "$want" | sed 's/[()]/\\&/g')\$" "$(first_err)"
    check_match "oom in a cgroup ($where): names the shared budget" \
      'the VMs together used the [0-9]+ MB this process may give them' "$ERR"
    check_match "oom in a cgroup ($where): summary printed" '^surge: summary over' "$OUT"
    check_pools "oom in a cgroup ($where)"
  done
  rmdir "$(dirname "$CG")" 2>/dev/null || true
fi

# signal SIG: master-only sleep loop writing a pcap; SIG once it runs
for sig in INT TERM HUP; do
  echo "# SIG$sig stops a master that loops on surge.sleep; its pcap writer is flushed"
  PCAP=$TMP/sig$sig.pcap
  timeout -k 5 60 "$SURGE" run --no-huge --stats-interval 0.1 $DEV "$SCRIPTS/stop_master_sleep.lua" --pcap "$PCAP" \
    >"$TMP/bg.out" 2>"$TMP/bg.err" &
  BG_PID=$!
  SPID=
  for _ in $(seq 50); do SPID=$(pgrep -P "$BG_PID" | head -1); [ -n "$SPID" ] && break; sleep 0.1; done
  wait_for_text "$TMP/bg.out" 'TX +[0-9.]+ Mpps' 20 "$BG_PID" || echo "no stats line within 20 s"
  sleep 0.3
  t0=$(date +%s%N)
  kill "-$sig" "$SPID"
  wait "$BG_PID"; RC=$?; BG_PID=
  STOP=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
  OUT=$(cat "$TMP/bg.out"); ERR=$(cat "$TMP/bg.err"); SURGE_PID=$SPID
  check "SIG$sig: exit 0" 0 "$RC"
  check_true "SIG$sig: ends within 3 s of the signal" "took $STOP s" lt "$STOP" 3
  N=$(printf '%s\n' "$OUT" | sed -n "s/^surge: pcap file '.*': \\([0-9]*\\) packets written (closed at the end of the run)$/\\1/p")
  check_true "SIG$sig: the writer was closed with packets" "N '$N'" [ "${N:-0}" -gt 0 ]
  check "SIG$sig: tshark reads every packet" "${N:-x}" "$(tshark_q -r "$PCAP" | wc -l)"
  check_pools "SIG$sig"
done

echo "# stdout closed early (| head -2): the run still ends well, pcap complete"
PCAP=$TMP/head.pcap
# shellcheck disable=SC2086
timeout -k 5 60 "$SURGE" run --no-huge --stats-interval 0.05 --duration 1 $DEV "$SCRIPTS/stop_master_sleep.lua" \
  --pcap "$PCAP" 2>"$TMP/head.err" | head -2 >"$TMP/head.out"
RC=${PIPESTATUS[0]}
ERR=$(cat "$TMP/head.err"); OUT=$(cat "$TMP/head.out")
check "| head -2: surge exits 0 (no SIGPIPE death)" 0 "$RC"
check "| head -2: head got two lines" 2 "$(wc -l <"$TMP/head.out")"
check_nomatch "| head -2: no leak, no error" 'leak|error' "$ERR"
N=$(tshark_q -r "$PCAP" | wc -l)
check_true "| head -2: the pcap is complete and readable (about 100 packets)" "$N packets" [ "$N" -ge 40 ]
check_no_crash "| head -2"
finish
