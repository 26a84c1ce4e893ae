#!/bin/bash
# test_results.sh - `surge run --output FILE` (lua/surge/results/init.lua,
# core/report/series.c, core/control/counters.c): JSON files of several kinds of run are
# valid against docs/results.schema.json and their numbers agree with each
# other, with the text summary and with the driver's own counters
# (results/check_results.py); CSV reads back with python's csv module; a
# run ended by SIGINT or by a failing task still writes a valid file that
# says so; custom counters add up across tasks; `--output -` puts the JSON
# alone on stdout.
. "$(dirname "$0")/lib.sh"
need_cmd python3
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema not installed"
HERE=$E2E_DIR/results
SCHEMA=$SURGE_SRC/docs/results.schema.json
CHECK="python3 $HERE/check_results.py"

results_ok() {  # results_ok DESCRIPTION FILE EXPECTATIONS...
  local d=$1 f=$2 out
  shift 2
  if out=$($CHECK "$f" "$SCHEMA" "$@" 2>&1); then echo "ok   $d: $(printf '%s\n' "$out" | grep -c '^ok') checks in check_results.py"
  else echo "FAIL $d:"; printf '%s\n' "$out" | grep -v '^ok'; FAILS=$((FAILS + 1)); fi
}
# interrupt_after OUTFILE REGEX SECONDS SURGE-ARGS...: surge in the background
# (output in OUTFILE), SIGINT SECONDS after REGEX shows up; RC its status
interrupt_after() {
  local out=$1 re=$2 after=$3 pid
  shift 3
  timeout -k 5 60 "$SURGE" "$@" >"$out" 2>&1 &
  pid=$!
  on_exit "kill -KILL $pid"
  if wait_for_text "$out" "$re" 30 "$pid"; then
    sleep "$after"
    kill -INT "$(pgrep -P "$pid" | head -1)"
  fi
  wait "$pid"
  RC=$?
}
jq_py() {  # jq_py FILE EXPR: prints the python expression over the results `r`
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"
}

# (a) a flood: 1.2 s, a line every 0.2 s -> at least 5 intervals
run_surge 30 run --no-huge --duration 1.2 --stats-interval 0.2 --output "$TMP/flood.json" "$EXAMPLES/udp-flood.lua"
check "flood: exit 0" 0 "$RC"
results_ok "flood" "$TMP/flood.json" status=ok min_intervals=5 device_tx=1
check "flood: JSON tx == text summary tx" "$(summary_count "$OUT" 0 TX)" \
  "$(jq_py "$TMP/flood.json" 'r["summary"]["ports"][0]["tx_packets"]')"
check "flood: metadata names the script options and devices" "60 net_null" \
  "$(jq_py "$TMP/flood.json" 'str(r["metadata"]["script_options"]["size"]) + " " + r["metadata"]["devices"][0]["driver"]')"
check_match "flood: metadata versions" '^0\.[0-9.]+ DPDK 22\.11.* LuaJIT 2\.1' \
  "$(jq_py "$TMP/flood.json" '" ".join(r["metadata"][k] for k in ("surge_version","dpdk_version","luajit_version"))')"
# the commit the binary was built from (written at every build, not only
# when cmake configured): HEAD's, with -dirty when the tree had edits
if HEAD=$(git -C "$SURGE_SRC" rev-parse --short=12 HEAD 2>/dev/null); then
  check "flood: metadata git_commit is HEAD's" "$HEAD" \
    "$(jq_py "$TMP/flood.json" 'r["metadata"]["git_commit"].replace("-dirty", "")')"
fi
check "flood: the command line is recorded" "--output" \
  "$(jq_py "$TMP/flood.json" '[a for a in r["metadata"]["command_line"] if a.startswith("--out")][0]')"

