#!/bin/bash
# test_plot.sh - `surge plot FILE.json` (lua/surge/results/plot.lua, gnuplot): the
# SVG of a flood run holds the port's rate chart with TX and RX series of
# one point per interval in the file; a latency run adds the receiver's CDF
# with one step per histogram bucket; RFC 2544 and load-latency scenario
# tables get their charts; -o OUT.png gives a PNG; no EAL is started; a
# missing gnuplot, a missing file and a file that is not results each give
# one clear line; a hostile results file (a newline and a gnuplot command in
# any string that is drawn) is drawn and runs nothing; the temporary folder
# is made in $TMPDIR and removed.
. "$(dirname "$0")/lib.sh"
need_cmd gnuplot
need_cmd python3
SERIES="python3 $E2E_DIR/results/svg_series.py"
jq_py() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

run_surge 30 run --no-huge -q --duration 1.2 --stats-interval 0.2 --output "$TMP/flood.json" "$EXAMPLES/udp-flood.lua"
check "flood run: exit 0" 0 "$RC"
N=$(jq_py "$TMP/flood.json" 'len(r["series"]["ports"])')
run_surge 30 plot "$TMP/flood.json" -o "$TMP/flood.svg"
check "plot flood: exit 0" 0 "$RC"
check_match "plot flood: says what it drew" "wrote $TMP/flood.svg: port 0: rate over time \\($N points\\)" "$OUT"
check "plot flood: chart title" 1 "$(grep -c '<text>port 0: rate over time</text>' "$TMP/flood.svg")"
check "plot flood: TX and RX series, one point per interval ($N)" "TX	$N
RX	$N" "$($SERIES "$TMP/flood.svg")"
check "plot flood: no EAL (no runtime folder, no EAL lines)" "" "$(printf '%s\n' "$OUT$ERR" | grep -E 'EAL|telemetry')"

run_surge 60 run --no-huge -q --lcores '(0-1)@(0-1)' --output "$TMP/lat.json" "$EXAMPLES/latency.lua" --seconds 1 --rate 100kpps
check "latency run: exit 0" 0 "$RC"
B=$(jq_py "$TMP/lat.json" 'len(r["latency"][0]["buckets"]["count"])')
PORT=$(jq_py "$TMP/lat.json" 'r["series"]["ports"][0]["port"]')
NP=$(jq_py "$TMP/lat.json" 'len(r["series"]["ports"])')
run_surge 30 plot "$TMP/lat.json"
check "plot latency: default output next to the file" yes "$([ -s "$TMP/lat.svg" ] && echo yes || echo no)"
check "plot latency: rate and CDF series ($NP intervals, $B buckets)" "TX	$NP
RX	$NP
receiver 0	$B" "$($SERIES "$TMP/lat.svg")"
check "plot latency: CDF title" 1 "$(grep -c '<text>latency receiver 0: CDF (' "$TMP/lat.svg")"
# the CDF's axis spans whole decades around the buckets: both ends labelled
DECADES=$(python3 - "$TMP/lat.json" <<'PY'
import json, math, sys
h = json.load(open(sys.argv[1]))["latency"][0]["buckets"]["high_ns"]
lo = 10 ** math.floor(math.log10(max(h[0], 1)))
hi = max(10 ** math.ceil(math.log10(max(h[-1], 1))), 10 * lo)
print(lo, hi)
PY
)
check "plot latency: log-scale x axis labelled at $DECADES" "yes yes" \
  "$(for d in $DECADES; do grep -Eq "> ?$d</(tspan|text)>" "$TMP/lat.svg" && printf yes || printf no; done | sed 's/yesyes/yes yes/')"

# scenario tables, as RFC 2544 and a load-latency sweep hand them over
python3 - "$TMP/flood.json" "$TMP/scen.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["scenarios"] = {
  "rfc2544": {"rows": [{"frame_size": s, "throughput_pct": 100 - i, "p50_ns": 1000 + 10 * i, "p99_ns": 3000 + 100 * i}
                       for i, s in enumerate([64, 128, 256, 512, 1024, 1280, 1518])]},
  "load_latency": {"rows": [{"load_pct": l, "p50_ns": 500 + l, "p99_ns": 900 + 5 * l} for l in (10, 30, 50, 70, 90)]},
}
json.dump(r, open(sys.argv[2], "w"))
PY
run_surge 30 plot "$TMP/scen.json" -o "$TMP/scen.svg"
check "plot scenarios: exit 0" 0 "$RC"
check "plot scenarios: chart titles" "3" \
  "$(grep -cE '<text>(RFC 2544 throughput per frame size|RFC 2544 latency per frame size|load-latency curve)</text>' "$TMP/scen.svg")"
