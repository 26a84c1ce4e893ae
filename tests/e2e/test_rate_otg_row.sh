#!/bin/bash
# test_rate_otg_row.sh - scripts/bench's OTG row (issue 32 item 7), as
# docs/performance.md runs it: `scripts/bench --rows otg --quick` (one
# repetition of 2 s each side, hugepages if it can have them) prints the
# row of the Lua script and the row of the OTG flow with its ratio, both
# runs exited cleanly (the bench fails otherwise); a wrong OTG_PEERS skips
# the row with one line. The rate itself is not judged here (a shared
# machine): docs/performance.md has the measured figure.
. "$(dirname "$0")/lib.sh"
need_cmd python3
need_cmd dpdk-testpmd
PEERS="$SURGE_SRC/../shared/peers/otg"
[ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
/usr/bin/python3 -c 'import requests, yaml, semantic_version' 2>/dev/null || skip "snappi's modules not installed"
BENCH=$SURGE_SRC/scripts/bench
OUT=$(SURGE=$SURGE timeout -k 5 240 bash "$BENCH" --rows otg --quick --allow-no-huge 2>"$TMP/err")
check "scripts/bench --rows otg --quick: exit 0" 0 "$?"
echo "$OUT" | sed 's/^/  /'
check_match "the Lua script's row" "^Lua script: udp-flood.lua --flows 1024 --rate 1gpps +[0-9.]+ " "$OUT"
check_match "the OTG row, its ratio against the script and the target" \
  "^OTG flow \(snappi, src port increment x 1024, 1e9 pps\) +[0-9.]+ +[0-9.]+ +[0-9]+\.[0-9][0-9] .*>= 0.95" "$OUT"
ERR=$(OTG_PEERS=$TMP/none SURGE=$SURGE timeout -k 5 120 bash "$BENCH" --rows otg --quick --allow-no-huge 2>&1 >/dev/null)
check_match "OTG_PEERS without snappi: the row skipped, saying why" "^bench: no snappi at $TMP/none \(OTG_PEERS=\): no OTG row$" "$ERR"
finish
