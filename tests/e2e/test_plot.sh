#!/bin/bash
# test_plot.sh - `surge plot FILE.json` (lua/surge/results/plot.lua, gnuplot):
# one report-ready figure per file (OUT-rate.svg, OUT-latency.svg, ...), each
# read back as its reader sees it (tests/e2e/results/svg_report.py: the SVG's
# texts): a title, axis labels with units, ticks in human units (Mpps, us,
# no 1e+06), a key of human names (no raw JSON field names), the run's
# metadata in a footer, no text under 14 px; a flood run's rate chart holds
# each port's TX (offered) and RX (forwarded) on one chart with one point per
# interval; a latency run adds the percentile spectrum (log 1/(1-p) axis,
# one step per bucket); RFC 2544 and load-latency tables get their charts
# (two units on two labelled axes, a log x for log-spaced loads); a rate set
# at the prompt and a scenario's trials are recorded in the results file
# (events, schema-valid) and marked on the rate chart; -o OUT.png gives
# PNGs; docs/img's figures are what docs/img/make.sh draws now; no EAL is
# started; a missing gnuplot, a missing file and a file that is not results
# each give one clear line; a hostile results file (a newline and a gnuplot
# command in any string that is drawn) is drawn and runs nothing; the
# temporary folder is made in $TMPDIR and removed.
. "$(dirname "$0")/lib.sh"
need_cmd gnuplot
need_cmd python3
SERIES="python3 $E2E_DIR/results/svg_series.py"
REPORT="python3 $E2E_DIR/results/svg_report.py"
jq_py() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
# the parts of a figure's report: report FILE.svg KEY... (title, key, ...)
report() { local f=$1; shift; $REPORT "$f" | grep -E "^($(IFS='|'; echo "$*"))	"; }
# every figure of a report: fonts of 14 px or more, no raw field names or
# exponent ticks, the three footer lines of the run's metadata
report_ready() {  # report_ready WHAT FILE.svg RESULTS.json
  check "$1: no text under 14 px" yes "$($REPORT "$2" | awk -F'\t' '$1 == "smallest" { print ($2 >= 14 ? "yes" : $2) }')"
  check "$1: no raw field names or 1e+06 ticks" none "$(report "$2" raw | cut -f2)"
  check "$1: the run's metadata in the footer" "$(python3 - "$3" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metadata"]
print("footer\tsurge %s (%s) | started %s" % (m["surge_version"], m["git_commit"], m["start_time"]))
print("footer\tcommand: %s" % " ".join(m["command_line"])[:30])
d = m["devices"][0]
print("footer\tports: port %d %s (%s" % (d["port"], d["name"], d["driver"]))
PY
)" "$(report "$2" footer | sed -E '1s/(started [^ ]*).*/\1/; 2s/^(footer	command: .{30}).*/\1/; 3s/^(footer	ports: port [0-9]+ [^ ]+ \([^,)]*).*/\1/')"
}

run_surge 30 run --no-huge -q --duration 1.2 --stats-interval 0.2 --output "$TMP/flood.json" "$EXAMPLES/udp-flood.lua"
check "flood run: exit 0" 0 "$RC"
N=$(jq_py "$TMP/flood.json" 'len(r["series"]["ports"])')
run_surge 30 plot "$TMP/flood.json" -o "$TMP/flood.svg"
check "plot flood: exit 0" 0 "$RC"
check "plot flood: says what it drew, one line per file" \
  "surge: wrote $TMP/flood-rate.svg: Offered and forwarded load (TX and RX per port) ($N points)" "$OUT"
check "plot flood: one file per chart (-o names the stem)" "flood-rate.svg" "$(cd "$TMP" && ls flood*.svg)"
check "plot flood: title, axis labels with units, human names in the key" \
  "title	Offered and forwarded load (TX and RX per port)
ylabel	packet rate (packets/s)
xlabel	time since start (s)
key	port 0 TX (offered)
key	port 0 RX (forwarded)" "$(report "$TMP/flood-rate.svg" title ylabel xlabel key)"
check_match "plot flood: rate ticks in SI units (Mpps)" "^ticks y	0 [kMG]?pps, .*[0-9.]+ [kMG]pps$" "$(report "$TMP/flood-rate.svg" 'ticks y')"
check_match "plot flood: time ticks in s" "^ticks x	0 s, .* s$" "$(report "$TMP/flood-rate.svg" 'ticks x')"
report_ready "plot flood" "$TMP/flood-rate.svg" "$TMP/flood.json"
check "plot flood: TX and RX series, one point per interval ($N)" "port 0 TX (offered)	$N
port 0 RX (forwarded)	$N" "$($SERIES "$TMP/flood-rate.svg")"
check "plot flood: no EAL (no runtime folder, no EAL lines)" "" "$(printf '%s\n' "$OUT$ERR" | grep -E 'EAL|telemetry')"

