#!/usr/bin/env bash
# bench/conn-kernel.sh - the kernel row of scripts/bench-conn (run by the
# harness, bench/surgebench/conn.py): nginx (one worker, CPU 1) in the
# network namespace NS behind a veth pair, ab (new connection per request)
# and wrk (keep-alive) on CPU 0, nstat's TcpPassiveOpens from outside; then
# the SYN count from outside: a capture of SYNs on the server's veth around
# 10 000 connections of ab and then of surge's client. Writes its logs into
# TMP (kernel-*.log), read by the harness; the harness deletes NS on exit.
#
#   bench/conn-kernel.sh TMP NS SURGE DURATION ID
set -uo pipefail
TMP=$1 NS=$2 SURGE=$3 DURATION=$4 ID=$5
# nginx lives as long as this row: stopped (and reaped) on every exit
NGINX=
stop_nginx() { [ -z "$NGINX" ] || { kill -TERM "$NGINX" 2>/dev/null; wait "$NGINX" 2>/dev/null; }; return 0; }
trap stop_nginx EXIT
trap 'exit 130' INT TERM
# run_kernel: nginx in $NS (10.77.0.1, CPU 1) against ab, then wrk (CPU 0)
run_kernel() {
  local d=$TMP/nginx
  mkdir -p "$d"
  ip netns add "$NS" && ip link add dpbc0 type veth peer name dpbc1 && ip link set dpbc1 netns "$NS" &&
  ip addr add 10.77.0.2/24 dev dpbc0 && ip link set dpbc0 up &&
  ip netns exec "$NS" ip addr add 10.77.0.1/24 dev dpbc1 && ip netns exec "$NS" ip link set dpbc1 up &&
  ip netns exec "$NS" ip link set lo up || return 1
  cat > "$d/nginx.conf" <<NGX
daemon off; pid $d/nginx.pid; error_log $d/error.log; worker_processes 1;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000;
  server { listen 10.77.0.1:80 reuseport backlog=4096; location / { return 200 "hello dperf!"; } } }
NGX
  ip netns exec "$NS" taskset -c 1 nginx -c "$d/nginx.conf" -p "$d" 2>"$TMP/nginx.log" &
  NGINX=$!
  for _ in $(seq 50); do curl -s -o /dev/null http://10.77.0.1/ && break; sleep 0.1; done
  ip netns exec "$NS" nstat -n
  taskset -c 0 ab -q -t "$DURATION" -n 100000000 -c 32 http://10.77.0.1/ > "$TMP/kernel-ab.log" 2>&1
  ip netns exec "$NS" nstat -az TcpPassiveOpens > "$TMP/kernel-nstat.log"
  taskset -c 0 wrk -t1 -c 64 -d "${DURATION}s" http://10.77.0.1/ > "$TMP/kernel-wrk.log" 2>&1
  command -v dumpcap >/dev/null && command -v tshark >/dev/null || {
    echo "bench-conn: no SYN capture: no dumpcap/tshark (apt-get install tshark)" >&2; return 0; }
  # the kernel's frames reach surge's af_packet port with their checksums
  # filled in (no CHECKSUM_PARTIAL); ab's figures above are already taken
  ip netns exec "$NS" ethtool -K dpbc1 tx off >/dev/null 2>&1
  syn_capture ab taskset -c 0 ab -q -n 10000 -c 32 http://10.77.0.1/
  syn_capture surge taskset -c 0 "$SURGE" run --no-huge --stats-interval 0 --file-prefix "bc-k-$ID" --lcores '0@0,1@0' \
    --vdev net_af_packet0,iface=dpbc0 examples/http-get.lua --src 10.77.0.3 --mac 02:00:00:77:00:03 \
    --server 10.77.0.1 --connections 10000 --rate 10000 --concurrency 1024
}

# syn_capture NAME CMD...: CMD under a capture of the SYNs arriving at the
# server's veth: $TMP/kernel-NAME.log (CMD's output), kernel-NAME-syn.log
# ("syn=FRAMES first=DISTINCT dropped=N opens=M": the capture's own drop
# count, the namespace's TcpPassiveOpens over the capture)
syn_capture() {
  local name=$1; shift
  ip netns exec "$NS" dumpcap -q -i dpbc1 -f 'tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn' \
    -w "$TMP/kernel-$name.pcapng" 2>"$TMP/kernel-$name-dumpcap.log" &
  local cap=$!
  for _ in $(seq 50); do grep -q "Capturing on" "$TMP/kernel-$name-dumpcap.log" && break; sleep 0.1; done
  ip netns exec "$NS" nstat -n
  "$@" > "$TMP/kernel-$name.log" 2>&1 ||
    { echo "bench-conn: the SYN capture's $name run failed:" >&2; grep -v '^ \|^surge: ' "$TMP/kernel-$name.log" | head -3 >&2; }
  sleep 0.5; kill -INT $cap; wait $cap 2>/dev/null
  local opens; opens=$(ip netns exec "$NS" nstat -z TcpPassiveOpens | awk '$1 == "TcpPassiveOpens" { print $2 }')
  tshark -r "$TMP/kernel-$name.pcapng" -T fields -e tcp.srcport -e tcp.seq_raw 2>/dev/null > "$TMP/kernel-$name-syns.txt"
  echo "syn=$(wc -l < "$TMP/kernel-$name-syns.txt") first=$(sort -u "$TMP/kernel-$name-syns.txt" | wc -l)" \
    "dropped=$(sed -n "s/.*received\/dropped on interface.*: [0-9]*\/\([0-9]*\).*/\1/p" \
      "$TMP/kernel-$name-dumpcap.log" | head -1) opens=$opens" > "$TMP/kernel-$name-syn.log"
}

run_kernel
