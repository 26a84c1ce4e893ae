#!/bin/bash
# test_misuse_results.sh - issue 23 item 12: results, counters and loss are
# never silently wrong. Table-driven: each case is a tiny script (master's
# code on line 4) and surge's options; it must end with the expected exit
# status (never a signal or a timeout), its first stderr line must match
# (file:line or the option named), and a check of what it wrote must pass.
# docs/guarantees.md ("Results, counters and loss are never silently wrong")
# states what these cases prove. Cases that need a set-up of their own live
# in test_results_full_disk.sh (tmpfs), test_dut_duplicates.sh and
# test_link_down_veth.sh (veth pairs).
. "$(dirname "$0")/lib.sh"
need_cmd python3

CASE=$TMP/case.lua
OUTF=$TMP/r.json
SCHEMA=$SURGE_SRC/docs/results.schema.json
N=0

# What a results file must be: valid UTF-8 JSON that Python reads, valid
# against the schema; then a Python expression over it (r) must be true.
json_is() {  # json_is FILE PY_EXPR
  python3 - "$1" "$2" "$SCHEMA" <<'PY'
import json, sys
import jsonschema
raw = open(sys.argv[1], "rb").read()
raw.decode("utf-8")                      # strict: raises on a bad byte
r = json.loads(raw)
jsonschema.validate(r, json.load(open(sys.argv[3])))
if not eval(sys.argv[2]):
    sys.exit("false: " + sys.argv[2])
PY
}
no_temp_left() { [ -z "$(find "$TMP" -maxdepth 1 -name '*.tmp-*' -print -quit)" ]; }

# case DESCRIPTION RC FIRST_ERR_RE CHECK MASTER_CODE [SURGE_OPTIONS...]
#   FIRST_ERR_RE: ERE for the first stderr line that is not EAL's ('' = none
#   expected); CHECK: shell code that must succeed afterwards (eval'd).
#   SCRIPT=FILE before it runs FILE instead of the case's script; script
#   options go after -- in SURGE_OPTIONS.
case_() {
  local desc=$1 rc=$2 re=$3 chk=$4 code=$5 first
  shift 5
  N=$((N + 1))
  rm -f "$OUTF"
  cat >"$CASE" <<EOF
local surge = require "surge"
function tx() surge.gauge("g.sum"):set(1.5e308) return 0 end
function master(args)
$code
end
function configure(p) p:option("--in", "an input file", "") end
EOF
  local opts=() sargs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  sargs=("$@")
  run_surge 30 run -q --no-huge --vdev net_null0,no-rx=1 --lcores 0-1 "${opts[@]}" "${SCRIPT:-$CASE}" "${sargs[@]}"
  first=$(printf '%s\n' "$ERR" | grep -v '^EAL: ' | grep . | head -1)
  local why=""
  [ "$RC" = "$rc" ] || why="rc $RC, expected $rc"
  if [ -n "$re" ]; then
    printf '%s' "$first" | grep -Eq -- "$re" || why="$why; first error line '$first' !~ /$re/"
  elif [ -n "$first" ]; then
    why="$why; unexpected error '$first'"
  fi
  [ -z "$chk" ] || eval "$chk" >"$TMP/chk" 2>&1 || why="$why; check failed: $chk: $(head -3 "$TMP/chk")"
  [ "$RC" -lt 124 ] || why="$why; died by signal or timeout"
  if [ -z "$why" ]; then echo "ok   $N: $desc"; else
    echo "FAIL $N: $desc: $why"; printf '%s\n' "$ERR" | head -5; FAILS=$((FAILS + 1)); fi
}

echo "# 12a: --output is written whole or not at all"
case_ "a results file is written whole, no temp file left" 0 '' \
  'json_is "$OUTF" "r[\"status\"] == \"ok\"" && no_temp_left' \
  '' --output "$OUTF"
case_ "a folder that does not exist: one line naming --output, exit 1" 1 \
  "^surge: --output $TMP/nope/r.json: No such file or directory$" '[ ! -e "$TMP/nope" ]' \
  '' --output "$TMP/nope/r.json"
case_ "surge.results.write onto a folder: the script's line" 1 "case\\.lua:4: surge\\.results\\.write: $TMP: " \
  '' "surge.results.write(\"$TMP\")"

echo "# 12d: results are valid UTF-8 JSON whatever the strings"
case_ "a scenario name and a value with bytes ff fe" 0 '' \
  'json_is "$OUTF" "r[\"scenarios\"][\"bad\\ufffd\\ufffd\"][\"label\"] == \"x\\ufffd\\ufffdy\""' \
  'surge.results.add("bad\255\254", { label = "x\255\254y" })' --output "$OUTF"
case_ "names that differ only in bad bytes both stay" 0 '' \
  'json_is "$OUTF" "set(r[\"scenarios\"]) == {\"n\\ufffd\", \"n\\ufffd#2\"}"' \
  'surge.results.add("n\255", { v = 1 }); surge.results.add("n\254", { v = 2 })' --output "$OUTF"