run_surge 60 run --no-huge -q --lcores '(0-1)@(0-1)' --output "$TMP/lat.json" "$EXAMPLES/latency.lua" --seconds 1 --rate 100kpps
check "latency run: exit 0" 0 "$RC"
B=$(jq_py "$TMP/lat.json" 'len(r["latency"][0]["buckets"]["count"])')
P=$(jq_py "$TMP/lat.json" 'r["latency"][0]["probes"]')
PORT=$(jq_py "$TMP/lat.json" 'r["series"]["ports"][0]["port"]')
NP=$(jq_py "$TMP/lat.json" 'len(r["series"]["ports"])')
run_surge 30 plot "$TMP/lat.json"
check "plot latency: default output next to the file, one per chart" "lat-latency.svg lat-rate.svg" \
  "$(cd "$TMP" && ls lat-*.svg | tr '\n' ' ' | sed 's/ $//')"
check "plot latency: the rate of port $PORT ($NP intervals)" "port $PORT TX (offered)	$NP
port $PORT RX (forwarded)	$NP" "$($SERIES "$TMP/lat-rate.svg" | grep "^port $PORT ")"
# (the last bucket's level runs on to x = probes: no corner of its own)
check_match "plot latency: the spectrum, one step per bucket ($B), named with its probes" \
  "^receiver 0: $P probes, p99 [0-9.]+ [num]?s	$B$" "$($SERIES "$TMP/lat-latency.svg")"
check "plot latency: title and axis labels" "title	Latency by percentile
ylabel	latency (s)
xlabel	percentile" "$(report "$TMP/lat-latency.svg" title ylabel xlabel)"
# the percentile spectrum: x = 1/(1-p) on a log axis, a tick per nine up to
# the probes' decade (p = 1 - 1/probes is the last one the probes resolve)
NINES=$(python3 -c "import math; print(math.ceil(math.log10($P) - 1e-9))")
check "plot latency: percentile ticks on the log 1/(1-p) axis, up to $NINES nines" \
  "$(python3 -c "
n = $NINES
print('ticks x\t' + ', '.join(['50%'] + [('%.6f' % (100 - 100 / 10 ** k)).rstrip('0').rstrip('.') + '%' for k in range(1, n + 1)]))")" \
  "$(report "$TMP/lat-latency.svg" 'ticks x')"
check_match "plot latency: latency ticks in SI units (ns, us, ms)" "^ticks y	[0-9.]+ [num]?s(, [0-9.]+ [num]?s)+$" \
  "$(report "$TMP/lat-latency.svg" 'ticks y')"
report_ready "plot latency (spectrum)" "$TMP/lat-latency.svg" "$TMP/lat.json"

# scenario tables, as RFC 2544 and a load-latency sweep hand them over: a
# log-spaced load (10k .. 1M pps) on a log axis, an even one on a linear axis
python3 - "$TMP/flood.json" "$TMP/scen.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["scenarios"] = {
  "rfc2544": {"rows": [{"frame_size": s, "throughput_pct": 100 - i, "throughput_mpps": 14.88 * 84 / (s + 20) * (100 - i) / 100,
                        "p50_ns": 1000 + 10 * i, "p99_ns": 3000 + 100 * i}
                       for i, s in enumerate([64, 128, 256, 512, 1024, 1280, 1518])]},
  "load_latency": {"rows": [{"load_pps": l, "p50_ns": 500 + l / 1e3, "p99_ns": 900 + 5 * l / 1e3}
                            for l in (10e3, 30e3, 100e3, 300e3, 1e6)]},
  "load_latency#2": {"rows": [{"load_pct": l, "p50_ns": 500 + l, "p99_ns": 900 + 5 * l} for l in (10, 30, 50, 70, 90)]},
}
json.dump(r, open(sys.argv[2], "w"))
PY
run_surge 30 plot "$TMP/scen.json" -o "$TMP/scen.svg"
check "plot scenarios: exit 0" 0 "$RC"
check "plot scenarios: a file per chart, titled" "scen-rate.svg: Offered and forwarded load (TX and RX per port)
scen-load_latency-latency.svg: Latency against offered load
scen-load_latency_2-latency.svg: Latency against offered load
scen-rfc2544-throughput.svg: RFC 2544 throughput per frame size
scen-rfc2544-latency.svg: RFC 2544 latency per frame size" "$(sed -E "s|^surge: wrote $TMP/||; s| \([0-9]+ points\)$||" <<<"$OUT")"
check "plot scenarios: RFC 2544 throughput: % and Mpps on two labelled axes, the key saying which" \
  "ylabel	throughput (% of line rate)
y2label	throughput (packets/s)
xlabel	frame size (bytes)
key	throughput (left axis)
key	throughput (right axis)
ticks x	64 B, 128 B, 256 B, 512 B, 1024 B, 1518 B" \
  "$(report "$TMP/scen-rfc2544-throughput.svg" ylabel y2label xlabel key 'ticks x')"
