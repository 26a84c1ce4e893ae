#!/bin/bash
# test_otg_busy.sh - the busy/idle figure of an OTG port task that sends
# (core/dataplane/idle.c: a round that sent is busy even when its RX poll
# came back empty). `surge otg` on net_null0 (no-rx=1: its RX never returns
# a frame), one continuous flow set by snappi (bench/otg-flow.py, the bench
# row's flow): the stats line's "idle: lcore N P%" while it sends is below
# 50 % (it read 100 % before: every round's empty poll counted the round
# idle) and DPDK telemetry's /surge/tasks says the same; once the flow is
# paused the task (still running) sends nothing and sleeps between polls,
# and the figure is above 90 %. Then SIGTERM: exit 0, every mbuf back.
source "$(dirname "$0")/lib.sh"
PEERS="$SURGE_SRC/../shared/peers/otg"
[ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
/usr/bin/python3 -c 'import requests, yaml, semantic_version' 2>/dev/null \
  || skip "snappi's modules (scripts/setup: python3-requests python3-yaml ...) not installed"

PORT=$((20000 + RANDOM % 20000))
PREFIX=otgbusy$$
URL="http://127.0.0.1:$PORT"
"$SURGE" otg --no-huge --file-prefix "$PREFIX" --stats-interval 1 --http --listen "127.0.0.1:$PORT" \
  --vdev net_null0,no-rx=1 > "$TMP/srv.log" 2>&1 &
SRV=$!
on_exit "kill -KILL $SRV 2>/dev/null"
PYTHONPATH="$PEERS" timeout 60 /usr/bin/python3 "$SURGE_SRC/bench/otg-flow.py" "$URL" net_null0 60 1024 --wait \
  > "$TMP/drv.log" 2>&1
check "snappi: config set and traffic started" "started" "$(grep -v WARNING "$TMP/drv.log")"
sleep 3.5
# telemetry's figure, since the task started (most of it sending)
TASKS=$(PYTHONPATH="$SURGE_SRC/bench" timeout 20 python3 -c '
import json, sys
from surgebench.telemetry import connect
s = connect(sys.argv[1], 10)
s.send(b"/surge/tasks")
print(json.dumps(json.loads(s.recv(65536).decode())))' "/var/run/dpdk/$PREFIX/dpdk_telemetry.v2" 2>&1)
echo "  telemetry /surge/tasks: $TASKS"
TPCT=$(echo "$TASKS" | python3 -c '
import json, sys
d = json.load(sys.stdin)["/surge/tasks"]
print(" ".join(str(v) for k, v in d.items() if k.endswith("_idle_pct")))')
check_match "telemetry: the sending task's idle % is one figure" "^[0-9]+$" "$TPCT"
[ -n "$TPCT" ] && [ "$TPCT" -lt 50 ] 2>/dev/null; check "telemetry: the sending task is under 50 % idle ($TPCT)" 0 "$?"
SENDING=$(grep "idle: lcore" "$TMP/srv.log" | tail -1)
echo "  stats line while sending: $SENDING"
PCT=$(echo "$SENDING" | sed -n 's/.*idle: lcore [0-9]* *\([0-9.]*\)%.*/\1/p')
awk -v p="$PCT" 'BEGIN { exit !(p != "" && p < 50) }'
check "stats line: the sending task is under 50 % idle ($PCT)" 0 "$?"
PYTHONPATH="$PEERS" timeout 60 /usr/bin/python3 -c '
import sys, snappi
api = snappi.api(location=sys.argv[1], verify=False)
cs = api.control_state()
cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.PAUSE
api.set_control_state(cs)' "$URL" > "$TMP/stop.log" 2>&1
check "snappi: traffic paused" 0 "$?"
N=$(grep -c "idle: lcore" "$TMP/srv.log")
sleep 3.5
STOPPED=$(tail -n +"$((N + 2))" "$TMP/srv.log" | grep "idle: lcore" | tail -1)
echo "  stats line once paused: $STOPPED"
PCT=$(echo "$STOPPED" | sed -n 's/.*idle: lcore [0-9]* *\([0-9.]*\)%.*/\1/p')
awk -v p="$PCT" 'BEGIN { exit !(p != "" && p > 90) }'
check "stats line: the paused task is over 90 % idle ($PCT)" 0 "$?"
kill -TERM "$SRV"; wait "$SRV"; RC=$?
check "SIGTERM: exit 0 (traffic stopped, pools full)" 0 "$RC"
check_match "the pools checked: every mbuf back" "mbufs back, no leak" "$(cat "$TMP/srv.log")"
finish
