# conn_lib.sh - the TCP tests' peer (sourced after lib.sh): a veth pair
# between two network namespaces made for the test, removed on exit.
#   conn_pair TAG [6]  -> $NS_K (the kernel's side: 10.1.0.1/24 on $IF_K;
#                         with 6, 2001:db8:1::1/64 too, IPv6 on there only),
#                         $NS_S (surge's side: $IF_S, no address: its
#                         kernel ignores what surge sends and receives)
#   in_k CMD...        runs CMD in the kernel's namespace
#   surge_ns           SURGE becomes a wrapper that runs surge in $NS_S
# Both ends have IPv6 off and transmit checksum offload off: the
# kernel's TCP would otherwise hand af_packet frames whose checksum is
# still to be filled in (CHECKSUM_PARTIAL), which DPDK's net_af_packet
# passes on as they are.
conn_pair() {
  local tag=$1 six=${2:-}
  need_root
  need_cmd ip
  need_cmd ethtool
  NS_K=${tag}k$$ NS_S=${tag}s$$ IF_K=${tag}$$k IF_S=${tag}$$s
  ip netns add "$NS_K" 2>/dev/null || skip "cannot create a network namespace"
  on_exit "ip netns del $NS_K"
  ip netns add "$NS_S" || skip "cannot create a network namespace"
  on_exit "ip netns del $NS_S"
  ip link add "$IF_K" netns "$NS_K" type veth peer name "$IF_S" netns "$NS_S" || skip "cannot create a veth pair"
  local ns
  for ns in "$NS_K" "$NS_S"; do
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip netns exec "$ns" ip link set lo up
  done
  in_k ip link set "$IF_K" up
  ip netns exec "$NS_S" ip link set "$IF_S" up
  in_k ethtool -K "$IF_K" tx off >/dev/null
  ip netns exec "$NS_S" ethtool -K "$IF_S" tx off >/dev/null
  in_k ip addr add 10.1.0.1/24 dev "$IF_K"
  if [ "$six" = 6 ]; then
    # no router solicitations, no address configuration: only the test's traffic
    in_k sysctl -qw "net.ipv6.conf.$IF_K.disable_ipv6=0" "net.ipv6.conf.$IF_K.accept_ra=0" \
      "net.ipv6.conf.$IF_K.autoconf=0" "net.ipv6.conf.$IF_K.router_solicitations=0"
    in_k ip addr add 2001:db8:1::1/64 dev "$IF_K" nodad
  fi
  VDEV="net_af_packet0,iface=$IF_S"
}
in_k() { ip netns exec "$NS_K" "$@"; }
# http_body N: the N-byte body surge.conn.http.body(n) makes (http_response{ body = N }'s), on stdout
http_body() {
  python3 -c '
import sys
n = int(sys.argv[1]); line = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\n"
sys.stdout.write((line * (n // len(line) + 1))[:n])' "$1"
}
# check_answers DESC PID CMD...: CMD in the kernel's namespace until it
# succeeds (100 tries 0.1 s apart, while PID, surge in the background with
# its output in $TMP/s.out and s.err, runs); the test ends there when it never does
check_answers() {
  local desc=$1 pid=$2 up=no i
  shift 2
  for i in $(seq 100); do
    in_k "$@" >/dev/null 2>&1 && { up=yes; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  check "$desc" yes "$up"
  [ "$up" = yes ] || { cat "$TMP/s.out" "$TMP/s.err" | tail; finish; }
}
# stop_surge PID: that surge stopped as Ctrl-C would and waited for: RC, OUT, ERR
stop_surge() {
  kill -INT "$1"
  wait "$1"
  RC=$?
  OUT=$(cat "$TMP/s.out") ERR=$(cat "$TMP/s.err")
}
# check_neigh DESC 4|6: the kernel's neighbours on $IF_K hold each line
# "ADDRESS MAC" of $TMP/expected (the first missing ones shown)
check_neigh() {
  local missing
  in_k ip -"$2" neigh show dev "$IF_K" | awk '$2 == "lladdr" && $4 != "FAILED" && $4 != "INCOMPLETE" { print $1, $3 }' \
    | sort >"$TMP/neigh"
  sort "$TMP/expected" >"$TMP/expected.s"
  missing=$(comm -23 "$TMP/expected.s" "$TMP/neigh" | wc -l)
  check "$1" 0 "$missing"
  [ "$missing" = 0 ] || comm -23 "$TMP/expected.s" "$TMP/neigh" | head -5
}
# neigh_room 4|6: the kernel's neighbour table (one for every namespace)
# forgets entries older than 5 s past gc_thresh2 and refuses new ones past
# gc_thresh3: room for a test's thousands of hosts (restored on exit)
neigh_room() {
  local k old
  for k in 2 3; do
    old=$(sysctl -n "net.ipv$1.neigh.default.gc_thresh$k")
    if [ "$old" -lt 16384 ]; then
      sysctl -qw "net.ipv$1.neigh.default.gc_thresh$k=16384"
      on_exit "sysctl -qw net.ipv$1.neigh.default.gc_thresh$k=$old"
    fi
  done
}
# A capture of the kernel's side into FILE (pcapng) until stop_capture.
start_capture() {
  need_cmd dumpcap
  ip netns exec "$NS_K" dumpcap -i "$IF_K" -w "$1" 2>"$TMP/dumpcap.err" &
  CAP_PID=$!
  on_exit "kill $CAP_PID"
  wait_for_text "$TMP/dumpcap.err" "Capturing on" 5 || sleep 1
}
stop_capture() { sleep 0.3; kill -TERM "$CAP_PID"; wait "$CAP_PID" 2>/dev/null; }
surge_ns() {
  printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "$NS_S" "$SURGE" >"$TMP/surge-ns"
  chmod +x "$TMP/surge-ns"
  SURGE=$TMP/surge-ns
}
# nginx in the kernel's namespace on 10.1.0.1:80 (and [2001:db8:1::1]:80
# with NGX_LISTEN6='listen [2001:db8:1::1]:80;') answering "hello\n" (PEERS.md's recipe),
# and /missing with a 404 (test_conn_nginx.sh's --mix run).
start_nginx() {
  need_cmd nginx
  NGX=$TMP/nginx
  mkdir -p "$NGX"
  cat >"$NGX/nginx.conf" <<EOC
daemon off; pid $NGX/nginx.pid; error_log $NGX/error.log; worker_processes 1;
events { worker_connections 4096; }
http { log_format surge '\$remote_addr "\$request" \$status \$body_bytes_sent port=\$remote_port';
  access_log $NGX/access.log surge; keepalive_requests 100000;
  server { listen 10.1.0.1:80 backlog=4096; ${NGX_LISTEN6:-} location / { return 200 "hello\n"; }
    location /missing { return 404 "no\n"; } } }
EOC
  # (not through in_k: a function in the background is a subshell, and $! its pid)
  ip netns exec "$NS_K" nginx -c "$NGX/nginx.conf" -p "$NGX" &
  NGX_PID=$!
  on_exit "kill $NGX_PID"
  local i
  for i in $(seq 50); do in_k ss -ltn 2>/dev/null | grep -q '10.1.0.1:80 ' && return 0; sleep 0.1; done
  skip "nginx did not start: $(cat "$NGX/error.log" 2>/dev/null | tail -1)"
}