check_match "plot scenarios: % ticks on the left, Mpps on the right" "^ticks y	0 %, .*100 %
ticks y2	0 Mpps, .* Mpps$" "$(report "$TMP/scen-rfc2544-throughput.svg" 'ticks y' 'ticks y2')"
check "plot scenarios: RFC 2544 latency: human names, us ticks" "ylabel	latency (s)
key	p50 (median)
key	p99" "$(report "$TMP/scen-rfc2544-latency.svg" ylabel key)"
check_match "plot scenarios: RFC 2544 latency ticks in us" "^ticks y	0 us, .* us$" "$(report "$TMP/scen-rfc2544-latency.svg" 'ticks y')"
check "plot scenarios: log-spaced loads on a log axis, a tick at each" "xlabel	offered load (packets/s)
ticks x	10 kpps, 30 kpps, 100 kpps, 300 kpps, 1 Mpps" "$(report "$TMP/scen-load_latency-latency.svg" xlabel 'ticks x')"
check_match "plot scenarios: evenly spaced loads on a linear axis" "^xlabel	offered load \(% of line rate\)
ticks x	10 %, 20 %, .*90 %$" "$(report "$TMP/scen-load_latency_2-latency.svg" xlabel 'ticks x')"
for f in rate load_latency-latency load_latency_2-latency rfc2544-throughput rfc2544-latency; do
  report_ready "plot scenarios ($f)" "$TMP/scen-$f.svg" "$TMP/scen.json"
done
check "plot scenarios: series and points" "throughput (left axis)	7
throughput (right axis)	7
p50 (median)	7
p99	7
p50 (median)	5
p99	5" "$(for f in rfc2544-throughput rfc2544-latency load_latency-latency; do $SERIES "$TMP/scen-$f.svg"; done)"

# the scenarios whose charts module draws them (scenario/mlrsearch/charts.lua,
# y1564/charts.lua) go through the same axes as the built-in ones: mlrsearch's
# bounds per size and trials, y1564's IR per step against CIR and CIR + EIR
# (issue 18 item 3: a module's chart had no name nor axes, and plot raised)
python3 - "$TMP/flood.json" "$TMP/mod.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["scenarios"] = {
  "mlrsearch": {"rows": [{"frame_size": s, "goal": g, "loss_ratio": l, "lower_bound_pps": b, "upper_bound_pps": b * 1.004,
                          "conditional_throughput_pps": b} for s, b in ((64, 41600), (512, 4920)) for g, l in (("NDR", 0), ("PDR", 0.005))],
                "trials": [{"frame_size": 64, "t_s": t, "load_pps": 41000 + 100 * t, "duration_s": 1, "loss_ratio": 0, "phase": 0}
                           for t in range(4)]},
  "y1564": {"services": [{"name": "voice", "cir_bps": 3e6, "eir_bps": 1e6}],
            "rows": [{"service": "voice", "step": st, "offered_bps": o, "ir_bps": min(o, 4.03e6)}
                     for st, o in (("25%", 0.75e6), ("50%", 1.5e6), ("75%", 2.25e6), ("100%", 3e6), ("cir+eir", 4e6),
                                   ("overshoot", 4.75e6), ("performance", 3e6))]},
}
json.dump(r, open(sys.argv[2], "w"))
PY
run_surge 30 plot "$TMP/mod.json" -o "$TMP/mod.svg"
check "plot module charts: exit 0" 0 "$RC"
check "plot module charts: a file per chart, titled (sorted)" "mod-mlrsearch-2.svg: MLRsearch trials over the search
mod-mlrsearch.svg: MLRsearch (RFC 9971): bounds per frame size
mod-rate.svg: Offered and forwarded load (TX and RX per port)
mod-y1564.svg: Y.1564 service voice: information rate per step" \
  "$(sed -E "s|^surge: wrote $TMP/||; s| \([0-9]+ points\)$||" <<<"$OUT" | LC_ALL=C sort)"
check "plot y1564: IR against the offer, CIR and CIR + EIR" "ylabel	information rate (bit/s)
xlabel	offered (bit/s)
key	delivered IR
key	CIR
key	CIR + EIR" "$(report "$TMP/mod-y1564.svg" xlabel ylabel key)"
check "plot y1564: a point per configuration step (not the performance test)" "delivered IR	6" \
  "$($SERIES "$TMP/mod-y1564.svg" | grep '^delivered IR')"
check_match "plot y1564: bit rate ticks" "^ticks y	0 Mbit/s, .*Mbit/s$" "$(report "$TMP/mod-y1564.svg" 'ticks y')"
for f in mlrsearch mlrsearch-2 y1564; do
  report_ready "plot module charts ($f)" "$TMP/mod-$f.svg" "$TMP/mod.json"
