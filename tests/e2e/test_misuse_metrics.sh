#!/bin/bash
# test_misuse_metrics.sh - issue 31 items 2 and 7: what clients and names
# cannot do to `--metrics` (core/report/metrics.c). docs/guarantees.md
# ("Prometheus metrics") states what these cases prove.
#
# A table of slow and hostile HTTP clients on 127.0.0.1
# (tests/e2e/metrics/hostile.py, bounded, reconnecting whenever surge closes
# one of theirs): while each holds its connections, curl's scrape comes
# within BOUND seconds, whole (promtool check metrics), every time; then
# surge, stopped by SIGINT while 64 clients still trickle, ends at once and
# whole (exit 0, summary, every pool full). Before the fix, 64 clients
# trickling a header line every 2 s held every scrape back for good.
#
# Label values are UTF-8, cut between characters: a script at a path that
# is not UTF-8 and one at a 400-byte UTF-8 path (256 bytes falls inside a
# character), a task whose name is not UTF-8 and holds " and \: promtool
# accepts every scrape, and each label reads as Python's decoding of the
# bytes (U+FFFD for each ill-formed piece), escaped, cut at 256 bytes.
. "$(dirname "$0")/lib.sh"
need_cmd curl
need_cmd python3
need_cmd promtool
HOSTILE=$E2E_DIR/metrics/hostile.py
BOUND=5     # seconds; Prometheus's default scrape_timeout is 10 s