case_ "a cut UTF-8 sequence and valid UTF-8 (é, U+1F600)" 0 '' \
  'json_is "$OUTF" "r[\"scenarios\"][\"s\"][\"t\"] == \"\\ufffd\\ufffd é \\U0001f600\""' \
  'surge.results.add("s", { t = "\226\130 \195\169 \240\159\152\128" })' --output "$OUTF"

echo "# 12e: counter names and DPDK telemetry's keys"
case_ "a name whose telemetry key clashes is refused at creation" 1 \
  "case\\.lua:4: 'rx_drops' would read as 'rx_drops' on the telemetry socket, as 'rx-drops' does" '' \
  'surge.counter("rx-drops"); surge.counter("rx_drops")'
case_ "a gauge whose metric name is a counter's is refused at creation" 1 \
  "case\\.lua:4: 'a_total' would read as surge_script_a_total on the metrics endpoint, as counter 'a' does" '' \
  'surge.counter("a"); surge.gauge("a_total")'
case_ "a counter whose metric name is a gauge's is refused at creation" 1 \
  "case\\.lua:4: 'a' would read as surge_script_a_total on the metrics endpoint, as gauge 'a_total' does" '' \
  'surge.gauge("a_total"); surge.counter("a")'
case_ "the same name twice is one counter, no clash" 0 '' \
  'json_is "$OUTF" "[c[\"value\"] for c in r[\"counters\"]] == [5]"' \
  'surge.counter("a.b"):add(2); surge.counter("a.b"):add(3)' --output "$OUTF"

echo "# 12f: --output never overwrites the script or an input file"
printf 'function master() end\n' >"$TMP/s.lua"
ln -sf "$TMP/s.lua" "$TMP/link.json"
SCRIPT=$TMP/s.lua case_ "--output is a symlink to the script: exit 2, script intact" 2 \
  "^surge: --output $TMP/link\\.json: is the script" \
  'cmp -s "$TMP/s.lua" <(printf "function master() end\n")' '' --output "$TMP/link.json"
echo 'surge.counter("x")' >"$TMP/in.csv"
case_ "--output is a script option's input file (another spelling): exit 2" 2 \
  "^surge: --output $TMP/in\\.csv: is the input file $TMP/\\./in\\.csv" \
  'grep -q counter "$TMP/in.csv"' '' --output "$TMP/in.csv" -- --in "$TMP/./in.csv"
python3 -c 'import struct, sys; open(sys.argv[1], "wb").write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))' \
  "$TMP/cap.csv"                        # an empty capture, by a name --output takes
case_ "--output is a --vdev's rx_pcap file: exit 2, capture intact" 2 "^surge: --output $TMP/cap\\.csv: is the input file" \
  '[ "$(stat -c %s "$TMP/cap.csv")" = 24 ]' '' --vdev "net_pcap0,rx_pcap=$TMP/cap.csv,tx_pcap=/dev/null" --output "$TMP/cap.csv"

echo "# 12g: a gauge's sum past a double is clamped and flagged, never null"
case_ "1.5e308 on two lcores: DBL_MAX, saturated, schema-valid" 0 '' \
  'json_is "$OUTF" "[(c[\"value\"], c.get(\"saturated\")) for c in r[\"counters\"]] == [(1.7976931348623157e308, True)] and r[\"series\"][\"counters\"][-1][\"saturated\"]"' \
  'surge.gauge("g.sum"):set(1.5e308); surge.wait(surge.launch("tx"))' --output "$OUTF"
check_match "the summary line says saturated" "g\\.sum 1\\.79769e\\+308 \\(saturated\\)" "$OUT"
case_ "1.5e308 and -1.5e308: exact 0, not flagged" 0 '' \
  'json_is "$OUTF" "[(c[\"value\"], c.get(\"saturated\")) for c in r[\"counters\"]] == [(0, None)]"' \
  'surge.gauge("g.sum"):set(-1.5e308); surge.wait(surge.launch("tx"))' --output "$OUTF"

echo "# 12e: /surge/counters shows a name with - and . under its mapped key"
if command -v dpdk-telemetry.py >/dev/null 2>&1; then
  PREFIX=sgmr$$
  cat >"$TMP/tel.lua" <<'EOF'
local surge = require "surge"
function master()
  surge.counter("rx-drops.total"):add(7); surge.gauge("q.depth"):set(2.5); surge.counter("plain"):add(1)
  surge.sleep(5)
end
EOF
  timeout -k 5 30 "$SURGE" run -q --no-huge --file-prefix "$PREFIX" --vdev net_null0,no-rx=1 "$TMP/tel.lua" \
    >"$TMP/tel.out" 2>&1 &
  TPID=$!
  on_exit "kill -KILL $TPID"
  for _ in $(seq 50); do [ -S "/var/run/dpdk/$PREFIX/dpdk_telemetry.v2" ] && break; sleep 0.1; done
  sleep 0.5
  TEL=$(printf '/surge/counters\n' | timeout 10 dpdk-telemetry.py -f "$PREFIX" 2>&1 | grep '^{')
  check "telemetry keys" '{"/surge/counters": {"rx_drops_total": 7, "q_depth": "2.5", "plain": 1}}' "$TEL"
  kill "$TPID" 2>/dev/null
  wait "$TPID" 2>/dev/null
else
  echo "skip: dpdk-telemetry.py not installed"
fi
finish
