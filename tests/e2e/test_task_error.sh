#!/bin/bash
# test_task_error.sh - errors in scripts: in a task, in master, at compile
# time, strict mode, a missing task function, and errors raised by the surge
# API. Each must fail the run (exit 1..123) with file:line of the script's
# own line first on stderr, stop what still runs, and leave no leak.
. "$(dirname "$0")/lib.sh"
SCRIPTS=$E2E_DIR/scripts

line_of() { grep -n -- "$2" "$SCRIPTS/$1" | head -1 | cut -d: -f1; }   # line_of FILE MARKER
first_err() { printf '%s\n' "$ERR" | head -1; }

echo "# (a) task 'tx' raises error(\"boom\") while task 'spin' loops on surge.running()"
S=$SCRIPTS/task_error.lua
L=$(line_of task_error.lua BOOM_LINE)
run_surge 60 run --no-huge --stats-interval 0 --duration 30 --lcores '(0-2)@(0-1)' "$S"
check_user_error "task error"
check_match "stderr line 1: $S:$L: boom (task 'tx', lcore N)" \
  "^$(printf '%s' "$S" | sed 's/[.[\*^$]/\\&/g'):$L: boom \\(task 'tx', lcore [12]\\)\$" "$(first_err)"
check "stderr line 2 starts the traceback" "stack traceback:" "$(printf '%s\n' "$ERR" | sed -n 2p)"
check_match "traceback names the script line" "task_error\\.lua:$L:" "$(printf '%s\n' "$ERR" | tail -n +3)"
check "the error is reported once" 1 "$(printf '%s\n' "$ERR" | grep -c 'boom')"
check_true "the other task was stopped: run ends well before --duration 30" "took $SECS s" lt "$SECS" 10
check_pools "task error"

echo "# (b) master() raises an error while a task runs"
S=$SCRIPTS/master_error.lua
L=$(line_of master_error.lua MASTER_LINE)
run_surge 60 run --no-huge --stats-interval 0 --duration 30 "$S"
check_user_error "master error"
check "stderr line 1: $S:$L: master failed on purpose" "$S:$L: master failed on purpose" "$(first_err)"
check_true "the task was stopped: run ends well before --duration 30" "took $SECS s" lt "$SECS" 10
check_pools "master error"

echo "# (c) syntax error"
S=$SCRIPTS/syntax_error.lua
L=$(line_of syntax_error.lua SYNTAX_LINE)
run_surge 60 run --no-huge -q "$S"
check_user_error "syntax error"
check_match "stderr line 1: $S:$L: ... near '='" "^.*syntax_error\\.lua:$L: .*near '='" "$(first_err)"
check "stderr line 1 is the path as given" "$S:$L:" "$(first_err | cut -d: -f1-2):"

echo "# (d) strict mode: assignment to an undeclared global inside a function"
S=$SCRIPTS/strict_global.lua
L=$(line_of strict_global.lua GLOBAL_LINE)
run_surge 60 run --no-huge -q "$S"
check_user_error "strict, in master"
check_match "stderr line 1: $S:$L: ... 'counter_not_declared'" \
  "strict_global\\.lua:$L: .*undeclared global 'counter_not_declared'" "$(first_err)"
check "stderr line 1 starts with the script's path and line" "$S:$L" "$(first_err | cut -d: -f1-2)"
run_surge 60 run --no-huge -q "$S" --in task
check_user_error "strict, in a task"
check_match "stderr line 1: $S:$L: ... 'counter_not_declared' (task 'task', lcore 1)" \
  "strict_global\\.lua:$L: .*undeclared global 'counter_not_declared'.*\\(task 'task', lcore 1\\)" "$(first_err)"

echo "# (e) surge.launch of a function the script does not define"
S=$SCRIPTS/no_task_fn.lua
run_surge 60 run --no-huge -q "$S"
check_user_error "missing task function"
check_match "stderr line 1 names the script and 'no_such_task'" "no_task_fn\\.lua:[0-9]+: .*no (global )?function 'no_such_task'" "$(first_err)"

