#!/bin/bash
# test_otg_mesh.sh - OTG flows between several device endpoints
# (tx_rx.device mesh and one_to_one; tests/e2e/otg/mesh.py), driven by the
# real snappi: in a network namespace of this test's own, veth B-C (both
# surge's ports, two devices on each) and veths A-K, D-E (surge's A and D, the
# kernel's K 192.0.2.1/24 and E 10.9.0.1/24, forwarding between them: the
# gateway of the devices on A and D). tshark on captures of C and D counts
# each flow's frames per address pair; refusals by path; then SIGTERM:
# exit 0, every mbuf back.
source "$(dirname "$0")/lib.sh"
need_root
need_cmd ip
need_cmd tshark
need_cmd dumpcap
need_cmd ping
PEERS="$SURGE_SRC/../shared/peers/otg"
[ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
/usr/bin/python3 -c 'import requests, yaml, semantic_version' 2>/dev/null || skip "snappi's modules not installed"
NS=otgm$$n
A=otgm$$a K=otgm$$k D=otgm$$d E=otgm$$e B=otgm$$b C=otgm$$c
ip netns add "$NS" 2>/dev/null || skip "cannot create a network namespace"
trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$TMP"' EXIT
IN=(ip netns exec "$NS")
"${IN[@]}" ip link set lo up
for pair in "$A $K" "$D $E" "$B $C"; do
  set -- $pair
  "${IN[@]}" ip link add "$1" type veth peer name "$2" || skip "cannot create a veth pair"
done
# the kernel speaks on K and E alone, and forwards between them
for i in "$A" "$D" "$B" "$C"; do "${IN[@]}" sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"; done
for i in "$A" "$K" "$D" "$E" "$B" "$C"; do "${IN[@]}" ip link set "$i" up; done
"${IN[@]}" ip addr add 192.0.2.1/24 dev "$K"
"${IN[@]}" ip addr add 10.9.0.1/24 dev "$E"
"${IN[@]}" sysctl -qw net.ipv4.ip_forward=1
sleep 0.3
PORT=$((20000 + RANDOM % 20000))
"${IN[@]}" "$SURGE" otg --no-huge --stats-interval 0 --http --listen "127.0.0.1:$PORT" > "$TMP/srv.log" 2>&1 &
SRV=$!
for _ in $(seq 100); do grep -q "serving the OTG API" "$TMP/srv.log" && break; sleep 0.2; done
"${IN[@]}" env PYTHONPATH="$PEERS:$SURGE_SRC/tests/e2e/otg" timeout 120 /usr/bin/python3 \
  "$SURGE_SRC/tests/e2e/otg/mesh.py" "http://127.0.0.1:$PORT" "$A" "$D" "$B" "$C" "$TMP/d.pcap" "$TMP/c.pcap" "$E" \
  > "$TMP/py.log" 2>&1
check "mesh.py: every check passed" 0 "$?"
grep -v WARNING "$TMP/py.log" | sed 's/^/  /'
kill -TERM "$SRV"; wait "$SRV"
check "SIGTERM: exit 0 (pools full)" 0 "$?"
check_match "no mbuf leaked" "mbufs back, no leak" "$(cat "$TMP/srv.log")"
finish