check "plot scenarios: series and points (scenarios by name)" "TX	$N
RX	$N
p50_ns	5
p99_ns	5
throughput_pct	7
p50_ns	7
p99_ns	7" "$($SERIES "$TMP/scen.svg")"

run_surge 30 plot "$TMP/lat.json" -o "$TMP/lat.png"
check "plot png: a PNG file" "PNG" "$(head -c 4 "$TMP/lat.png" | tail -c 3)"

run_surge 10 plot "$TMP/none.json"
check "missing file: exit 2" 2 "$RC"
check_match "missing file: says so, as surge plot" "^surge plot: cannot read .*none.json.: No such file" "$ERR"
echo '{"a": 1}' >"$TMP/other.json"
run_surge 10 plot "$TMP/other.json"
check_match "not a results file: says so" "is not a surge results file" "$ERR"
# a CSV results file, an empty file and files of the wrong shape: one line each,
# checked before anything is drawn (no Lua error from inside plot.lua)
run_surge 30 run --no-huge -q --duration 0.5 --stats-interval 0.2 --output "$TMP/run.csv" "$EXAMPLES/udp-flood.lua"
check "csv run: exit 0" 0 "$RC"
cd "$TMP" || exit 1
run_surge 10 plot run.csv
cd - >/dev/null || exit 1
check "CSV results file: exit 1, one line saying which file to plot" \
  "1 surge plot: run.csv: a CSV results file: plot the .json (--output run.json)" "$RC $ERR"
: >"$TMP/empty.json"
run_surge 10 plot "$TMP/empty.json"
check "empty file: exit 1, one line" "1 surge plot: $TMP/empty.json: empty file" "$RC $ERR"
while IFS='|' read -r body why; do
  printf '{"schema": "surge-results", %s}\n' "$body" >"$TMP/shape.json"
  run_surge 10 plot "$TMP/shape.json"
  check "shape $body: one line naming the field" \
    "1 surge plot: $TMP/shape.json: not as surge writes it: $why" "$RC $ERR"
done <<'EOF'
"series": {"ports": "x"}|series.ports is not a list
"series": [1, 2]|series is not an object
"series": {"ports": [{"port": 0, "t": 0.2, "tx_pps": "1", "rx_pps": 1}]}|series.ports[1].tx_pps is not a number
"series": {"ports": [7]}|series.ports[1] is not an object
"latency": {"id": 0}|latency is not a list
"latency": [{"id": 0, "buckets": {"count": [1], "high_ns": [10]}}]|latency[1].probes is not a number
"latency": [{"id": 0, "probes": 1, "p50_ns": 5, "p99_ns": 9, "buckets": {"count": 3}}]|latency[1].buckets.count is not a list
"scenarios": {"rfc2544": {"rows": [1, 2]}}|scenarios.rfc2544.rows[1] is not an object
"scenarios": {"mine": {"rows": [{"a": 1}], "plot": {"x": "a", "y": [3]}}}|scenarios.mine.plot.y[1] is not a field name or a list of them
"scenarios": [1]|scenarios is not an object
EOF
# a hostile results file: a results file is data, so a string in it (scenario
# name, plot title / xlabel / ylabel, a field name on an axis or in a key)
# with a newline and a gnuplot command after it is drawn with the newline as
# a space and runs nothing: no system(), no `set output` elsewhere. One field
# at a time (gnuplot stops at its first error, which would hide the next).
hostile() {  # hostile FIELD PAYLOAD OUT.json: the flood run's file plus one table
  python3 - "$TMP/flood.json" "$3" "$1" "$2" "$SURGE_SRC/docs/results.schema.json" <<'PY'
import json, sys
import jsonschema
src, dst, field, bad = sys.argv[1:5]
r = json.load(open(src))
name = bad if field == "name" else "mine"
x = bad if field == "x" else "load"
y = bad if field == "y" else "p99_ns"
plot = {"x": x, "y": [y]}
for k in ("title", "xlabel", "ylabel"):
    if field == k:
        plot[k] = bad
r["scenarios"] = {name: {"rows": [{x: v, y: 10 * v} for v in (1, 2, 3)], "plot": plot}}
jsonschema.validate(r, json.load(open(sys.argv[5])))
json.dump(r, open(dst, "w"))
PY
}
for field in name title xlabel ylabel x y; do
  for how in system output; do
    mark="$TMP/pwned_${field}_$how"
    case $how in
      system) bad="$field"$'\n'"system(\"touch $mark\")"$'\n#' ;;
      output) bad="$field'"$'\r\n'"unset multiplot; set output \"$mark\""$'\n'"plot 1"$'\n#' ;;
    esac
    hostile "$field" "$bad" "$TMP/hostile.json" || { check "hostile $field ($how): file made" 0 1; continue; }
    rm -f "$TMP/hostile.svg"
    run_surge 30 plot "$TMP/hostile.json" -o "$TMP/hostile.svg"
    check "hostile $field ($how): exit 0, nothing on stderr" "0 " "$RC $ERR"
    check "hostile $field ($how): no gnuplot command ran (no $mark)" no "$([ -e "$mark" ] && echo yes || echo no)"
    check "hostile $field ($how): the SVG drawn, the port's series and the table's" "TX	$N
