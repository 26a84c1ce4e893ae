#!/bin/bash
# test_otg_devices.sh - OTG devices (tests/e2e/otg/devices.py): in a network
# namespace of this test's own, veth A (surge's port) to K (the kernel's,
# 192.0.2.1/24 and 2001:db8:1::1/64) and veth B to C (both surge's ports).
# The device on A resolves the kernel's addresses and the kernel learns the
# device's (ARP, ND, surge.dut.neigh answering); the devices on B and C
# resolve each other and flows between them carry their MACs and
# addresses (tshark on a capture of C); refusals by path.
source "$(dirname "$0")/lib.sh"
need_root
need_cmd ip
need_cmd tshark
need_cmd dumpcap
need_cmd ping
PEERS="$SURGE_SRC/../shared/peers/otg"
[ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
/usr/bin/python3 -c 'import requests, yaml, semantic_version' 2>/dev/null || skip "snappi's modules not installed"
NS=otgd$$n
A=otgd$$a K=otgd$$k B=otgd$$b C=otgd$$c
ip netns add "$NS" 2>/dev/null || skip "cannot create a network namespace"
trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$TMP"' EXIT
IN=(ip netns exec "$NS")
"${IN[@]}" ip link set lo up
"${IN[@]}" ip link add "$A" type veth peer name "$K" || skip "cannot create a veth pair"
"${IN[@]}" ip link add "$B" type veth peer name "$C" || skip "cannot create a veth pair"
# the kernel speaks on K alone: surge's ports carry no address and no IPv6 of the kernel's
for i in "$A" "$B" "$C"; do "${IN[@]}" sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"; done
for i in "$A" "$K" "$B" "$C"; do "${IN[@]}" ip link set "$i" up; done
"${IN[@]}" ip addr add 192.0.2.1/24 dev "$K"
"${IN[@]}" ip -6 addr add 2001:db8:1::1/64 dev "$K" nodad
sleep 0.3
PORT=$((20000 + RANDOM % 20000))
"${IN[@]}" "$SURGE" otg --no-huge --stats-interval 0 --http --listen "127.0.0.1:$PORT" > "$TMP/srv.log" 2>&1 &
SRV=$!
for _ in $(seq 100); do grep -q "serving the OTG API" "$TMP/srv.log" && break; sleep 0.2; done
"${IN[@]}" env PYTHONPATH="$PEERS:$SURGE_SRC/tests/e2e/otg" /usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/devices.py" \
  "http://127.0.0.1:$PORT" "$A" "$K" "$B" "$C" "$TMP/c.pcap" > "$TMP/py.log" 2>&1
check "devices.py: every check passed" 0 "$?"
grep -v WARNING "$TMP/py.log" | sed 's/^/  /'
kill -TERM "$SRV"; wait "$SRV"
check "SIGTERM: exit 0 (pools full)" 0 "$?"
check_match "no mbuf leaked" "mbufs back, no leak" "$(cat "$TMP/srv.log")"
finish
