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
"$SURGE" otg --no-huge --stats-interval 0 --http --listen "127.0.0.1:$PORT" --vdev net_ring0 --vdev net_ring1 --vdev net_null0 \
  > "$TMP/srv.log" 2>&1 &
SRV=$!
on_exit "kill -KILL $SRV"      # a test cut short leaves no server
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

# a capture's bound (SURGE_OTG_CAPTURE_BYTES=20000: records of 16 + 60 bytes, 263 fit): overwrite
# (the default) keeps the newest frames, between half and all of the bound; without overwrite the first
SURGE_OTG_CAPTURE_BYTES=20000 "$SURGE" otg --no-huge --stats-interval 0 --http --listen "127.0.0.1:$((PORT + 1))" \
  --vdev net_ring0 --vdev net_ring1 > "$TMP/srv2.log" 2>&1 &
SRV=$!
on_exit "kill -KILL $SRV"      # a test cut short leaves no server
for _ in $(seq 100); do grep -q "serving the OTG API" "$TMP/srv2.log" && break; sleep 0.2; done
PYTHONPATH="$PEERS:$SURGE_SRC/tests/e2e/otg" /usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/portcap.py" \
  "http://127.0.0.1:$((PORT + 1))" "$TMP/bound" bound > "$TMP/py2.log" 2>&1
check "portcap.py bound: exit 0" 0 "$?"
kill -TERM "$SRV"; wait "$SRV"
P1=$(fields "$TMP/bound.p1.pcap" udp.srcport)
N1=$(echo "$P1" | grep -c .)
check "overwrite: the newest frames, consecutive, the last one 1999 (f1's last)" \
  "$(seq $((2000 - N1)) 1999)" "$P1"
check "overwrite: between half and all of the bound kept ($N1 frames)" "ok" \
  "$([ $((N1 * 76)) -ge 10000 ] && [ $((N1 * 76)) -le 20000 ] && echo ok)"
P2=$(fields "$TMP/bound.p2.pcap" udp.srcport)
N2=$(echo "$P2" | grep -c .)
check "no overwrite: the first frames, consecutive from 2000" "$(seq 2000 $((2000 + N2 - 1)))" "$P2"
check "no overwrite: as many as fit, short of the bound by less than a burst of 32 ($N2 frames)" "ok" \
  "$([ $((N2 * 76)) -le 20000 ] && [ $(((N2 + 32) * 76)) -gt 20000 ] && echo ok)"
finish