done
# a log axis from decade to decade has its ticks at both ends (gnuplot
# left out the one at an end lying exactly on it: 10 kpps)
check "plot mlrsearch trials: log load axis, a tick at each end" "ticks y	10 kpps, 100 kpps" \
  "$(report "$TMP/mod-mlrsearch-2.svg" 'ticks y')"

# the charts rfc2889, rfc3918 and rfc9693 declare (scenario/NAME/charts.lua,
# issue 30 item 4: they had none): rfc2889 one chart per switch test over the
# frame sizes (the rows of that test only), rfc3918 the join and leave delay
# per group and port, rfc9693 its searches' trials, passed apart from failed
python3 - "$TMP/flood.json" "$TMP/sw.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sizes = [64, 512, 1518]
line = {s: 1e9 / ((s + 20) * 8) for s in sizes}
r["scenarios"] = {
  "rfc2889": {"rows":
    [{"test": "forwarding", "frame_size": s, "offered_pps": line[s], "throughput_pps": 0.9 * line[s],
      "forwarding_rate_fps": 0.95 * line[s], "sender_limited": s == 64} for s in sizes] +
    [{"test": "address_caching", "frame_size": s, "capacity": 8192 - i} for i, s in enumerate(sizes)] +
    [{"test": "address_learning", "frame_size": s, "learning_rate_fps": 50000 + i} for i, s in enumerate(sizes)] +
    [{"test": "broadcast", "frame_size": s, "offered_pps": 1e5, "forwarding_rate_fps": 2e5,
      "latency_avg_us": 12 + i, "latency_max_us": 40 + i} for i, s in enumerate(sizes)] +
    [{"test": "congestion_control", "frame_size": s, "congested_loss_pct": 33.3, "uncongested_loss_pct": i}
     for i, s in enumerate(sizes)] +
    [{"test": "forward_pressure", "frame_size": s, "overload_offered_pps": line[s] * 1.01,
      "max_forwarding_rate_fps": line[s], "forwarding_rate_fps": line[s] * 0.99} for s in sizes]},
  "rfc3918": {"frame_size": 128, "rows": [
    {"test": "join_delay", "port": 1, "groups": 5, "join_delay_us": 30,
     "per_group": [{"group": "239.1.1.%d" % g, "delay_us": 20 + 3 * g} for g in range(1, 6)]},
    {"test": "join_delay", "port": 2, "groups": 5, "join_delay_us": 35,
     "per_group": [{"group": "239.1.1.%d" % g, "delay_us": 25 + 3 * g} for g in range(1, 6)]},
    {"test": "leave_delay", "port": 1, "groups": 5, "leave_delay_us": 300,
     "per_group": [{"group": "239.1.1.%d" % g, "delay_us": 290 + 5 * g} for g in range(1, 6)]},
    {"test": "throughput", "groups": 5, "throughput_pps": 81000, "forwarded_fps": 162000},
    {"test": "mixed", "groups": 5, "throughput_pps": 70000, "forwarded_fps": 140000},
    {"test": "capacity", "groups": 5, "capacity": 5}]},
  "rfc9693": {"rows": [{"test": "setup_rate", "value": 4200, "unit": "connections/s"}],
    "trials": [{"test": "capacity", "connections": 1000, "rate": 1000, "established": 1000}] +
      [{"test": "setup-rate", "rate": rt, "connections": 1000, "pass": ok}
       for rt, ok in ((8000, False), (4000, True), (6000, False), (5000, False), (4500, False), (4250, False), (4125, True))] +
      [{"test": "teardown-rate", "rate": rt, "connections": 1000, "pass": ok}
       for rt, ok in ((4125, False), (2062, True), (3093, True), (3609, False))]},
}
json.dump(r, open(sys.argv[2], "w"))
PY
run_surge 30 plot "$TMP/sw.json" -o "$TMP/sw.svg"
check "plot switch charts: exit 0" 0 "$RC"
check "plot switch charts: a file per chart, titled" "sw-rate.svg: Offered and forwarded load (TX and RX per port)
sw-rfc2889-broadcast.svg: RFC 2889 broadcast (5.9): forwarding rate and latency per frame size
sw-rfc2889-caching.svg: RFC 2889 address caching capacity (5.7) per frame size
sw-rfc2889-congestion.svg: RFC 2889 congestion control (5.10): loss per frame size
sw-rfc2889-forwarding.svg: RFC 2889 forwarding (5.1-5.4): throughput and forwarding rate per frame size - surge did not send the offered rate at frame size 64 B: there it shows surge's limit
sw-rfc2889-learning.svg: RFC 2889 address learning rate (5.8) per frame size
sw-rfc2889-pressure.svg: RFC 2889 forward pressure (5.11): forwarding rate per frame size
sw-rfc3918.svg: RFC 3918 join and leave delay (7.1, 7.2) per group
sw-rfc9693.svg: RFC 9693 setup and teardown rate searches: the trials" \
  "$(sed -E "s|^surge: wrote $TMP/||; s| \([0-9]+ points\)$||" <<<"$OUT" | LC_ALL=C sort)"
