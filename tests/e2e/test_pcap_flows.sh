#!/bin/bash
# test_pcap_flows.sh - udp-flood.lua writes through net_pcap; tshark checks
# every frame: count, addresses, ports, lengths, checksums, flow rotation.
. "$(dirname "$0")/lib.sh"
need_cmd tshark

TSHARK_CK=(-o ip.check_checksum:TRUE -o udp.check_checksum:TRUE)
FIELDS=(-T fields -E separator=' ' -e frame.len -e eth.type -e ip.src -e ip.dst -e ip.proto
        -e ip.len -e udp.length -e udp.dstport -e ip.checksum.status -e udp.checksum.status -e udp.srcport)
# fields: 1 frame.len 2 eth.type 3 ip.src 4 ip.dst 5 ip.proto 6 ip.len 7 udp.length
#         8 udp.dstport 9 ip.checksum.status 10 udp.checksum.status 11 udp.srcport

# fields PCAP: one line per frame (one tshark run per capture, it is slow to start)
fields() { tshark_q -r "$1" "${TSHARK_CK[@]}" "${FIELDS[@]}"; }
# count_good LEN SRC DST DPORT < fields: frames of that length, addresses and
# port, with coherent IP/UDP lengths and Good (1) IP and UDP checksums
count_good() {
  awk -v len="$1" -v s="$2" -v d="$3" -v dp="$4" '
    $1 == len && $2 == "0x0800" && $3 == s && $4 == d && $5 == 17 && $6 == len - 14 &&
    $7 == len - 34 && $8 == dp && $9 == 1 && $10 == 1 { n++ } END { print n + 0 }'
}
count_bad() { awk '$9 != 1 || $10 != 1 { n++ } END { print n + 0 }'; }   # < fields
sport_hist() { awk '{ print $11 }' | sort -n | uniq -c | awk '{ printf "%s%s:%s", sep, $2, $1; sep = " " }'; }

echo "# defaults, --count 1000 --flows 10"
run_surge 60 run --no-huge -q --vdev "net_pcap0,tx_pcap=$TMP/a.pcap" "$EXAMPLES/udp-flood.lua" --count 1000 --flows 10
check "surge exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check "summary: TX 1000 packets" 1000 "$(summary_count "$OUT" 0 TX)"
check_match "summary: tx-drops 0" 'port 0  tx-drops 0 ' "$OUT"
F=$(fields "$TMP/a.pcap")
check "tshark reads 1000 frames" 1000 "$(printf '%s\n' "$F" | grep -c .)"
check "all 1000: 60 B, IPv4/UDP 10.0.0.1 -> 10.0.0.2:5000, lengths, good checksums" 1000 \
  "$(printf '%s\n' "$F" | count_good 60 10.0.0.1 10.0.0.2 5000)"
check "no frame with a bad IP or UDP checksum" 0 "$(printf '%s\n' "$F" | count_bad)"
check "udp.srcport: 10 values 1024..1033, 100 each" \
  "1024:100 1025:100 1026:100 1027:100 1028:100 1029:100 1030:100 1031:100 1032:100 1033:100" \
  "$(printf '%s\n' "$F" | sport_hist)"
check "flows rotate: frame i has srcport 1024 + (i-1) % 10" 1000 \
  "$(printf '%s\n' "$F" | awk '$11 == 1024 + (NR - 1) % 10 { n++ } END { print n + 0 }')"

echo "# --size 128 --flows 4 --count 100"
run_surge 60 run --no-huge -q --vdev "net_pcap0,tx_pcap=$TMP/b.pcap" "$EXAMPLES/udp-flood.lua" --count 100 --flows 4 --size 128
check "surge exits 0" 0 "$RC"
check "summary: TX 100 packets, 12800 bytes" "TX 100 packets 12800 bytes" \
  "$(printf '%s\n' "$OUT" | grep -Eo 'TX [0-9]+ packets [0-9]+ bytes' | head -1)"
F=$(fields "$TMP/b.pcap")
check "all 100: 128 B, lengths, good checksums" 100 "$(printf '%s\n' "$F" | count_good 128 10.0.0.1 10.0.0.2 5000)"
check "no frame with a bad IP or UDP checksum" 0 "$(printf '%s\n' "$F" | count_bad)"
check "4 flows, 25 frames each" "1024:25 1025:25 1026:25 1027:25" "$(printf '%s\n' "$F" | sport_hist)"

echo "# other addresses and ports, --size 1000, --count 70 (not a multiple of --burst 32)"
run_surge 60 run --no-huge -q --vdev "net_pcap0,tx_pcap=$TMP/c.pcap" "$EXAMPLES/udp-flood.lua" --count 70 \
  --src 192.0.2.1 --dst 198.51.100.7 --sport 40000 --dport 53 --flows 3 --size 1000
check "surge exits 0" 0 "$RC"
check "summary: TX 70 packets" 70 "$(summary_count "$OUT" 0 TX)"
F=$(fields "$TMP/c.pcap")
check "all 70: 1000 B, 192.0.2.1 -> 198.51.100.7:53, lengths, good checksums" 70 \
  "$(printf '%s\n' "$F" | count_good 1000 192.0.2.1 198.51.100.7 53)"
check "3 flows from 40000" "40000:24 40001:23 40002:23" "$(printf '%s\n' "$F" | sport_hist)"
finish
