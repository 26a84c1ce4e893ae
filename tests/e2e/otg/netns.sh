# otg/netns.sh - what the OTG tests against the kernel do alike (sourced after
# lib.sh by test_otg_devices.sh and test_otg_action.sh): the snappi of
# ../shared/peers/otg (PEERS), a network namespace of the test's own ($NS,
# IN=(ip netns exec NS), removed on exit) holding veth A (surge's port: no
# IPv6 of the kernel's) to K (the kernel's: 192.0.2.1/24, 2001:db8:1::1/64),
# a `surge otg --http` in it, and its end.

# otg_netns A K: the namespace, the pair up, the kernel's addresses on K
otg_netns() {
  A=$1 K=$2
  need_root
  need_cmd ip
  need_cmd tshark
  need_cmd dumpcap
  need_cmd ping
  PEERS="$SURGE_SRC/../shared/peers/otg"
  [ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
  /usr/bin/python3 -c 'import requests, yaml, semantic_version' 2>/dev/null || skip "snappi's modules not installed"
  NS=otgns$$n
  ip netns add "$NS" 2>/dev/null || skip "cannot create a network namespace"
  trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$TMP"' EXIT
  IN=(ip netns exec "$NS")
  "${IN[@]}" ip link set lo up
  "${IN[@]}" ip link add "$A" type veth peer name "$K" || skip "cannot create a veth pair"
  "${IN[@]}" sysctl -qw "net.ipv6.conf.$A.disable_ipv6=1"
  "${IN[@]}" ip link set "$A" up
  "${IN[@]}" ip link set "$K" up
  "${IN[@]}" ip addr add 192.0.2.1/24 dev "$K"
  "${IN[@]}" ip -6 addr add 2001:db8:1::1/64 dev "$K" nodad
}

# otg_serve: `surge otg --http` in the namespace on a free port (PORT, SRV), serving
otg_serve() {
  PORT=$((20000 + RANDOM % 20000))
  "${IN[@]}" "$SURGE" otg --no-huge --stats-interval 0 --http --listen "127.0.0.1:$PORT" > "$TMP/srv.log" 2>&1 &
  SRV=$!
  for _ in $(seq 100); do grep -q "serving the OTG API" "$TMP/srv.log" && break; sleep 0.2; done
}

# otg_driver NAME ARGS...: tests/e2e/otg/NAME.py in the namespace against the server, checked
otg_driver() {
  local name=$1; shift
  "${IN[@]}" env PYTHONPATH="$PEERS:$SURGE_SRC/tests/e2e/otg" /usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/$name.py" \
    "http://127.0.0.1:$PORT" "$@" > "$TMP/py.log" 2>&1
  check "$name.py: every check passed" 0 "$?"
  grep -v WARNING "$TMP/py.log" | sed 's/^/  /'
}

# otg_end: SIGTERM to the server: exit 0, every mbuf back
otg_end() {
  kill -TERM "$SRV"; wait "$SRV"
  check "SIGTERM: exit 0 (pools full)" 0 "$?"
  check_match "no mbuf leaked" "mbufs back, no leak" "$(cat "$TMP/srv.log")"
}