echo "# (f) errors raised by the surge API name the script's line"
S=$SCRIPTS/bad_port.lua
L=$(line_of bad_port.lua PORT_LINE)
run_surge 60 run --no-huge -q "$S"
check_user_error "surge.port(7)"
check_match "stderr line 1: $S:$L: port 7 does not exist" "^.*bad_port\\.lua:$L: .*port 7" "$(first_err)"
S=$SCRIPTS/bad_burst.lua
L=$(line_of bad_burst.lua BURST_LINE)
run_surge 60 run --no-huge -q "$S"
check_user_error "pool:burst(0) in a task"
check_match "stderr line 1: $S:$L: pool:burst: n ... got 0 (task 'tx', lcore 1)" \
  "^.*bad_burst\\.lua:$L: .*pool:burst: n: expected .*got 0 \\(task 'tx', lcore 1\\)" "$(first_err)"

echo "# (e) a script path longer than LuaJIT's 60-character chunk names"
LONG=$TMP/a-directory-name-long-enough/that-lua-would-shorten-it-to-dots
mkdir -p "$LONG"
cp "$SCRIPTS/master_error.lua" "$SCRIPTS/syntax_error.lua" "$LONG/"
run_surge 60 run --no-huge -q "$LONG/master_error.lua"
check_true "long path: master error names the whole path" "$(first_err)" \
  grep -q "^$LONG/master_error\.lua:[0-9]*: master failed on purpose" <<<"$(first_err)"
check_nomatch "long path: the traceback keeps the script's frames whole" '^\s*\.\.\.' "$ERR"
run_surge 60 run --no-huge -q "$LONG/syntax_error.lua"
check_true "long path: syntax error names the whole path" "$(first_err)" \
  grep -q "^$LONG/syntax_error\.lua:[0-9]*:" <<<"$(first_err)"

echo "# (h) the traceback names every frame of the script, the task function and master too"
S=$SCRIPTS/traceback_names.lua
for where in task master; do
  run_surge 60 run --no-huge -q --stats-interval 0 "$S" --in $where
  check_user_error "error in $where"
  TB=$(printf '%s\n' "$ERR" | sed -n '/^stack traceback:/,/^[^[:space:]]/p' | grep '^[[:space:]]')
  ENTRY=$([ $where = task ] && echo tx || echo master)
  WANT=$(for f in DEEP:innermost MIDDLE:middle OUTER:outer "$(tr a-z A-Z <<<"$ENTRY"):$ENTRY"; do
    printf '\t%s:%s: in function '"'%s'"'\n' "$S" "$(line_of traceback_names.lua "${f%%:*}_LINE")" "${f#*:}"; done)
  check "$where: the traceback is the script's 4 frames, each named" "$WANT" "$TB"
done

echo "# (g) more tasks than worker lcores: the hint names an lcore count DPDK takes, on CPUs there are"
S=$SCRIPTS/many_tasks.lua
L=$(line_of many_tasks.lua LAUNCH_LINE)
CPUS=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)   # what surge may run on too
CPU0=${CPUS%%[-,]*}
MAX_LCORE=$(for d in $(pkg-config --cflags-only-I libdpdk 2>/dev/null | sed 's/-I//g'); do
  sed -n 's/^#define RTE_MAX_LCORE \([0-9]*\).*/\1/p' "$d/rte_build_config.h" 2>/dev/null; done | head -1)
MAX_LCORE=${MAX_LCORE:-128}
# 6 lcores all on one CPU: one more is 7 (ids 0-6), on the CPUs the process has, not 0-5
run_surge 60 run --no-huge -q --stats-interval 0 --lcores "(0-5)@$CPU0" "$S"
check_user_error "6 lcores busy"
BUSY="$S:$L: no free lcore for task 'spin': all"
check "6 lcores busy: stderr line 1 suggests 7 lcores on CPUs $CPUS" \
  "$BUSY 5 worker lcores are busy (give more with --lcores, e.g. --lcores '(0-6)@($CPUS)')" "$(first_err)"
# as many lcores as DPDK allows (ids 0-$((MAX_LCORE - 1)) on one CPU): no suggestion past it
run_surge 120 run --no-huge -q --stats-interval 0 --lcores "(0-$((MAX_LCORE - 1)))@$CPU0" "$S"
check_user_error "$MAX_LCORE lcores busy"
check "$MAX_LCORE lcores busy: stderr line 1 says no more can be given" \
  "$BUSY $((MAX_LCORE - 1)) worker lcores are busy (and no more lcores can be given:\
 $MAX_LCORE is the most DPDK allows, RTE_MAX_LCORE; stop a task first)" "$(first_err)"
finish