check "plot switch charts: each chart's series and points" "== rfc2889-broadcast
offered load (left axis)	3
forwarding rate (left axis)	3
latency avg (right axis)	3
latency max (right axis)	3
== rfc2889-caching
capacity	3
== rfc2889-congestion
congested loss	3
uncongested loss	3
== rfc2889-forwarding
offered load	3
throughput	3
forwarding rate	3
== rfc2889-learning
learning rate	3
== rfc2889-pressure
overload offered	3
max forwarding rate	3
forwarding rate	3
== rfc3918
join delay, port 1	5
join delay, port 2	5
leave delay, port 1	5
== rfc9693
setup-rate trial, passed	2
setup-rate trial, failed	5
teardown-rate trial, passed	2
teardown-rate trial, failed	2" "$(for f in rfc2889-broadcast rfc2889-caching rfc2889-congestion rfc2889-forwarding rfc2889-learning \
  rfc2889-pressure rfc3918 rfc9693; do echo "== $f"; $SERIES "$TMP/sw-$f.svg"; done)"
check "plot rfc3918: delays in us against the group" "ylabel	delay (s)
xlabel	group (in the order joined)" "$(report "$TMP/sw-rfc3918.svg" ylabel xlabel)"
check_match "plot rfc3918: us ticks" "^ticks y	0 us, .* us$" "$(report "$TMP/sw-rfc3918.svg" 'ticks y')"
check "plot rfc3918, rfc9693: a group and a trial are whole numbers: a tick at each" "ticks x	1, 2, 3, 4, 5
ticks x	1, 2, 3, 4, 5, 6, 7" "$(report "$TMP/sw-rfc3918.svg" 'ticks x'; report "$TMP/sw-rfc9693.svg" 'ticks x')"
check "plot rfc2889 broadcast: packet rate left, latency right" "ylabel	packet rate (packets/s)
y2label	latency (s)" "$(report "$TMP/sw-rfc2889-broadcast.svg" ylabel y2label)"
for f in rfc2889-forwarding rfc2889-broadcast rfc2889-caching rfc3918 rfc9693; do
  report_ready "plot switch charts ($f)" "$TMP/sw-$f.svg" "$TMP/sw.json"
done

# events: a rate set at the prompt and a scenario's trials are recorded in
# the results file (schema-valid) and marked on the rate chart
cat >"$TMP/ev.lua" <<'LUA'
p = surge.port(0)
launch("tx", p:txq(0), "50kpps")
surge.sleep(0.4)
p:txq(0):set_rate("100kpps")
surge.sleep(0.4)
stop()
surge.wait()
p:close()
flood = require "surge.scenario.flood"
a = flood.run{ tx = 0, sizes = "64", trial = 0.3, settle = 0.05 }
LUA
run_surge 60 repl --no-huge --stats-interval 0.2 --lcores '(0-1)@(0-1)' --vdev net_ring0 --output "$TMP/ev.json" \
  "$E2E_DIR/repl/flood.lua" < "$TMP/ev.lua"
check "events session: exit 0" 0 "$RC"
check "events: in the results file, valid, in time order" "ok
set_rate port 0 queue 0: rate 100kpps
trial_start the learning trial: 64 B at 1 kpps
trial_end the learning trial ends
trial_start the flood: 64 B, unpaced
trial_end the flood ends" "$(python3 - "$TMP/ev.json" "$SURGE_SRC/docs/results.schema.json" 2>&1 <<'PY'
import json, sys
import jsonschema
d = json.load(open(sys.argv[1]))
jsonschema.validate(d, json.load(open(sys.argv[2])))
ts = [e["t"] for e in d["events"]]
print("ok" if ts == sorted(ts) and ts[0] > 0 and ts[-1] <= d["metadata"]["duration_s"] else "not in order: %s" % ts)
for e in d["events"]:
    print(e["kind"], e["text"])
PY
)"
run_surge 30 plot "$TMP/ev.json" -o "$TMP/ev.svg"
check "events: marked on the rate chart, explained in the key" "mark	port 0 queue 0: rate 100kpps
mark	64 B at 1 kpps
mark	64 B, unpaced
key	rate set: 1
key	trial start: 2
key	trial end: 2" "$(report "$TMP/ev-rate.svg" mark key | grep -v 'key	port ')"
report_ready "events (rate chart)" "$TMP/ev-rate.svg" "$TMP/ev.json"

