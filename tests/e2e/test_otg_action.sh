#!/bin/bash
# test_otg_action.sh - OTG /control/action ping and /control/state
# protocol.all (tests/e2e/otg/action.py): in a network namespace of this
# test's own, veth A (surge's port) to K (the kernel's: 192.0.2.1/24,
# 2001:db8:1::1/64, and 203.0.113.1, 2001:db8:9::1 beyond the device's
# subnets). A device on A pings the kernel (succeeded), addresses nobody
# has (failed, in bounded time); tshark reads the echo requests on K; a
# device on veth B pings one on C (both surge's ports). First docs/otg.md's
# ping example, as written (veth-a, https://localhost:8443: the
# namespace's own names and port).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/otg/netns.sh"
otg_netns otga$$
A=veth-a K=veth-k B=veth-b C=veth-c     # names inside the namespace: no other test's
otg_veth "$A" "$K" kernel
otg_veth "$B" "$C"
"${IN[@]}" ip addr add 192.0.2.1/24 dev "$K"
"${IN[@]}" ip addr add 203.0.113.1/32 dev "$K"
"${IN[@]}" ip -6 addr add 2001:db8:1::1/64 dev "$K" nodad
"${IN[@]}" ip -6 addr add 2001:db8:9::1/128 dev "$K" nodad
sleep 0.3

echo "# docs/otg.md's ping example, as written"
awk '/^### Devices: protocol.all and ping/ { on = 1 } on && /^```python/ { grab = 1; next } grab && /^```/ { exit } grab' \
  "$SURGE_SRC/docs/otg.md" > "$TMP/example.py"
check_match "the example is there" "ping.requests.add" "$(cat "$TMP/example.py")"
"${IN[@]}" env XDG_STATE_HOME="$TMP/state" "$SURGE" otg --no-huge --stats-interval 0 > "$TMP/srv0.log" 2>&1 &
SRV=$!
for _ in $(seq 100); do grep -q "serving the OTG API" "$TMP/srv0.log" && break; sleep 0.2; done
OUT=$(cd "$TMP" && "${IN[@]}" env PYTHONPATH="$PEERS" timeout 60 /usr/bin/python3 example.py 2>&1 | grep -v WARNING)
check "the example prints what docs/otg.md says" "d1.ip4 192.0.2.1 succeeded
d1.ip4 192.0.2.99 failed" "$OUT"
kill -TERM "$SRV"; wait "$SRV"
check "the example's server: SIGTERM, exit 0" 0 "$?"

otg_serve
otg_drive action.py "$A" "$K" "$B" "$C" "$TMP/k.pcap"
otg_end
