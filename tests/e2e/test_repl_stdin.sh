#!/usr/bin/env bash
# test_repl_stdin.sh - `surge repl < file`: the prompt without a terminal,
# live stop and start on a net_ring loopback, and errors that leave the
# session going. Two senders and a receiver (on both ring queues) start from
# the prompt; one sender is stopped while the other keeps sending; a function
# typed at the prompt is launched as a task and sends exactly 10000 packets;
# a syntax error, a runtime error and a typed function failing in its task
# print one line each. At the end every packet sent was received.
. "$(dirname "$0")/lib.sh"

SESSION=$E2E_DIR/repl/ring_session.lua
run_surge 90 repl --no-huge --stats-interval 0 --lcores '(0-4)@(0-1)' --vdev net_ring0 \
  "$E2E_DIR/repl/flood.lua" < "$SESSION"
check "exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
check_nomatch "no prompt or editor output without a terminal" 'surge> ' "$OUT"
check_match "the stopped task ended, its result reported" "^task [0-9]+ 'tx' finished: \"sent\"" "$OUT"
check_match "the other sender kept sending after the stop" $'^other task moved\ttrue$' "$OUT"
check_match "stop(a) ended that task" $'^stopped task\tdone$' "$OUT"
check_match "the typed function ran as a task and sent 10000" "^task [0-9]+ 'burst_tx' finished: 10000$" "$OUT"
check "syntax error: one line" 1 "$(grep -c "^error: prompt:1: unexpected symbol near '='$" <<<"$OUT")"
check "runtime error: one line" 1 "$(grep -c "^error: prompt:1: attempt to call global 'nosuch' (a nil value)$" <<<"$OUT")"
check "typed function failing in its task: one line" 1 \
  "$(grep -c "^task [0-9]* 'boom' failed: prompt:1: typed failure (task 'boom', lcore [0-9]*)$" <<<"$OUT")"
check_match "the session went on after the errors" '^still here$' "$OUT"
check_match "tasks() lists the receiver still running" '^[0-9]+ +rx +running +[0-9]+' "$OUT"
tx=$(summary_count "$OUT" 0 TX)
check_true "packets were sent ($tx)" "" test "${tx:-0}" -gt 10000
check "TX == RX at the end" "$tx" "$(summary_count "$OUT" 0 RX)"
check_pools "repl < file"
check_no_crash "repl < file"

# exit() in the middle leaves at once; the rest of the file is not run
printf 'print("before")\nexit()\nprint("after")\n' >"$TMP/exit.lua"
run_surge 30 repl --no-huge --stats-interval 0 < "$TMP/exit.lua"
check "exit(): exit 0" 0 "$RC"
check_match "exit(): the lines before ran" '^before$' "$OUT"
check_nomatch "exit(): the lines after did not" '^after$' "$OUT"
# os.exit(N) typed: the session ends as exit() does, no error line, exit N
printf 'p = surge.port(0)\nprint("before")\nos.exit(3)\nprint("after")\n' >"$TMP/osexit.lua"
run_surge 30 repl --no-huge --stats-interval 0 < "$TMP/osexit.lua"
check "os.exit(3) typed: exit 3" 3 "$RC"
check_nomatch "os.exit(3) typed: no error line, the lines after not run" '^error|^after$' "$OUT$ERR"
check_match "os.exit(3) typed: the summary" '^surge: summary over' "$OUT"
# run -i: leaving with exit("wait") lets the task end on its own, exit()
# stops it; either way master goes on from surge.wait() with the results
cat >"$TMP/count.lua" <<'LUA'
local surge = require "surge"
function count(q, n)
  local pool = surge.pool{ template = surge.proto.udp{ size = 60 } }
  local b = pool:burst(32)
  q:set_rate("100kpps")
  local sent = 0
  while surge.running() and sent < n do b:alloc(math.min(32, n - sent)); sent = sent + q:send(b) end
  return sent
end
function configure(p)
  p:option("--n", "packets to send", "50000")
  p:flag("--one", "wait with surge.wait(id), for the one task")
end
function master(args)
  local id = surge.launch("count", surge.port(0):txq(0), tonumber(args.n))
  print("master got " .. (args.one and surge.wait(id) or surge.wait()[1]))