RX	$N
$([ "$field" = y ] && printf '%s' "${bad//[$'\r\n']/ }" || echo p99_ns)	3" \
      "$($SERIES "$TMP/hostile.svg")"
    check "hostile $field ($how): one line on stdout" 1 "$(printf '%s\n' "$OUT" | wc -l)"
  done
done
# the title as drawn: the newline is a space, the text otherwise as it reads
hostile title $'two\nlines' "$TMP/hostile.json"
run_surge 30 plot "$TMP/hostile.json" -o "$TMP/hostile.svg"
check "hostile title: drawn on one line, the newline a space" 1 "$(grep -c '<text>two lines</text>' "$TMP/hostile.svg")"
check "hostile title: said on one line" "surge: wrote $TMP/hostile.svg: port 0: rate over time ($N points); two lines (3 points)" "$OUT"
# an output name with a control character: refused (it would be another file)
run_surge 10 plot "$TMP/flood.json" -o "$TMP/a"$'\n'"b.svg"
check "output name with a newline: exit 2, one line" "2 1" "$RC $(printf '%s\n' "$ERR" | wc -l)"
check_match "output name with a newline: says so" "the output's name has a control character" "$ERR"

# the temporary folder: made by mkdtemp in $TMPDIR, gone afterwards; a
# TMPDIR where none can be made gives one line
mkdir "$TMP/tmpd"
TMPDIR=$TMP/tmpd run_surge 30 plot "$TMP/flood.json" -o "$TMP/tmpd.svg"
check "TMPDIR: exit 0, the SVG drawn" "0 yes" "$RC $([ -s "$TMP/tmpd.svg" ] && echo yes || echo no)"
check "TMPDIR: nothing left behind in it" "" "$(ls -A "$TMP/tmpd")"
TMPDIR=$TMP/no-such-dir run_surge 30 plot "$TMP/flood.json" -o "$TMP/nodir.svg"
check "TMPDIR missing: exit 1, one line" \
  "1 surge plot: cannot make a temporary folder: $TMP/no-such-dir/surge-plot.XXXXXX: No such file or directory" "$RC $ERR"
check "TMPDIR missing: nothing drawn" no "$([ -e "$TMP/nodir.svg" ] && echo yes || echo no)"

ERR=$(timeout 10 env PATH=/nonexistent-r11 "$SURGE" plot "$TMP/lat.json" 2>&1)
check "no gnuplot: exit 1" 1 "$?"
check "no gnuplot: one line naming the package" "surge plot: gnuplot not found: install the Debian package gnuplot-nox" "$ERR"
finish
