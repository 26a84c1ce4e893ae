#!/bin/bash
# test_metrics_prometheus.sh - `--metrics` (core/report/metrics.c) read by real
# peers: Debian's Prometheus server (its own config and data folder, on
# 127.0.0.1, scrape_interval 1s) scrapes a running surge for about 10 s; the
# sender stops 11 s into the 15 s run, so Prometheus's last scrapes are of
# the final counts: its query API then gives surge_tx_packets_total, the
# custom counter and the latency histogram's count equal to surge's summary
# and results file, a histogram_quantile(0.5) within one bucket of the
# results file's p50, and the custom gauge. promtool checks the text format; concurrent scrapes, a
# scrape during the stop and requests other than GET /metrics (refused) leave
# the run whole (exit 0, summary, every pool full). Bad --metrics values and
# a port in use fail before EAL with one line naming --metrics, exit 2.
# `surge repl --metrics` serves the prompt's counters too.
# Counts and values are checked, never speed.
. "$(dirname "$0")/lib.sh"
need_cmd prometheus
need_cmd promtool
need_cmd curl
need_cmd python3
SCRIPT=$E2E_DIR/results/live.lua
# counter names with "." and "-" (as surge_script_rx_seen_total ...), a gauge
OPTS=(--rate 20kpps --rx-name rx.seen --tx-name tx-sent --gauge queue.depth)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# --- refusals before EAL ------------------------------------------------------
for spec in x 65536 localhost:9100 ::1:9100 "[::1]" 1.2.3:80; do
  run_surge 20 run --no-huge --metrics "$spec" "$SCRIPT"
  check "--metrics '$spec': exit 2" 2 "$RC"
  check "--metrics '$spec': one line naming the option" \
    "surge: option --metrics: '$spec' is not [ADDR:]PORT with a numeric address (try 9100, 127.0.0.1:9100, 0.0.0.0:9100, [::1]:9100)" \
    "$ERR$OUT"
done
BUSY=$(free_port)
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(1); print("up", flush=True); time.sleep(60)' \
  "$BUSY" >"$TMP/busy.out" &
BPID=$!
on_exit "kill $BPID"
wait_for_text "$TMP/busy.out" '^up$' 10
run_surge 20 run --no-huge --metrics "127.0.0.1:$BUSY" --vdev net_ring_mb0 "$SCRIPT"
check "a port in use: exit 2" 2 "$RC"
check "a port in use: one line naming --metrics" "surge: --metrics 127.0.0.1:$BUSY: Address already in use" "$ERR$OUT"
check_no_runtime_dir "a port in use: before EAL" "$SURGE_PID"
kill "$BPID" 2>/dev/null

# --- a run scraped by Prometheus ---------------------------------------------
PPORT=$(free_port)
# sends for 11 s of the 15: the last 4 s are quiet, scraped at least twice
"$SURGE" run --no-huge --metrics 0 --vdev net_ring_m0 --lcores '(0-1)@(0-1)' --duration 15 \
  --output "$TMP/run.json" "$SCRIPT" "${OPTS[@]}" --send-for 11 >"$TMP/run.out" 2>"$TMP/run.err" &
SPID=$!
on_exit "kill -KILL $SPID"
check_true "the start-up line names the endpoint" "$(head -3 "$TMP/run.out")" \
  wait_for_text "$TMP/run.out" '^surge: metrics: http://127\.0\.0\.1:[0-9]+/metrics$' 20 "$SPID"
