#!/bin/bash
# test_otg_flows.sh - a flow's size, duration and metrics through
# `surge otg`, driven by the real snappi (tests/e2e/otg/flowmetrics.py;
# OTG_SECTIONS picks its sections: test_otg_rate.sh runs the timed one,
# rates measured by DPDK telemetry): every size mode's frames counted size by
# size from a net_pcap port's pcap, fixed_packets, burst and fixed_seconds
# counts exact, latency and first/last timestamps on a net_ring loopback,
# the refusals of bad rates and sizes by JSON path; then SIGTERM: exit 0,
# every mbuf back.
source "$(dirname "$0")/lib.sh"
PEERS="$SURGE_SRC/../shared/peers/otg"
[ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
/usr/bin/python3 -c 'import requests, yaml, semantic_version, grpc, google.protobuf' 2>/dev/null \
  || skip "snappi's modules (scripts/setup: python3-requests python3-yaml ...) not installed"

PORT=$((20000 + RANDOM % 20000))
"$SURGE" otg --no-huge --stats-interval 0 --http --listen "127.0.0.1:$PORT" --vdev net_ring0 --vdev net_ring1 \
  > "$TMP/srv.log" 2>&1 &
SRV=$!
for _ in $(seq 100); do
  grep -q "serving the OTG API" "$TMP/srv.log" && break
  kill -0 "$SRV" 2>/dev/null || break
  sleep 0.2
done
grep -q "serving the OTG API" "$TMP/srv.log" || { echo "server did not start:"; cat "$TMP/srv.log"; exit 1; }
PYTHONPATH="$PEERS" timeout 240 /usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/flowmetrics.py" \
  "http://127.0.0.1:$PORT" "$TMP" "$SRV" "${OTG_SECTIONS:-sizes,durations,refusals}" > "$TMP/py.log" 2>&1
PYRC=$?
grep -v WARNING "$TMP/py.log" | sed 's/^/  /'
check "snappi driver: every check passed" 0 "$PYRC"
kill -TERM "$SRV"; wait "$SRV"; RC=$?
check "SIGTERM: exit 0 (traffic stopped, pools full)" 0 "$RC"
check_match "the pools checked: every mbuf back" "mbufs back, no leak" "$(cat "$TMP/srv.log")"
check "no leak or task failure reported" 0 "$(grep -i 'leak\|failed' "$TMP/srv.log" | grep -vc 'no leak')"
finish