end
LUA
printf 'exit("wait")\n' >"$TMP/wait.lua"
run_surge 60 run -i --no-huge --stats-interval 0 --lcores '(0-1)@(0-1)' "$TMP/count.lua" < "$TMP/wait.lua"
check "run -i, exit(\"wait\"): exit 0" 0 "$RC"
check_match "run -i, exit(\"wait\"): the task ran to its end" '^master got 50000$' "$OUT"
printf 'watch(2)\nexit()\n' >"$TMP/stop.lua"
run_surge 60 run -i --no-huge --stats-interval 0 --lcores '(0-1)@(0-1)' "$TMP/count.lua" --n 1000000 < "$TMP/stop.lua"
check "run -i, exit(): exit 0" 0 "$RC"
check_match "run -i, watch(2) without a terminal prints rates" '^port 0  TX +[0-9.]+ Mpps' "$OUT"
got=$(sed -n 's/^master got //p' <<<"$OUT")
check_true "run -i, exit(): the task was stopped early ($got of 1000000)" "" test "${got:-1000000}" -lt 1000000
check_pools "run -i"
# the prompt opens at master's first wait of either form: surge.wait(id) too
printf 'print("at the prompt")\nexit("wait")\n' >"$TMP/one.lua"
run_surge 60 run -i --no-huge --stats-interval 0 --lcores '(0-1)@(0-1)' "$TMP/count.lua" --one < "$TMP/one.lua"
check "run -i, surge.wait(id): exit 0" 0 "$RC"
check_match "run -i, surge.wait(id): the prompt opened" '^at the prompt$' "$OUT"
check_match "run -i, surge.wait(id): then the wait returned the task's value" '^master got 50000$' "$OUT"

# A value with a broken __tostring or __index, or a strange error value: one
# line each, the session goes on (nothing here may end it or the run).
cat >"$TMP/bad.lua" <<'LUA'
setmetatable({}, {__tostring=function() error("x") end})
setmetatable({}, {__index=function() error("idx") end})
error(setmetatable({}, {__tostring=function() error("boom") end}))
{ [setmetatable({}, {__tostring=function() error("k") end})] = 1 }
error(setmetatable({}, {__tostring=function() return nil end}))
error()
surge.port(0):txq(0):set_rate(-1)
print("still here")
LUA
run_surge 30 repl --no-huge --stats-interval 0 < "$TMP/bad.lua"
check "broken values: exit 0" 0 "$RC"
check "broken values: one error line each" 7 "$(grep -c '^error: prompt:1: ' <<<"$OUT")"
check_match "broken __tostring of a result" '^error: prompt:1: x$' "$OUT"
check_match "broken __index of a result" '^error: prompt:1: idx$' "$OUT"
check_match "error value whose __tostring fails" '^error: prompt:1: error raised with a table \(its __tostring failed: prompt:1: boom\)' "$OUT"
check_match "error value whose __tostring gives nil" '^error: prompt:1: error raised with a table \(its __tostring gave nil\)' "$OUT"
check_match "error(): as guarantees.md says" '^error: prompt:1: error raised with no message \(nil\)$' "$OUT"
check_match "a misused call names the prompt's line" '^error: prompt:1: rate: .*expected a number >= 0, got -1$' "$OUT"
check_match "broken values: the session went on" '^still here$' "$OUT"

# SIGTERM (and SIGHUP) end a session whose typed code loops: the loop is
# interrupted, the tasks stop, the summary and the pool check follow, exit 0
printf 'a = launch("tx", surge.port(0):txq(0), "100kpps")\nprint("looping")\nwhile true do end\nprint("not reached")\n' >"$TMP/inf.lua"
for sig in TERM HUP; do
  timeout -k 5 30 bash -c 'echo $$ >"$0.pid"; exec "$@"' "$TMP/bg" "$SURGE" repl --no-huge --stats-interval 0 \
    --lcores '(0-1)@(0-1)' "$E2E_DIR/repl/flood.lua" <"$TMP/inf.lua" >"$TMP/bg.out" 2>&1 &
  BG=$!
  wait_for_text "$TMP/bg.out" '^looping$' 20 "$BG"
  sleep 0.5
  kill -$sig "$(cat "$TMP/bg.pid")"
  wait "$BG"
  RC=$?
  OUT=$(cat "$TMP/bg.out") ERR="" SURGE_PID=$(cat "$TMP/bg.pid")
  check "SIG$sig during a typed loop: exit 0" 0 "$RC"
  check_match "SIG$sig: the loop was interrupted" '^error: interrupted \(the run stopped\)$' "$OUT"
  check_nomatch "SIG$sig: the lines after it did not run" '^not reached$' "$OUT"
  check_nomatch "SIG$sig: no watchdog" 'still runs' "$OUT"
  check_match "SIG$sig: the summary" '^surge: summary over ' "$OUT"
  check_pools "SIG$sig during a typed loop"