MPORT=$(sed -n 's|^surge: metrics: http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$TMP/run.out" | head -1)
URL=http://127.0.0.1:${MPORT:-1}/metrics
wait_for_text "$TMP/run.out" 'TX +[0-9.]+ Mpps' 20 "$SPID"

mkdir -p "$TMP/prom"
cat >"$TMP/prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: surge
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
EOF
prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
  --web.listen-address="127.0.0.1:$PPORT" >"$TMP/prom/log" 2>&1 &
PROM=$!
on_exit "kill $PROM"

# while Prometheus scrapes: what else may come, refused or served in parallel
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "POST /metrics refused" 405 "$(code -X POST --data x "$URL")"
check "PUT /metrics refused" 405 "$(code -X PUT --data x "$URL")"
check "HEAD /metrics refused" 405 "$(code -I "$URL")"
check "the refusal says what is allowed" "Allow: GET" "$(curl -s -D - -o /dev/null -X DELETE "$URL" | tr -d '\r' | grep '^Allow:')"
check "GET / refused" 404 "$(code "http://127.0.0.1:$MPORT/")"
check "GET /metrics/x refused" 404 "$(code "$URL/x")"
check "GET /metricsx refused" 404 "$(code "${URL}x")"
GARBAGE=$(python3 - "$MPORT" <<'PY'
import socket, sys
out = []
for req in (b"BLAH\r\n\r\n", b"GET /metrics HTTP/9.9\r\n\r\n", b"\x00\xff\x13garbage\r\n\r\n",
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    s.sendall(req)
    try:
        line = s.recv(4096).split(b"\r\n")[0].decode(errors="replace")
    except OSError as e:
        line = "error %s" % e
    s.close()
    out.append(line.split(" ")[1] if line.startswith("HTTP/") else "closed")
print(" ".join(out))
PY
)
check_match "garbage requests refused (4xx/5xx or closed)" '^((4[0-9][0-9]|505|closed) ?){4}$' "$GARBAGE"
# a client that connects and says nothing holds no one else back
python3 -c 'import socket,sys,time; s=socket.create_connection(("127.0.0.1",int(sys.argv[1]))); time.sleep(6)' "$MPORT" &
on_exit "kill $!"
curl -s "$URL" >"$TMP/plain.txt"
PROMTOOL=$(promtool check metrics <"$TMP/plain.txt" 2>&1)
check "promtool check metrics: valid, no lint" "0:" "$?:$PROMTOOL"
check "the text format's content type" "text/plain; version=0.0.4; charset=utf-8" \
  "$(curl -s -D - -o /dev/null "$URL" | tr -d '\r' | sed -n 's/^Content-Type: //p')"
# OpenMetrics when asked (Prometheus asks): 40 at once, each whole
PIDS=()
for i in $(seq 1 40); do
  curl -s -m 10 -H 'Accept: application/openmetrics-text; version=1.0.0' -o "$TMP/om.$i" -w '%{http_code}\n' "$URL" >"$TMP/code.$i" &
  PIDS+=($!)
done
wait "${PIDS[@]}"
wait_codes() { local i; for i in $(seq 1 40); do cat "$TMP/code.$i"; done | sort | uniq -c | awk '{print $2 "x" $1}'; }
check "40 concurrent scrapes answered" "200x40" "$(wait_codes)"
WHOLE=0
for i in $(seq 1 40); do [ "$(tail -1 "$TMP/om.$i")" = "# EOF" ] && grep -q '^surge_tx_packets_total{port="0",queue="0"} [0-9]' "$TMP/om.$i" && WHOLE=$((WHOLE + 1)); done
check "each OpenMetrics answer whole (# EOF last)" 40 "$WHOLE"

wait "$SPID"
RC=$?
OUT=$(cat "$TMP/run.out")
ERR=$(cat "$TMP/run.err")
SURGE_PID=$SPID
check "the scraped run: exit 0" 0 "$RC"
check_match "the scraped run: summary" '^surge: summary over' "$OUT"
check_pools "the scraped run"
check_no_crash "the scraped run"
sleep 1.5   # Prometheus sees the target gone

q() {  # q PROMQL: the first value of an instant query
  curl -s -G "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'
}
SCRAPES=$(q 'count_over_time(up{job="surge"}[1m])')
UPS=$(q 'sum_over_time(up{job="surge"}[1m])')
check_true "Prometheus scraped about 10 s ($UPS good of $SCRAPES scrapes)" "$(tail -5 "$TMP/prom/log")" \
  test "${UPS%.*}" -ge 8 2>/dev/null
TX=$(summary_count "$OUT" 0 TX)
PTX=$(q 'last_over_time(surge_tx_packets_total{port="0",queue="0"}[1m])')
check "the last surge_tx_packets_total is the summary's TX (quiet tail)" "$TX" "$PTX"
CTX=$(sed -n 's/^ *counters: .*tx-sent \([0-9]*\).*/\1/p' <<<"$OUT" | tail -1)
check "the last custom counter tx-sent is its final count" "$CTX" "$(q 'last_over_time(surge_script_tx_sent_total[1m])')"
check_true "the task sent in the run ($CTX frames)" "" test "${CTX:-0}" -gt 100000
check "the custom gauge queue.depth" 42.5 "$(q 'last_over_time(surge_script_queue_depth[1m])')"
check "the run's info metric" 1 "$(q 'last_over_time(surge_run_info{command="run",script="'"$SCRIPT"'"}[1m])')"
PROBES=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["latency"][0]["probes"])' "$TMP/run.json")
check "the last histogram count is the results file's probes" "$PROBES" \
  "$(q 'last_over_time(surge_latency_seconds_count{receiver="0"}[1m])')"
P50=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["latency"][0]["p50_ns"] / 1e9)' "$TMP/run.json")
PQ=$(q 'histogram_quantile(0.5, last_over_time(surge_latency_seconds_bucket{receiver="0"}[1m]))')
# the same probes in 8 buckets an octave: Prometheus interpolates inside
# the bucket that holds surge's p50, at most its width (2^(1/8), 9.05 %) away
check_true "histogram_quantile(0.5) $PQ s within one bucket of surge's p50 $P50 s" "" \
  awk -v a="$PQ" -v b="$P50" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "none" && b > 0 && d <= 0.0905 * b) }'