# (b) CSV of the same kind of run: header, one row per interval and port
run_surge 30 run --no-huge --duration 1.2 --stats-interval 0.2 --output "$TMP/flood.csv" "$EXAMPLES/udp-flood.lua" --count 3000000
check "csv: exit 0" 0 "$RC"
CSV=$(python3 - "$TMP/flood.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = "t,interval_s,port,tx_packets,tx_bytes,tx_pps,tx_bps_l2,tx_bps_l1,rx_packets,rx_bytes,rx_pps,rx_bps_l2,rx_bps_l1,drops,unsent,idle_pct"
ok = list(rows[0].keys()) == cols.split(",")
# one row per 0.2 s interval up to the end: each but the last 0.2 s long,
# the last one the rest of the run. The monitor samples when it wakes, so a
# run that ends just after a tick was due may end with that tick merged into
# the final row (0.201 s under ASan): up to an interval plus sampling slack,
# never two intervals (a missing row)
t_end = float(rows[-1]["t"])
ivals = [float(r["interval_s"]) for r in rows]
n_ok = (all(abs(i - 0.2) < 0.05 for i in ivals[:-1]) and 0 < ivals[-1] < 0.25
        and abs(sum(ivals) - t_end) < 1e-3)
print(ok, n_ok or "rows %d for %.3f s" % (len(rows), t_end), sum(int(r["tx_packets"]) for r in rows),
      all(abs(float(r["tx_pps"]) * float(r["interval_s"]) - int(r["tx_packets"])) <= 1 + 1e-6 * int(r["tx_packets"]) for r in rows))
PY
)
check "csv: columns, rows, tx sum == --count, pps * interval == packets" "True True 3000000 True" "$CSV"

# (c) latency through a ring loopback: histogram counts == probes received
run_surge 60 run --no-huge --lcores '(0-1)@(0-1)' --output "$TMP/lat.json" "$EXAMPLES/latency.lua" --seconds 1 --rate 200kpps
check "latency: exit 0" 0 "$RC"
results_ok "latency" "$TMP/lat.json" status=ok device_tx=1 device_rx=1
check "latency: one receiver, its probes == the printed count, lost 0" "1 0 True" \
  "$(jq_py "$TMP/lat.json" 'len(r["latency"]), r["latency"][0]["lost"], r["latency"][0]["probes"] > 100' | tr -d '(),')"
TXT=$(printf '%s\n' "$OUT" | grep -oE 'probes [0-9]+ .* p99 [0-9.]+' | sed -E 's/probes ([0-9]+) .* p99 ([0-9.]+)/\1 \2/')
check "latency: probes and p99 (us) in the file == the text line" "$TXT" \
  "$(jq_py "$TMP/lat.json" '"%d %.2f" % (r["latency"][0]["probes"], r["latency"][0]["p99_ns"] / 1000)')"

# (d) custom counters from two tasks and a results table from master
run_surge 30 run --no-huge --lcores '(0-2)@(0-1)' --stats-interval 0.1 --output "$TMP/cnt.json" "$HERE/counters.lua" --count 100000
check "counters: exit 0" 0 "$RC"
results_ok "counters" "$TMP/cnt.json" status=ok device_tx=1
check "counters: counter sent == both tasks, bursts, gauge == 1.5 + 2.5" "200000 6250 4 2" \
  "$(jq_py "$TMP/cnt.json" '" ".join(str(c["value"]) for c in r["counters"]) + " " + str([c for c in r["counters"] if c["name"]=="level"][0]["lcores"])')"
check "counters: the summary line shows them" "       counters: sent 200000, bursts 6250, level 4" \
  "$(printf '%s\n' "$OUT" | grep 'counters:' | tail -1)"
check "counters: series of the counter ends at the total" "200000" \
  "$(jq_py "$TMP/cnt.json" '[c for c in r["series"]["counters"] if c["name"]=="sent"][-1]["value"]')"
check "counters: master's table is under scenarios.demo" "[100000, 100000] from master" \
  "$(jq_py "$TMP/cnt.json" 'str(r["scenarios"]["demo"]["sent"]) + " " + r["scenarios"]["demo"]["note"]')"

# (d2) a run in two phases (a scenario's trials): the series covers both and the summary's duration is the whole run
run_surge 60 run --no-huge --stats-interval 0.1 --output "$TMP/phases.json" "$HERE/phases.lua" --count 200000
check "phases: exit 0" 0 "$RC"
results_ok "phases" "$TMP/phases.json" status=ok min_intervals=10 device_tx=1
check "phases: the queue's pacer figures (target, achieved, error)" "400000.0 True True" \
  "$(jq_py "$TMP/phases.json" '(lambda q: "%.1f %s %s" % (q["target_pps"], q["achieved_pps"] > 0, abs(q["error_pct"] - (q["achieved_pps"] - q["target_pps"]) * 100 / q["target_pps"]) < 1e-9))([x for x in r["summary"]["queues"] if x["dir"] == "tx"][0]["rate"])')"
