#!/bin/bash
# test_vm_memory.sh - a VM that allocates forever in a loop the JIT compiled
# ends with surge's "not enough memory", never a crash (issue 31 item 19:
# SIGSEGV, exit 139, at --vm-memory 300M and in a 512 MiB cgroup). The
# error is raised at a safe point (vm.c: a hook at the next bytecode, the
# allocation granted from the reserve until then), so it is a Lua error
# with a traceback naming the user's loop; LuaJIT's own memory error, raised
# inside the trace, had none. Several allocation shapes, in a task and in
# master, with --vm-memory 300M and in a 512 MiB memory cgroup, and at the
# prompt (twice: caught again once the memory is freed).
. "$(dirname "$0")/lib.sh"
SCRIPT=$E2E_DIR/scripts/vm_memory.lua
line_of() { grep -n -- "$1" "$SCRIPT" | head -1 | cut -d: -f1; }
first_err() { printf '%s\n' "$ERR" | grep -v '^EAL: \|^surge: ' | head -1; }

# hog WHERE SHAPE BUDGET-REGEX [SURGE-ARGS...]
hog() {
  local where=$1 shape=$2 budget=$3 want line
  shift 3
  echo "# $shape in $where $*"
  run_surge 60 run --no-huge --stats-interval 0 "$@" "$SCRIPT" --where "$where" --shape "$shape"
  check "$shape in $where: exit 1 (the crash was 139)" 1 "$RC"
  [ "$RC" = 1 ] || show_run
  check_no_crash "$shape in $where"
  if [ "$where" = task ]; then want="not enough memory (task 'hog', lcore 1)"; else want="not enough memory (master, lcore 0)"; fi
  check "$shape in $where: first line" "$want" "$(first_err)"
  check_match "$shape in $where: names the budget" "$budget" "$ERR"
  # (master hogs before it launches anything: no ports, no summary)
  [ "$where" = master ] || check_match "$shape in $where: summary printed" '^surge: summary over' "$OUT"
  # one allocation bigger than the reserve (the array's doubling) is
  # refused: LuaJIT's own error, no traceback; the others come from the hook
  if [ "$where" = task ] && [ "$shape" != array ]; then
    line=$(line_of "$(echo "$shape" | tr a-z A-Z)_LINE")
    check_match "$shape in $where: the traceback names the loop's line" "vm_memory\\.lua:$line: in function" "$ERR"
  fi
}

# (300M as in the report; an AddressSanitizer build's malloc is slower and
# keeps freed memory: 64M there)
if ldd "$SURGE" | grep -q libasan; then ASAN=1 MB=64; else ASAN='' MB=300; fi
OWN="memory budget of $MB MB \\(--vm-memory\\)"
for shape in tables strings cdata stitched array; do hog task "$shape" "$OWN" --vm-memory ${MB}M; done
hog master tables "$OWN" --vm-memory ${MB}M
# the array's doubling to exactly the reserve's end (64M): the report still
# has memory (it once got "not enough memory" without the task)
hog task array 'memory budget of 64 MB \(--vm-memory\)' --vm-memory 64M

# (64M: the second line runs before the GC freed the first one's garbage,
# in the reserve, and is caught all the same)
echo "# at the prompt: the error, then the prompt goes on and is caught again"
printf '%s\n' 'local t, i = {}, 0 while true do i = i + 1 t[i] = { i, i } end' 'print("after one")' \
  'local ffi, t, i = require "ffi", {}, 0 while true do i = i + 1 t[i] = ffi.new("char[100]") end' 'print("after two")' >"$TMP/repl.lua"
run_surge 60 repl --no-huge --stats-interval 0 --vm-memory 64M <"$TMP/repl.lua"
check "prompt: exit 0" 0 "$RC"
check_no_crash "prompt"
check "prompt: two errors at the line typed" "2" "$(printf '%s\n%s\n' "$OUT" "$ERR" | grep -c '^error: prompt:1: not enough memory$')"
check "prompt: goes on after each" "after one
after two" "$(printf '%s\n' "$OUT" | grep '^after ')"

# A 512 MiB memory cgroup (v1 or v2) without --vm-memory: the shared budget
# (3/4 of what the cgroup leaves) runs out. Not under AddressSanitizer: its
# shadow memory is memory no budget inside the process sees.
mem_cgroup() {  # mem_cgroup BYTES: prints a new memory cgroup's folder, or nothing
  local d=
  if [ -w /sys/fs/cgroup/memory ] || [ -d /sys/fs/cgroup/memory ] && [ "$(id -u)" = 0 ]; then
    d=/sys/fs/cgroup/memory/surge-vmmem-$$
    mkdir "$d" 2>/dev/null && echo "$1" >"$d/memory.limit_in_bytes" && echo 0 >"$d/memory.swappiness" 2>/dev/null
  elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
    d=/sys/fs/cgroup/surge-vmmem-$$
    mkdir "$d" 2>/dev/null && echo "$1" >"$d/memory.max" && echo 0 >"$d/memory.swap.max" 2>/dev/null
  fi
  [ -n "$d" ] && [ -f "$d/cgroup.procs" ] && echo "$d"
}
if [ -n "$ASAN" ]; then CG=; else CG=$(mem_cgroup $((512 << 20)) || true); fi
if [ -z "$CG" ]; then
  echo "ok   in a cgroup: SKIPPED (AddressSanitizer build, or no memory cgroup can be made here)"
else
  on_exit "rmdir '$CG'"
  printf '#!/bin/bash\necho $$ >%s\nexec %q "$@"\n' "$CG/cgroup.procs" "$SURGE" >"$TMP/in_cgroup"
  chmod +x "$TMP/in_cgroup"
  SHARED='the VMs together used the [0-9]+ MB this process may give them'
  SURGE=$TMP/in_cgroup hog task tables "$SHARED"
  SURGE=$TMP/in_cgroup hog master tables "$SHARED"
fi
finish
