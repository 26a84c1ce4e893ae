#!/bin/bash
# test_jumbo_examples.sh - examples/replay.lua and examples/imix.lua open the
# port with the MTU their frames need (issue 7, point 17):
#   - a capture with 9000- and 5000-byte frames replays into net_pcap, and
#     tshark reads back the same frames, byte for byte; on net_null it sends
#     all of them;
#   - imix --sizes 9000 --max 9000 sends 9000-byte frames on net_null and
#     net_ring (exact packet and byte counts from the summary);
#   - a record no pool can hold (65535 bytes) is refused when the file is
#     read: one line naming the file and the record, exit status 1.
. "$(dirname "$0")/lib.sh"
need_cmd tshark
need_cmd python3

# mkpcap FILE SIZE...: an Ethernet pcap with one frame per SIZE, 1 ms apart
mkpcap() {
  python3 - "$@" <<'EOF'
import struct, sys
path, sizes = sys.argv[1], [int(s) for s in sys.argv[2:]]
with open(path, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
    for i, n in enumerate(sizes):
        frame = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5"
        frame += bytes((i * 31 + k * 7) % 256 for k in range(n - 14))
        f.write(struct.pack("<IIII", 1, i * 1000, n, n) + frame)
EOF
}

JUMBO=$TMP/jumbo.pcap
mkpcap "$JUMBO" 9000 64 5000 9018 1514
run_surge 60 run -q --no-huge --vdev "net_pcap0,tx_pcap=$TMP/out.pcap" "$EXAMPLES/replay.lua" \
  --port net_pcap0 --file "$JUMBO" --timing fast
check "jumbo replay into net_pcap: exit status" 0 "$RC"
[ "$RC" = 0 ] || show_run
check "jumbo replay: frame lengths read back" "9000 64 5000 9018 1514" \
  "$(tshark_q -r "$TMP/out.pcap" -T fields -e frame.len | tr '\n' ' ' | sed 's/ $//')"
check "jumbo replay: frames byte for byte" "$(pcap_hex "$JUMBO" | md5sum)" "$(pcap_hex "$TMP/out.pcap" | md5sum)"

run_surge 60 run -q --no-huge --vdev net_null0,no-rx=1 "$EXAMPLES/replay.lua" --file "$JUMBO" --timing fast
check "jumbo replay on net_null: exit status" 0 "$RC"
check_match "jumbo replay on net_null: all sent" "replay: sent 5 packets" "$OUT"

for dev in net_null0,no-rx=1 net_ring0; do
  run_surge 60 run --no-huge --vdev "$dev" "$EXAMPLES/imix.lua" --sizes 9000 --max 9000 --count 100
  check "imix 9000 on ${dev%%,*}: exit status" 0 "$RC"
  [ "$RC" = 0 ] || show_run
  check "imix 9000 on ${dev%%,*}: packets" 100 "$(summary_count "$OUT" 0 TX)"
  check_match "imix 9000 on ${dev%%,*}: bytes" "TX 100 packets 900000 bytes" "$OUT"
  check_pools "imix 9000 on ${dev%%,*}"
done

mkpcap "$TMP/huge.pcap" 64 65535
run_surge 60 run -q --no-huge --vdev net_null0,no-rx=1 "$EXAMPLES/replay.lua" --file "$TMP/huge.pcap"
check_user_error "record no pool holds"
check_match "record no pool holds: named" \
  "^pcap file '$TMP/huge\\.pcap': record 2 holds 65535 bytes, more than the 65407 bytes" "$(printf '%s\n' "$ERR" | grep -v '^EAL' | head -1)"
finish
