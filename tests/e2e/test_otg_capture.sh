#!/bin/bash
# test_otg_capture.sh - the bytes `surge otg` sends for the stacks and field
# patterns of a snappi config, judged by tshark: tests/e2e/otg/capture.py
# sets two flows on a port whose location is a net_pcap device string
# (hot-plugged; it writes what it sends), one flow per stack
# (ethernet/ipv4/udp and ethernet/vlan/ipv6/tcp) with value, values,
# increment and decrement patterns; both share the device's one TX queue.
# Every frame's fields, lengths and checksums are checked in order.
source "$(dirname "$0")/lib.sh"
need_cmd tshark
PEERS="$SURGE_SRC/../shared/peers/otg"
[ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
/usr/bin/python3 -c 'import requests, yaml, semantic_version' 2>/dev/null || skip "snappi's modules not installed"
PCAP="$TMP/otg.pcap"
# net_pcap's rx side reads a file: an empty capture
/usr/bin/python3 -c "import struct,sys; open(sys.argv[1],'wb').write(struct.pack('<IHHiIII',0xa1b2c3d4,2,4,0,0,65535,1))" \
  "$PCAP.in"
PORT=$((20000 + RANDOM % 20000))
"$SURGE" otg --no-huge --stats-interval 0 --http --listen "127.0.0.1:$PORT" > "$TMP/srv.log" 2>&1 &
SRV=$!
for _ in $(seq 100); do grep -q "serving the OTG API" "$TMP/srv.log" && break; sleep 0.2; done
PYTHONPATH="$PEERS" /usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/capture.py" "http://127.0.0.1:$PORT" "$PCAP" \
  > "$TMP/py.log" 2>&1
check "capture.py: exit 0" 0 "$?"
OUT=$(grep -v WARNING "$TMP/py.log")
echo "$OUT" | sed 's/^/  /'
check_match "fa: transmit stopped, 30 frames of 100 B sent" "^fa transmit stopped frames_tx 30 bytes_tx 3000$" "$OUT"
check_match "fb: transmit stopped, 24 frames of 120 B sent" "^fb transmit stopped frames_tx 24 bytes_tx 2880$" "$OUT"
kill -TERM "$SRV"; wait "$SRV"
check "SIGTERM: exit 0 (the capture closed, pools full)" 0 "$?"

fields() {  # fields FILTER FIELD... : one line a frame, in order
  local filter=$1; shift
  local args=()
  for f in "$@"; do args+=(-e "$f"); done
  tshark_q -r "$PCAP" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE \
    -Y "$filter" -T fields -E separator=' ' "${args[@]}"
}
# (tshark 4.0: checksum status 1 = good)
# fa: ip.src increment 10.0.0.1 step 1 x5, udp.dst_port values 5000 5001 5002 (each on its own cycle)
WANT=$(for k in $(seq 0 29); do
  echo "96 02:bb:00:00:00:02 10.0.0.$((1 + k % 5)) 10.9.9.9 7 4321 $((5000 + k % 3)) 1 1"; done)
GOT=$(fields "eth.src == 02:aa:00:00:00:01" frame.len eth.dst ip.src ip.dst ip.ttl udp.srcport udp.dstport \
  ip.checksum.status udp.checksum.status)
check "fa: 30 frames, every field as the patterns say, checksums good (tshark)" "$WANT" "$GOT"
# fb: vlan.id decrement 100 x4, priority 5, ipv6.dst increment ::10 x3, tcp.dst_port increment 8000 step 2 x2
WANT=$(for k in $(seq 0 23); do
  echo "116 $((100 - k % 4)) 5 2001:db8::1 2001:db8::$((10 + k % 3)) 9 80 $((8000 + 2 * (k % 2))) 1"; done)
GOT=$(fields "eth.src == 02:aa:00:00:00:03" frame.len vlan.id vlan.priority ipv6.src ipv6.dst ipv6.hlim \
  tcp.srcport tcp.dstport tcp.checksum.status)
check "fb: 24 frames, every field as the patterns say, TCP checksum good (tshark)" "$WANT" "$GOT"
finish
