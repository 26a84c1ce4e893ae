#!/bin/bash
# test_otg_veth.sh - `surge otg` with ports whose locations are Linux
# interface names (net_af_packet hot-plugged at set_config): the two ends of
# a veth pair made for this test, inside a network namespace of its own
# (IPv6 off: the kernel sends nothing of its own), driven by snappi from
# that namespace. A flow each way (tests/e2e/otg/pair.py): counts exact on
# the receiving end, and the kernel's own counters agree.
source "$(dirname "$0")/lib.sh"
need_root
need_cmd ip
PEERS="$SURGE_SRC/../shared/peers/otg"
[ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
/usr/bin/python3 -c 'import requests, yaml, semantic_version' 2>/dev/null || skip "snappi's modules not installed"
NS=otgv$$n
A=otgv$$a
B=otgv$$b
ip netns add "$NS" 2>/dev/null || skip "cannot create a network namespace"
trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$TMP"' EXIT
IN=(ip netns exec "$NS")
"${IN[@]}" ip link set lo up
"${IN[@]}" ip link add "$A" type veth peer name "$B" || skip "cannot create a veth pair"
for i in "$A" "$B"; do
  "${IN[@]}" sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
  "${IN[@]}" ip link set "$i" up mtu 1500
done
sleep 0.3
PORT=$((20000 + RANDOM % 20000))
"${IN[@]}" "$SURGE" otg --no-huge --stats-interval 0 --http --listen "127.0.0.1:$PORT" > "$TMP/srv.log" 2>&1 &
SRV=$!
for _ in $(seq 100); do grep -q "serving the OTG API" "$TMP/srv.log" && break; sleep 0.2; done
rx0=$("${IN[@]}" cat "/sys/class/net/$B/statistics/rx_packets")
"${IN[@]}" env PYTHONPATH="$PEERS" /usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/pair.py" "http://127.0.0.1:$PORT" \
  "$A" "$B" > "$TMP/py.log" 2>&1
check "pair.py: every check passed" 0 "$?"
grep -v WARNING "$TMP/py.log" | sed 's/^/  /'
rx1=$("${IN[@]}" cat "/sys/class/net/$B/statistics/rx_packets")
check "$B (the kernel's count) received the 2000 frames of flow ab" 2000 "$((rx1 - rx0))"
kill -TERM "$SRV"; wait "$SRV"
check "SIGTERM: exit 0 (pools full)" 0 "$?"
check_match "af_packet ports were hot-plugged for the interface names" "mbufs back, no leak" "$(cat "$TMP/srv.log")"
finish