check "phases: both phases in the file" 400000 "$(jq_py "$TMP/phases.json" 'r["summary"]["ports"][0]["tx_packets"]')"
check "phases: duration spans both (> 0.8 s) and matches the text summary" "True $(printf '%s\n' "$OUT" | sed -nE 's/^surge: summary over ([0-9.]+) s$/\1/p')" \
  "$(jq_py "$TMP/phases.json" '"%s %.3f" % (r["summary"]["duration_s"] > 0.8, r["summary"]["duration_s"])')"

# (d3) a scenario: its results under scenarios.NAME, the counts its own
# (every frame back through the ring)
run_surge 60 run --no-huge --stats-interval 0.1 --lcores '(0-1)@(0-1)' --vdev net_ring0 --output "$TMP/scn.json" \
  flood --sizes 64 --trial 0.3 --settle 0.05
check "scenario: exit 0" 0 "$RC"
results_ok "scenario flood" "$TMP/scn.json" status=ok device_tx=1 device_rx=1
check "scenario: scenarios.flood sent == received == the port's tx, no loss" "True True 0" \
  "$(jq_py "$TMP/scn.json" '(lambda f, p: "%s %s %s" % (f["sent"] > 0, f["sent"] == f["received"], f["loss_pct"]))(r["scenarios"]["flood"], r["summary"]["ports"][0])')"

# (d4) a scenario stopped by SIGINT in its second test: status interrupted,
# exit 0, the throughput it had found kept and marked partial
interrupt_after "$TMP/scnint.out" 'throughput trial +1 .* loss' 0.5 run --no-huge --stats-interval 0 \
  --lcores '(0-1)@(0-1)' --vdev net_ring0 --output "$TMP/scnint.json" rfc2544 --sizes 64,128 --max-rate 100kpps \
  --trial 0.5
check "scenario sigint: exit 0" 0 "$RC"
results_ok "scenario sigint" "$TMP/scnint.json" status=interrupted signal=2 device_tx=1
check "scenario sigint: the 64 B throughput is kept, marked partial" "True 64 True" \
  "$(jq_py "$TMP/scnint.json" '(lambda s: "%s %d %s" % (s["partial"], s["rows"][0]["frame_size"], s["rows"][0]["throughput_pps"] > 0))(r["scenarios"]["rfc2544"])')"
check_match "scenario sigint: says the results are partial" '^rfc2544: the run was stopped .*: the results so far are partial$' \
  "$(cat "$TMP/scnint.out")"

# (e) stopped by SIGINT: still a valid file, status interrupted, signal 2
interrupt_after "$TMP/int.out" 'TX +[0-9.]+ Mpps' 0.3 run --no-huge --stats-interval 0.2 --output "$TMP/int.json" \
  "$EXAMPLES/udp-flood.lua"
check "sigint: exit 0" 0 "$RC"
results_ok "sigint" "$TMP/int.json" status=interrupted signal=2 device_tx=1

# (f) a task fails: the file says failed, with the error's file:line
run_surge 30 run --no-huge --lcores '(0-2)@(0-1)' --output "$TMP/fail.json" "$E2E_DIR/scripts/task_error.lua"
check "task error: exit 1" 1 "$RC"
results_ok "task error" "$TMP/fail.json" status=failed 'error_re=task_error\.lua:[0-9]+: boom'
check "task error: exit_code 1 in the file" 1 "$(jq_py "$TMP/fail.json" 'r["exit_code"]')"

# (g) --output -: stdout is the JSON alone, the text goes to stderr
run_surge 30 run --no-huge --duration 0.5 --output - "$EXAMPLES/udp-flood.lua"
check "stdout: exit 0" 0 "$RC"
printf '%s\n' "$OUT" >"$TMP/stdout.json"
results_ok "stdout JSON" "$TMP/stdout.json" status=ok
check_match "stdout: the summary went to stderr" 'summary over' "$ERR"

# (h) a bad file name is refused before anything starts
run_surge 10 run --no-huge --output "$TMP/x.txt" "$EXAMPLES/udp-flood.lua"
check "bad --output: exit 2" 2 "$RC"
check_match "bad --output: names the option" "option --output: '.*x.txt' must end in .json or .csv" "$ERR"
run_surge 30 run --no-huge --duration 0.2 --output /nonexistent/dir/r.json "$EXAMPLES/udp-flood.lua"
check "unwritable --output: exit 1" 1 "$RC"
check_match "unwritable --output: says why" '--output /nonexistent/dir/r.json: .*No such file' "$ERR"
finish