# scrape_ok DESCRIPTION URL: three scrapes, each 200 within BOUND and
# accepted by promtool; prints the seconds of the slowest
scrape_ok() {
  local i out code t worst=0 bad=""
  for i in 1 2 3; do
    out=$(curl -s -m "$BOUND" -o "$TMP/scrape" -w '%{http_code} %{time_total}' "$2")
    code=${out% *}
    t=${out#* }
    worst=$(awk -v a="$worst" -v b="$t" 'BEGIN { print (b > a ? b : a) }')
    if [ "$code" != 200 ]; then bad="scrape $i: HTTP $code after $t s"; break; fi
    if ! promtool check metrics <"$TMP/scrape" >"$TMP/promtool" 2>&1; then
      bad="scrape $i: promtool: $(head -3 "$TMP/promtool")"; break
    fi
    grep -q '^surge_tx_packets_total{port="0",queue="0"} [0-9]' "$TMP/scrape" ||
      { bad="scrape $i: no surge_tx_packets_total"; break; }
  done
  check "$1: 3 scrapes, each whole within ${BOUND} s (slowest ${worst} s)" "" "$bad"
}

# --- slow and hostile clients ----------------------------------------------
"$SURGE" run --no-huge --metrics 0 --vdev net_ring_mm0 --lcores '(0-1)@(0-1)' --duration 120 \
  "$E2E_DIR/results/live.lua" --rate 20kpps >"$TMP/run.out" 2>"$TMP/run.err" &
SPID=$!
on_exit "kill -KILL $SPID"
wait_for_text "$TMP/run.out" '^surge: metrics: http://127\.0\.0\.1:[0-9]+/metrics$' 20 "$SPID"
MPORT=$(sed -n 's|^surge: metrics: http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$TMP/run.out" | head -1)
URL=http://127.0.0.1:${MPORT:-1}/metrics
wait_for_text "$TMP/run.out" 'TX +[0-9.]+ Mpps' 20 "$SPID"
scrape_ok "no other client" "$URL"

# hostile MODE N: starts N connections doing MODE (hostile.py), until killed
HPIDS=()
hostile() {
  python3 "$HOSTILE" "$MPORT" "$1" "$2" --seconds 60 >"$TMP/hostile.$1.$2" 2>&1 &
  HPIDS+=($!)
  on_exit "kill $!"
  wait_for_text "$TMP/hostile.$1.$2" '^ready$' 20 $! ||
    { echo "FAIL hostile $1 $2 did not start:"; cat "$TMP/hostile.$1.$2"; FAILS=$((FAILS + 1)); }
  sleep 0.5   # surge has taken what it will take of them
}
# MODE N          what the clients do
while read -r -u 3 mode n what; do
  hostile "$mode" "$n"
  scrape_ok "$n clients, $what" "$URL"
  kill "${HPIDS[-1]}" 2>/dev/null
  wait "${HPIDS[-1]}" 2>/dev/null
done 3<<'EOF'
trickle 64 each a header line every 2 s (issue 31)
trickle 300 each a header line every 2 s, more than the 64 slots
idle 300 connected and silent
huge 64 each a 1 MiB header
garbage 100 each a line of bytes that is not HTTP
pipeline 64 each 200 requests at once, no answer read
EOF
# all of them at once, and surge stopped while they hold on
for m in "trickle 64" "idle 32" "pipeline 16" "garbage 16" "huge 16"; do hostile "${m% *}" "${m#* }"; done
scrape_ok "every kind at once" "$URL"
T0=$(date +%s%N)
kill -INT "$SPID"
wait "$SPID"
RC=$?
SECS=$(awk -v a="$T0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
OUT=$(cat "$TMP/run.out")
ERR=$(cat "$TMP/run.err")
SURGE_PID=$SPID
check "stopped under hostile clients: exit 0" 0 "$RC"
check_true "stopped under hostile clients: ended within 5 s of SIGINT (${SECS} s)" "" \
  awk -v s="$SECS" 'BEGIN { exit !(s < 5) }'
check_match "stopped under hostile clients: summary" '^surge: summary over' "$OUT"
check_pools "stopped under hostile clients"
check_no_crash "stopped under hostile clients"
for p in "${HPIDS[@]}"; do kill "$p" 2>/dev/null; done

# --- label values: UTF-8, cut between characters ----------------------------
# label_is DESCRIPTION NAME RAW_BYTES_FILE: the label NAME of the last scrape
# is the bytes of the file decoded as Python does (U+FFFD for each ill-formed
# piece, Unicode's practice), \ " newline escaped, cut to 256 bytes before
# a character or an escape
label_is() {
  python3 - "$TMP/scrape" "$2" "$3" <<'PY' >"$TMP/label.why" 2>&1
import re, sys
body = open(sys.argv[1], "rb").read()
body.decode("utf-8")                       # strict: the whole scrape is UTF-8
raw = open(sys.argv[3], "rb").read()
want = b""
for ch in raw.decode("utf-8", "replace"):
    e = {"\\": "\\\\", '"': '\\"', "\n": "\\n"}.get(ch, ch).encode()
    if len(want) + len(e) > 256:
        break
    want += e
m = re.search(rb'[{,]' + sys.argv[2].encode() + rb'="((?:[^"\\]|\\.)*)"', body)
if m is None or m.group(1) != want:
    print("got %r, want %r" % (m and m.group(1), want))
PY
  check "$1" "" "$(cat "$TMP/label.why")"
}

# a task whose name is not UTF-8, with " and \ in it; a counter
cat >"$TMP/paths.lua" <<'EOF'
local surge = require "surge"
local name = "t\255\"\\x\195"
_G[name] = function()
  while surge.running() do surge.sleep(0.02) end
  return 0
end
function master()
  surge.counter("seen"):add(3)
  surge.launch(name)
  while surge.running() do surge.sleep(0.02) end
  surge.wait()
  return 0
end
EOF
printf 't\377"\\x\303' >"$TMP/task.raw"
# a folder not UTF-8 (latin-1 "café", a lone continuation, a surrogate's
# bytes), and a 400-byte UTF-8 one whose 256th byte is inside a character
BAD=$TMP/$(printf 'caf\351-\200-\355\240\200')
# (4-byte characters; an ASCII pad puts byte 256 inside one)
LONG=$(python3 - "$TMP" <<'PYL'
import os, sys
tmp = os.fsencode(sys.argv[1])
for pad in range(4):
    p = tmp + b"/" + b"a" * pad
    while len(p) < 400:
        p += b"/" + "\U0001F600".encode() * 20 + "-é".encode()
    try:
        (p + b"/s.lua")[:256].decode()
    except UnicodeDecodeError:
        sys.stdout.buffer.write(p)
        break
PYL
)
for dir in "$BAD" "$LONG"; do
  mkdir -p "$dir"
  cp "$TMP/paths.lua" "$dir/s.lua"
  printf '%s' "$dir/s.lua" >"$TMP/script.raw"
  len=$(wc -c <"$TMP/script.raw")
  what=$([ "$dir" = "$BAD" ] && echo "a script at a path not UTF-8" || echo "a script at a $len-byte UTF-8 path")
  "$SURGE" run --no-huge --metrics 0 --lcores 0-1 --duration 30 "$dir/s.lua" >"$TMP/p.out" 2>"$TMP/p.err" &
  SPID=$!
  on_exit "kill -KILL $SPID"
  wait_for_text "$TMP/p.out" '^surge: metrics: http://' 20 "$SPID"
  U=$(sed -n 's|^surge: metrics: \(http://.*\)$|\1|p' "$TMP/p.out" | head -1)
  sleep 0.5   # the task runs
  code=$(curl -s -m "$BOUND" -o "$TMP/scrape" -w '%{http_code}' "${U:-http://127.0.0.1:1/metrics}")
  check "$what: scraped" 200 "$code"
  PT=$(promtool check metrics <"$TMP/scrape" 2>&1)
  check "$what: promtool accepts the scrape" "0:" "$?:$PT"
  label_is "$what: the script label" script "$TMP/script.raw"
  label_is "$what: the task label" task "$TMP/task.raw"
  check_match "$what: the counter" '^surge_script_seen_total 3$' "$(cat "$TMP/scrape")"
  # DPDK telemetry's /surge/tasks: JSON a reader takes, the name in ASCII
  # (DPDK 22.11's writer mangles bytes above 0x7f: the answer was no JSON)
  SOCK=$(sed -n 's|^surge: telemetry: \([^ ]*\) .*|\1|p' "$TMP/p.out" | head -1)
  TFN=$(python3 - "$SOCK" 2>&1 <<'PYT'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.recv(4096)
s.send(b"/surge/tasks")
r = json.loads(s.recv(65536))["/surge/tasks"]
print([v for k, v in r.items() if k.endswith("_fn")])
PYT
)
  check "$what: /surge/tasks names the task in ASCII" "['t?\"\\\\x?']" "$TFN"
  kill -INT "$SPID"
  wait "$SPID"
  check "$what: exit 0" 0 "$?"
done
finish