# PNG: the same figures, 1200 x 900
run_surge 30 plot "$TMP/lat.json" -o "$TMP/lat.png"
check "plot png: exit 0, a PNG per chart" "0 lat-latency.png lat-rate.png" "$RC $(cd "$TMP" && ls lat-*.png | tr '\n' ' ' | sed 's/ $//')"
for f in "$TMP"/lat-*.png; do
  check "plot png: $(basename "$f"): a 1200 x 900 PNG" "PNG 1200 900" "$(python3 -c "
import struct, sys
b = open(sys.argv[1], 'rb').read(24)
print(b[1:4].decode(), *struct.unpack('>II', b[16:24]))" "$f")"
done

# the figures in docs/results.md are what surge plot draws now: make.sh
# draws them again; each has the same texts and series as the one committed
MK=$(SURGE=$SURGE "$SURGE_SRC/docs/img/make.sh" "$TMP/img" 2>&1); MKRC=$?
check "docs figures: make.sh ran" 0 "$MKRC"
[ "$MKRC" = 0 ] || printf '%s\n' "$MK"
check "docs figures: the same files" "$(cd "$SURGE_SRC/docs/img" && ls *.svg)" "$(cd "$TMP/img" && ls *.svg)"
for f in "$SURGE_SRC"/docs/img/*.svg; do
  b=$(basename "$f")
  check "docs figures: $b as committed (texts and series; rerun docs/img/make.sh)" \
    "$($REPORT "$f"; $SERIES "$f")" "$($REPORT "$TMP/img/$b"; $SERIES "$TMP/img/$b")"
  check "docs figures: $b is referenced in docs/results.md" 1 "$(grep -c "(img/$b)" "$SURGE_SRC/docs/results.md")"
done

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
    rm -f "$TMP"/hostile-*.svg
    run_surge 30 plot "$TMP/hostile.json" -o "$TMP/hostile.svg"
    check "hostile $field ($how): exit 0, nothing on stderr" "0 " "$RC $ERR"
    check "hostile $field ($how): no gnuplot command ran (no $mark)" no "$([ -e "$mark" ] && echo yes || echo no)"
    # the y field's name as the key shows it: a control byte a space, _ a space
    shown=${bad//[$'\r\n']/ }
    check "hostile $field ($how): two files drawn, the port's series and the table's" "2 port 0 TX (offered)	$N
port 0 RX (forwarded)	$N
$([ "$field" = y ] && printf '%s' "${shown//_/ }" || echo p99)	3" \
      "$(ls "$TMP"/hostile-*.svg | wc -l) $($SERIES "$TMP/hostile-rate.svg"; for f in "$TMP"/hostile-*.svg; do
          [ "$f" = "$TMP/hostile-rate.svg" ] || $SERIES "$f"; done)"
    check "hostile $field ($how): one line on stdout per file" 2 "$(printf '%s\n' "$OUT" | wc -l)"
  done
done
# the title as drawn: the newline is a space, the text otherwise as it reads
hostile title $'two\nlines' "$TMP/hostile.json"
rm -f "$TMP"/hostile-*.svg
run_surge 30 plot "$TMP/hostile.json" -o "$TMP/hostile.svg"
check "hostile title: drawn on one line, the newline a space" 1 "$(grep -c '<text>two lines</text>' "$TMP/hostile-mine.svg")"
check "hostile title: said on one line" "surge: wrote $TMP/hostile-rate.svg: Offered and forwarded load (TX and RX per port) ($N points)
surge: wrote $TMP/hostile-mine.svg: two lines (3 points)" "$OUT"
# a scenario's name names its file: letters, digits and _ only, in -o's folder
python3 - "$TMP/flood.json" "$TMP/hostile.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["scenarios"] = {"../../x y": {"rows": [{"load": v, "p99_ns": 10 * v} for v in (1, 2, 3)], "plot": {"x": "load", "y": ["p99_ns"]}}}
json.dump(r, open(sys.argv[2], "w"))
PY
mkdir -p "$TMP/sub"
run_surge 30 plot "$TMP/hostile.json" -o "$TMP/sub/h.svg"
check "hostile name: the files stay in -o's folder" "0 h-______x_y.svg h-rate.svg" "$RC $(ls "$TMP/sub" | tr '\n' ' ' | sed 's/ $//')"
# an output name with a control character: refused (it would be another file)
run_surge 10 plot "$TMP/flood.json" -o "$TMP/a"$'\n'"b.svg"
check "output name with a newline: exit 2, one line" "2 1" "$RC $(printf '%s\n' "$ERR" | wc -l)"
check_match "output name with a newline: says so" "the output's name has a control character" "$ERR"

# the temporary folder: made by mkdtemp in $TMPDIR, gone afterwards; a
# TMPDIR where none can be made gives one line
mkdir "$TMP/tmpd"
TMPDIR=$TMP/tmpd run_surge 30 plot "$TMP/flood.json" -o "$TMP/tmpd.svg"
check "TMPDIR: exit 0, the SVG drawn" "0 yes" "$RC $([ -s "$TMP/tmpd-rate.svg" ] && echo yes || echo no)"
check "TMPDIR: nothing left behind in it" "" "$(ls -A "$TMP/tmpd")"
TMPDIR=$TMP/no-such-dir run_surge 30 plot "$TMP/flood.json" -o "$TMP/nodir.svg"
check "TMPDIR missing: exit 1, one line" \
  "1 surge plot: cannot make a temporary folder: $TMP/no-such-dir/surge-plot.XXXXXX: No such file or directory" "$RC $ERR"
check "TMPDIR missing: nothing drawn" no "$([ -e "$TMP/nodir-rate.svg" ] && echo yes || echo no)"

# issue 31 item 21: a run under about 1 s drew nothing (its time axis in
# ms, its range in s: every point outside) and left a 0-byte SVG. Any run
# length: a real 0.3 s run, and the flood run's file cut to 0.1 s, to one
# sample, and stretched to 2000 s (in s, not "2 ks"): every point drawn,
# ticks in the unit of the range
run_surge 30 run --no-huge -q --duration 0.3 --stats-interval 0.1 --output "$TMP/short.json" "$EXAMPLES/udp-flood.lua"
check "0.3 s run: exit 0" 0 "$RC"
NS=$(jq_py "$TMP/short.json" 'len(r["series"]["ports"])')
run_surge 30 plot "$TMP/short.json" -o "$TMP/short.svg"
check "plot 0.3 s run: exit 0, nothing on stderr" "0 " "$RC $ERR"
check "plot 0.3 s run: every sample drawn ($NS)" "port 0 TX (offered)	$NS
port 0 RX (forwarded)	$NS" "$($SERIES "$TMP/short-rate.svg")"
check_match "plot 0.3 s run: time ticks in ms, up to the last sample" "^ticks x	0 ms, .*, 3[0-9]{2} ms$" \
  "$(report "$TMP/short-rate.svg" 'ticks x')"
while IFS='|' read -r what keep scale tick; do
  python3 - "$TMP/flood.json" "$TMP/len.json" "$keep" "$scale" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
keep, scale = int(sys.argv[3]), float(sys.argv[4])
ports = r["series"]["ports"][:keep]
for p in ports:
    p["t"] *= scale
r["series"]["ports"] = ports
r["events"] = []
json.dump(r, open(sys.argv[2], "w"))
PY
  rm -f "$TMP"/len-*.svg
  run_surge 30 plot "$TMP/len.json" -o "$TMP/len.svg"
  K=$(jq_py "$TMP/len.json" 'len(r["series"]["ports"])')
  check "plot $what: exit 0, every sample drawn ($K)" "0 port 0 TX (offered)	$K
port 0 RX (forwarded)	$K" "$RC $($SERIES "$TMP/len-rate.svg")"
  check_match "plot $what: time ticks in $tick" "^ticks x	0 $tick(, [0-9.]+ $tick)+$" "$(report "$TMP/len-rate.svg" 'ticks x')"
done <<'EOF'
0.1 s (samples at 20 ms)|100|0.1|ms
one sample at 0.2 s|1|1|ms
one sample at 0.2 ms|1|0.001|us
2000 s|100|1666|s
EOF

# any gnuplot failure (a stand-in gnuplot on PATH: it draws part of the
# first chart, writes gnuplot's echo of the command, its caret and its
# reason on stderr, and fails): exit 1, one line naming the chart and the
# reason in surge's words, not gnuplot's echoed command; no figure written,
# no temporary file beside it, and an earlier figure of the same name as it
# was. Also a gnuplot that is killed without a word, and one that ends
# well but draws nothing.
mkdir -p "$TMP/fakebin" "$TMP/out"
cat >"$TMP/fakebin/gnuplot" <<'SH'
#!/bin/sh
out=$(sed -n "s/^set output '\(.*\)'$/\1/p" "$1" | head -n 1)
case $FAKE_GNUPLOT in
  undefined)
    printf '<svg width="1200"' >"$out"
    n=$(grep -n '^plot ' "$1" | head -n 1 | cut -d: -f1)
    printf '%s\n' "plot '/tmp/x/port0.dat' using (\$1*1000):(\$2*1e-06) with linespoints" \
      "                                                                  ^" \
      "\"$1\" line $n: all points y value undefined!" "" >&2
    exit 1 ;;
  killed) kill -9 $$ ;;
  nothing) exit 0 ;;
esac
SH
chmod +x "$TMP/fakebin/gnuplot"
printf 'an earlier figure\n' >"$TMP/out/f-rate.svg"
for how in undefined killed nothing; do
  case $how in
    undefined) why="none of its points falls inside its axes' ranges (gnuplot: all points y value undefined!)" ;;
    killed) why="gnuplot ended (signal 9) and said nothing" ;;   # or the shell's word for it
    nothing) why="gnuplot ended without drawing it" ;;
  esac
  ERR=$(FAKE_GNUPLOT=$how PATH=$TMP/fakebin:$PATH timeout 30 "$SURGE" plot "$TMP/flood.json" -o "$TMP/out/f.svg" 2>&1 >/dev/null)
  RC=$?
  [ "$how" = killed ] && [ "$ERR" != "${ERR/: gnuplot: Killed;/}" ] && why="gnuplot: Killed"
  check "gnuplot fails ($how): exit 1, one line, the chart and the reason" \
    "1 surge plot: cannot draw $TMP/out/f-rate.svg (Offered and forwarded load (TX and RX per port)): $why; no figure written" \
    "$RC $ERR"
  check "gnuplot fails ($how): no file left but the earlier figure, as it was" "f-rate.svg an earlier figure" \
    "$(ls -A "$TMP/out" | tr '\n' ' ')$(cat "$TMP/out/f-rate.svg")"
done
# (without an earlier figure: none made, not an empty one)
ERR=$(FAKE_GNUPLOT=undefined PATH=$TMP/fakebin:$PATH timeout 30 "$SURGE" plot "$TMP/lat.json" -o "$TMP/out/g.svg" 2>&1)
check "gnuplot fails, two charts: exit 1 and nothing made" "1 f-rate.svg" "$? $(ls -A "$TMP/out" | tr '\n' ' ' | sed 's/ $//')"
check_match "gnuplot fails, two charts: names the one gnuplot stopped at" "^surge plot: cannot draw $TMP/out/g-rate.svg " "$ERR"

# a folder where no file can be made (as root too: /proc): said by surge
# before gnuplot runs, one line, exit 1
ERR=$(timeout 30 "$SURGE" plot "$TMP/flood.json" -o /proc/surge-plot-e2e.svg 2>&1)
check "-o in a folder no file can be made in: exit 1, one line" \
  "1 surge plot: cannot write /proc/surge-plot-e2e-rate.svg: No such file or directory" "$? $ERR"

# issue 31 item 17: a title wider than the figure was cut off at both
# sides, and y1564's CIR + EIR line (a policer holding the IR at it) lay
# under the top frame: the title is wrapped into lines of the figure's
# width (together its text), the y axis reaches above the highest line
python3 - "$TMP/flood.json" "$TMP/y.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
name = "voice-gold-tier-customer-vlan-1001-to-datacenter-east-aggregation-router"
r["scenarios"] = {
  "y1564": {"services": [{"name": name, "cir_bps": 3e6, "eir_bps": 1e6}],
            "rows": [{"service": name, "step": st, "offered_bps": o, "ir_bps": min(o, 4e6)}
                     for st, o in (("25%", 0.75e6), ("50%", 1.5e6), ("75%", 2.25e6), ("100%", 3e6), ("cir+eir", 4e6),
                                   ("overshoot", 4.75e6))]}}
json.dump(r, open(sys.argv[2], "w"))
PY
run_surge 30 plot "$TMP/y.json" -o "$TMP/y.svg"
check "y1564 long name: exit 0" 0 "$RC"
TITLE=$(report "$TMP/y-y1564.svg" title | cut -f2)
check "y1564 long name: the title's lines are the title" \
  "Y.1564 service voice-gold-tier-customer-vlan-1001-to-datacenter-east-aggregation-router: information rate per step" \
  "$(printf '%s\n' "$TITLE" | paste -sd ' ' | sed 's/- /-/g; s/ :/:/')"
check "y1564 long name: in lines of at most 72 characters" "" "$(printf '%s\n' "$TITLE" | awk 'length($0) > 72')"
check_match "y1564: the y axis reaches above CIR + EIR (4 Mbit/s)" "^ticks y	0 Mbit/s, .*, 4 Mbit/s, [4-9](\.[0-9]+)? Mbit/s$" \
  "$(report "$TMP/y-y1564.svg" 'ticks y')"
report_ready "y1564 long name" "$TMP/y-y1564.svg" "$TMP/y.json"

ERR=$(timeout 10 env PATH=/nonexistent-r11 "$SURGE" plot "$TMP/lat.json" 2>&1)
check "no gnuplot: exit 1" 1 "$?"
check "no gnuplot: one line naming the package" "surge plot: gnuplot not found: install the Debian package gnuplot-nox" "$ERR"
echo "# -o into a folder that does not exist: one line naming -o, exit 2, nothing drawn"
ERR=$(timeout 30 "$SURGE" plot "$TMP/lat.json" -o "$TMP/nofolder/run.png" 2>&1)
check "-o in a missing folder: exit 2" 2 "$?"
check "-o in a missing folder: says which" "surge plot: -o $TMP/nofolder/run.png: no folder '$TMP/nofolder' (make it first)" "$ERR"

finish
