#!/bin/bash
# test_telemetry.sh - DPDK telemetry (core/report/telemetry.c): the stock client
# dpdk-telemetry.py reads /surge/... commands from a running surge at the
# socket of the documented prefix (--file-prefix NAME ->
# /var/run/dpdk/NAME/dpdk_telemetry.v2), and the values move between two
# reads half a second apart: queue packets, the custom counter, the latency
# receiver's probes. The queue counter agrees with DPDK's own /ethdev/stats.
. "$(dirname "$0")/lib.sh"
need_cmd dpdk-telemetry.py
need_cmd python3
PREFIX=surge-r11tel-$$
SOCK=/var/run/dpdk/$PREFIX/dpdk_telemetry.v2

timeout -k 5 60 "$SURGE" run --no-huge --file-prefix "$PREFIX" --vdev net_ring_live0 --lcores '(0-1)@(0-1)' --duration 8 \
  --stats-interval 0.5 "$E2E_DIR/results/live.lua" >"$TMP/live.out" 2>&1 &
TPID=$!
on_exit "kill -KILL $TPID"
check_true "the start-up line names the socket" "$(head -3 "$TMP/live.out")" \
  wait_for_text "$TMP/live.out" "telemetry: $SOCK \\(dpdk-telemetry.py -f $PREFIX" 20 "$TPID"
wait_for_text "$TMP/live.out" 'TX +[0-9.]+ Mpps' 20 "$TPID"
check "socket exists" yes "$([ -S "$SOCK" ] && echo yes || echo no)"

read_all() {  # one session of the stock client, one JSON reply per line
  printf '/surge/info\n/surge/tasks\n/surge/queues,0\n/surge/counters\n/surge/latency\n/surge/latency,0\n/ethdev/stats,0\n' |
    timeout 10 dpdk-telemetry.py -f "$PREFIX" 2>&1
}
read_all >"$TMP/r1"
sleep 0.5
read_all >"$TMP/r2"
CMP=$(python3 - "$TMP/r1" "$TMP/r2" <<'PY'
import json, sys
def load(p):
    d = {}
    for line in open(p):
        line = line.strip()
        if line.startswith("{"):
            for k, v in json.loads(line).items():
                d[k + ",id" if k in d else k] = v     # /surge/latency, then /surge/latency,0
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
out = []
out.append("info %s %s" % (b["/surge/info"]["running"], b["/surge/info"]["tasks"]))
out.append("task %s %s" % (b["/surge/tasks"]["lcore1_fn"], b["/surge/tasks"]["lcore1_state"]))
q1, q2 = a["/surge/queues"], b["/surge/queues"]
out.append("tx moves %s" % (q2["tx0_packets"] > q1["tx0_packets"] > 0))
out.append("rx moves %s" % (q2["rx0_packets"] > q1["rx0_packets"] > 0))
# the pacer's figures as surge.results reports them (accuracy is test_rate's business)
out.append("target %s achieved>0 %s" % (q2["tx0_target_pps"], 0 < q2["tx0_achieved_pps"] <= 60000))
c1, c2 = a["/surge/counters"], b["/surge/counters"]
out.append("counter moves %s %s" % (c2["tx_sent"] > c1["tx_sent"] > 0, c2["rx_seen"] > c1["rx_seen"] > 0))
out.append("receivers %s" % b["/surge/latency"])
l1, l2 = a["/surge/latency,id"], b["/surge/latency,id"]
out.append("probes move %s" % (l2["probes"] > l1["probes"] > 0))
out.append("p50<=p99<=max %s" % (0 < l2["p50_ns"] <= l2["p99_ns"] <= l2["max_ns"]))
# DPDK's own counter, read after surge's in the same session: never behind
out.append("ethdev >= surge %s" % (b["/ethdev/stats"]["opackets"] >= q2["tx0_packets"]))
print("\n".join(out))
PY
)
check "telemetry replies" "info 1 1
task tx running
tx moves True
rx moves True
target 50000 achieved>0 True
counter moves True True
receivers [0]
probes move True
p50<=p99<=max True
ethdev >= surge True" "$CMP"
[ "$CMP" = "" ] && { echo "--- client said:"; cat "$TMP/r2"; }
wait "$TPID"
check "run ends with exit 0" 0 "$?"
check "the prefix's folder is gone after the run" absent "$([ -e "/var/run/dpdk/$PREFIX" ] && echo present || echo absent)"

# hammer SOCK PID: three connections ask /surge/... in a loop, reconnecting,
# until surge (PID) is gone; prints how many replies came
cat >"$TMP/hammer.py" <<'PY'
import os, socket, sys, threading, time
sock, pid = sys.argv[1], int(sys.argv[2])
cmds = [b"/surge/info", b"/surge/tasks", b"/surge/queues,0", b"/surge/latency,0",
        b"/surge/latency", b"/surge/counters"]
replies = [0]
def alive():
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False
def worker():
    deadline = time.time() + 20
    while alive() and time.time() < deadline:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(sock)
            s.recv(16384)
            while True:
                for c in cmds:
                    s.send(c)
                    if not s.recv(16384):
                        raise OSError
                    replies[0] += 1
        except OSError:
            time.sleep(0.001)
ts = [threading.Thread(target=worker) for _ in range(3)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(replies[0])
PY
RUNS=6
GOOD=0
TALKED=0
for i in $(seq 1 $RUNS); do
  P=surge-r11tex-$$-$i
  timeout -k 5 30 "$SURGE" run --no-huge --file-prefix "$P" --vdev net_ring_live$i --lcores '(0-1)@(0-1)' \
    --duration 1 "$E2E_DIR/results/live.lua" >"$TMP/end.out" 2>&1 &
  SPID=$!
  python3 "$TMP/hammer.py" "/var/run/dpdk/$P/dpdk_telemetry.v2" "$SPID" >"$TMP/hammer.out" 2>&1 &
  HPID=$!
  wait "$SPID"
  RC=$?
  wait "$HPID"
  OUT=$(cat "$TMP/end.out")
  N=$(cat "$TMP/hammer.out")
  case $N in *[!0-9]* | "") N=0 ;; esac
  [ "$N" -gt 0 ] && TALKED=$((TALKED + 1))
  if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | grep -q '^surge: summary over' &&
     printf '%s\n' "$OUT" | grep -Eq '^surge: pool [0-9]+: ([0-9]+) of \1 mbufs back, no leak$' &&
     ! printf '%s\n' "$OUT" | grep -Eq "$CRASH_RE"; then
    GOOD=$((GOOD + 1))
  else
    echo "--- run $i: exit $RC, $N replies:"; printf '%s\n' "$OUT" | tail -8
  fi
  rm -rf "/var/run/dpdk/$P"
done
check "runs ending under telemetry clients: exit 0, summary, every pool full" "$RUNS" "$GOOD"
check "the clients were answered in every run" "$RUNS" "$TALKED"
finish