kill "$PROM" 2>/dev/null

# --- scrapes through the stop ---------------------------------------------------
RUNS=4
GOOD=0
ANSWERED=0
for i in $(seq 1 $RUNS); do
  "$SURGE" run --no-huge --metrics 0 --vdev net_ring_ms$i --lcores '(0-1)@(0-1)' --duration 1.5 \
    "$SCRIPT" "${OPTS[@]}" >"$TMP/stop.out" 2>&1 &
  SP=$!
  wait_for_text "$TMP/stop.out" '^surge: metrics: http://' 20 "$SP"
  SU=$(sed -n 's|^surge: metrics: \(http://.*\)$|\1|p' "$TMP/stop.out" | head -1)
  while kill -0 "$SP" 2>/dev/null; do
    PIDS=()
    for _ in 1 2 3 4; do curl -s -m 5 -o /dev/null -w '%{http_code} %{time_total}\n' "$SU" >>"$TMP/stop.codes.$i" & PIDS+=($!); done
    wait "${PIDS[@]}"
  done
  wait "$SP"
  RC=$?
  OUT=$(cat "$TMP/stop.out")
  if grep -q '^200 ' "$TMP/stop.codes.$i"; then ANSWERED=$((ANSWERED + 1)); else
    echo "--- run $i: no scrape answered; HTTP code and seconds of each, in order:"
    tr '\n' ' ' <"$TMP/stop.codes.$i"; echo; tail -5 <<<"$OUT"; fi
  if [ "$RC" = 0 ] && grep -q '^surge: summary over' <<<"$OUT" &&
     grep -Eq '^surge: pool [0-9]+: ([0-9]+) of \1 mbufs back, no leak$' <<<"$OUT" &&
     ! grep -Ev '^surge: pool [0-9]+: ([0-9]+) of \1 mbufs back, no leak$' <<<"$OUT" | grep -q '^surge: pool' &&
     ! grep -Eq "$CRASH_RE" <<<"$OUT"; then
    GOOD=$((GOOD + 1))
  else
    echo "--- run $i: exit $RC"; tail -8 <<<"$OUT"
  fi
  rm -rf "/var/run/dpdk/surge-$SP"
done
check "runs stopping under scrapes: exit 0, summary, every pool full" "$RUNS" "$GOOD"
check "the scrapes were answered in every run" "$RUNS" "$ANSWERED"

# --- the prompt --------------------------------------------------------------
RP=$(free_port)
cat >"$TMP/session.lua" <<EOF
surge.counter("typed"):add(7)
surge.gauge("level"):set(-3)
os.execute("curl -s http://127.0.0.1:$RP/metrics > $TMP/repl.txt")
EOF
run_surge 60 repl --no-huge --stats-interval 0 --metrics "127.0.0.1:$RP" <"$TMP/session.lua"
check "repl --metrics: exit 0" 0 "$RC"
REPL=$(cat "$TMP/repl.txt" 2>/dev/null)
check_match "repl --metrics: the info metric says repl" '^surge_run_info\{.*command="repl"' "$REPL"
check_match "repl --metrics: the typed counter" '^surge_script_typed_total 7$' "$REPL"
check_match "repl --metrics: the typed gauge" '^surge_script_level -3$' "$REPL"
check_no_crash "repl --metrics"
finish
