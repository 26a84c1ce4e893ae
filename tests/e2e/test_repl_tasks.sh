#!/usr/bin/env bash
# The prompt's common case: `surge repl --vdev net_ring0` with no --lcores
# (default lcores, shared pools for typed functions), tasks()'s own counts and
# list, task handles' states, Tab without internals; at a real terminal
# (repl/test_tasks.py) and without one (stdin).
. "$(dirname "$0")/lib.sh"
need_cmd python3
need_cmd taskset
TMPDIR=$TMP timeout -k 5 150 python3 "$E2E_DIR/repl/test_tasks.py"
check "through a pty: every check passed" 0 $?

# without a terminal: the same rules, read from stdin
cat >"$TMP/tasks.lua" <<'LUA'
function try(q, n)
  local b = surge.pool{ template = surge.proto.udp{ size = 60 } }:burst(32)
  for i = 1, n / 32 do b:alloc(); q:send(b) end
  return n
end
a = launch(try, surge.port(0):txq(0), 3200)
print("waited", a:wait(), a:state())
print("again", a:wait(), a:state())
tasks()
print("cleared", tasks("clear"))
tasks()
LUA
run_surge 60 repl --no-huge --stats-interval 0 --vdev net_ring0 < "$TMP/tasks.lua"
check "stdin: exit 0" 0 "$RC"
check_match "stdin: a typed plain pool sends over net_ring; state after wait is done" $'^waited\t3200\tdone$' "$OUT"
check_match "stdin: waiting again gives the same value" $'^again\t3200\tdone$' "$OUT"
check_match "stdin: the waited task is listed, done" '^[0-9]+ +try +done +-' "$OUT"
check_match "stdin: tasks(\"clear\") dropped it" $'^cleared\t1$' "$OUT"
check_match "stdin: then no tasks" '^no tasks$' "$OUT"
check_pools "repl tasks < file"
check_no_crash "repl tasks < file"
finish
