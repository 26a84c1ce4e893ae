#!/bin/bash
# test_otg_portcap.sh - OTG captures, port link and layer1 through snappi
# (tests/e2e/otg/portcap.py) on two loopback net_ring ports: each port's
# capture read back through /monitor/capture and judged by tshark (p1 as
# pcap, p2 as pcapng cut at 60 bytes): the count exact, every frame's
# length as the flow's size less its FCS, its fields and checksums as the
# flow's headers say; link down and up, refusals by path.
source "$(dirname "$0")/lib.sh"
need_cmd tshark
PEERS="$SURGE_SRC/../shared/peers/otg"
[ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
/usr/bin/python3 -c 'import requests, yaml, semantic_version' 2>/dev/null || skip "snappi's modules not installed"
PORT=$((20000 + RANDOM % 20000))
export TMPDIR="$TMP"       # the server's capture folder, seen removed at exit
"$SURGE" otg --no-huge --stats-interval 0 --http --listen "127.0.0.1:$PORT" --vdev net_ring0 --vdev net_ring1 \
  > "$TMP/srv.log" 2>&1 &
SRV=$!
for _ in $(seq 100); do grep -q "serving the OTG API" "$TMP/srv.log" && break; sleep 0.2; done
PYTHONPATH="$PEERS:$SURGE_SRC/tests/e2e/otg" /usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/portcap.py" \
  "http://127.0.0.1:$PORT" "$TMP/cap" > "$TMP/py.log" 2>&1
check "portcap.py: every check passed" 0 "$?"
grep -v WARNING "$TMP/py.log" | sed 's/^/  /'
kill -TERM "$SRV"; wait "$SRV"
check "SIGTERM: exit 0" 0 "$?"
check_match "pools full at exit" "mbufs back, no leak" "$(cat "$TMP/srv.log")"
check "the capture folder removed at exit" "" "$(ls -d "$TMP"/surge-otg-capture.* 2>/dev/null)"

fields() {  # fields FILE FIELD... : one line a frame, in order
  local file=$1; shift
  local args=()
  for f in "$@"; do args+=(-e "$f"); done
  tshark_q -r "$file" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -T fields -E separator=' ' "${args[@]}"
}
ftype() { capinfos -t "$1" 2>/dev/null | sed -n 's/^File type: *//p'; }
check "p1's capture is pcap with nanosecond times (capinfos)" "Wireshark/tcpdump/... - nanosecond pcap" \
  "$(ftype "$TMP/cap.p1.pcap")"
# f1: 100 frames of 64 B with the FCS: 60 captured, udp.srcport 1000 + k
WANT=$(for k in $(seq 0 99); do echo "60 60 02:00:00:00:0a:01 198.18.0.1 198.19.0.1 $((1000 + k)) 7 1 1"; done)
GOT=$(fields "$TMP/cap.p1.pcap" frame.len frame.cap_len eth.src ip.src ip.dst udp.srcport udp.dstport \
  ip.checksum.status udp.checksum.status)
check "p1: 100 frames as f1 sent them, 60 bytes each (64 less the FCS), checksums good (tshark)" "$WANT" "$GOT"
# f2: 40 frames of 128 B: 124 on the wire, 60 kept (packet_size); pcapng
check "p2's capture is pcapng (capinfos)" "Wireshark/... - pcapng" "$(ftype "$TMP/cap.p2.pcapng")"
WANT=$(for k in $(seq 0 39); do echo "124 60 $((2000 + k)) 1"; done)
GOT=$(fields "$TMP/cap.p2.pcapng" frame.len frame.cap_len udp.srcport ip.checksum.status)
check "p2: 40 frames of f2, 124 bytes each cut at 60 (packet_size), IP checksum good (tshark)" "$WANT" "$GOT"
# the receive times: today's, in order (pcapng's 64-bit nanosecond stamps read back as pcap's)
NOW=$(date +%s)
for f in "$TMP/cap.p1.pcap" "$TMP/cap.p2.pcapng"; do
  T=$(fields "$f" frame.time_epoch)
  check "$(basename "$f"): times within a minute of now, never going back" "ok" \
    "$(echo "$T" | awk -v now="$NOW" '{ if ($1 < now - 60 || $1 > now + 60 || $1 < last) bad = 1; last = $1 }
      END { print (NR > 0 && !bad) ? "ok" : "bad" }')"
done
finish