done

# --output for a session: the results file of what was done at the prompt
cat >"$TMP/out.lua" <<'LUA'
p = surge.port(0)
launch("count", p:txq(0), 20000)
surge.sleep(0.3)
LUA
run_surge 60 repl --no-huge --lcores '(0-1)@(0-1)' --output "$TMP/repl.json" "$TMP/count.lua" < "$TMP/out.lua"
check "repl --output: exit 0" 0 "$RC"
check "repl --output: a valid results file with the session's packets" "ok 20000" "$(python3 - "$TMP/repl.json" \
  "$SURGE_SRC/docs/results.schema.json" 2>&1 <<'PY'
import json, sys
import jsonschema
d = json.load(open(sys.argv[1]))
jsonschema.validate(d, json.load(open(sys.argv[2])))
print(d["status"], d["summary"]["ports"][0]["tx_packets"])
PY
)"

# scenarios run at the prompt land in the session's results, however often
cat >"$TMP/scn.lua" <<'LUA'
flood = require "surge.scenario.flood"
a = flood.run{ tx = 0, sizes = "64", trial = 0.2, settle = 0.05 }
b = flood.run{ tx = 0, sizes = "128", trial = 0.2, settle = 0.05 }
print("sent", a.sent + b.sent)
LUA
run_surge 60 repl --no-huge --stats-interval 0 --lcores '(0-1)@(0-1)' --vdev net_ring0 --output "$TMP/scn.json" < "$TMP/scn.lua"
check "repl scenarios: exit 0" 0 "$RC"
SENT=$(sed -n 's/^sent\t//p' <<<"$OUT")
check "repl scenarios: both runs under scenarios (flood, flood#2), their sent adding up" "ok flood flood#2 ${SENT:-none}" \
  "$(python3 - "$TMP/scn.json" "$SURGE_SRC/docs/results.schema.json" 2>&1 <<'PY'
import json, sys
import jsonschema
d = json.load(open(sys.argv[1]))
jsonschema.validate(d, json.load(open(sys.argv[2])))
s = d["scenarios"]
print(d["status"], " ".join(sorted(s)), sum(v["sent"] for v in s.values()))
PY
)"
# long lines: 70 000 and 100 000 characters run whole (never cut at 64 KiB);
# one over 1 MiB is refused with one line and nothing of it runs
python3 - "$TMP/long.lua" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('p = surge.port(0)\n')
    f.write('x = "' + "a" * 70000 + '"\nprint("len", #x)\n')
    f.write('x = "' + "a" * 100000 + '"\nprint("len", #x)\n')
    f.write('y = 1; z = "' + "b" * (1 << 20) + '"\nprint("after", y, z)\n')
PY
run_surge 60 repl --no-huge --stats-interval 0 < "$TMP/long.lua"
check "long lines: exit 0" 0 "$RC"
check_match "a 70000-character line runs whole" $'^len\t70000$' "$OUT"
check_match "a 100000-character line runs whole" $'^len\t100000$' "$OUT"
check "a line over 1 MiB: one error line naming the limit" 1 \
  "$(grep -c '^error: the line is longer than the 1048576 bytes a line may have: not run$' <<<"$OUT")"
check_match "a line over 1 MiB: nothing of it ran, the session went on" $'^after\tnil\tnil$' "$OUT"
check_match "long lines: the summary" '^surge: summary over' "$OUT"
check_no_crash "long lines"

finish
