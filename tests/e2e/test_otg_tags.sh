#!/bin/bash
# test_otg_tags.sh - OTG metric tags and tagged metrics (tests/e2e/otg/tags.py),
# driven by the real snappi: in a network namespace of this test's own, the
# veth pair B-C (both surge's ports); a flow from B to C whose IPv4 source
# and UDP source port carry metric tags, its tagged metrics' counts as the
# pattern gives and as tshark counts them in a capture of C; the request's
# options and the refusals by path; then SIGTERM: exit 0, every mbuf back.
source "$(dirname "$0")/lib.sh"
need_root
need_cmd ip
need_cmd tshark
need_cmd dumpcap
PEERS="$SURGE_SRC/../shared/peers/otg"
[ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
/usr/bin/python3 -c 'import requests, yaml, semantic_version' 2>/dev/null || skip "snappi's modules not installed"
NS=otgt$$n
B=otgt$$b C=otgt$$c
ip netns add "$NS" 2>/dev/null || skip "cannot create a network namespace"
trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$TMP"' EXIT
IN=(ip netns exec "$NS")
"${IN[@]}" ip link set lo up
"${IN[@]}" ip link add "$B" type veth peer name "$C" || skip "cannot create a veth pair"
for i in "$B" "$C"; do "${IN[@]}" sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"; "${IN[@]}" ip link set "$i" up; done
PORT=$((20000 + RANDOM % 20000))
"${IN[@]}" "$SURGE" otg --no-huge --stats-interval 0 --http --listen "127.0.0.1:$PORT" > "$TMP/srv.log" 2>&1 &
SRV=$!
for _ in $(seq 100); do grep -q "serving the OTG API" "$TMP/srv.log" && break; sleep 0.2; done
"${IN[@]}" env PYTHONPATH="$PEERS:$SURGE_SRC/tests/e2e/otg" timeout 120 /usr/bin/python3 \
  "$SURGE_SRC/tests/e2e/otg/tags.py" "http://127.0.0.1:$PORT" "$B" "$C" "$TMP/c.pcap" > "$TMP/py.log" 2>&1
check "tags.py: every check passed" 0 "$?"
grep -v WARNING "$TMP/py.log" | sed 's/^/  /'
kill -TERM "$SRV"; wait "$SRV"
check "SIGTERM: exit 0 (pools full)" 0 "$?"
check_match "no mbuf leaked" "mbufs back, no leak" "$(cat "$TMP/srv.log")"
finish
