#!/bin/bash
# test_pcap_clones.sh - udp-flood.lua --clones 4 through net_pcap: --count is
# packets on the wire, each frame goes out 4 times in a row (same bytes), the
# flows still rotate per allocated packet, and every pool is full at the end.
. "$(dirname "$0")/lib.sh"
need_cmd tshark

echo "# --count 1000 --flows 10 --clones 4"
PCAP=$TMP/clones.pcap
# not -q: the pool lines are info lines
run_surge 60 run --no-huge --stats-interval 0 --vdev "net_pcap0,tx_pcap=$PCAP" "$EXAMPLES/udp-flood.lua" \
  --count 1000 --flows 10 --clones 4
check "surge exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check "summary: TX 1000 packets" 1000 "$(summary_count "$OUT" 0 TX)"
check_match "summary: tx-drops 0" 'port 0  tx-drops 0 ' "$OUT"
check_pools "clones"

F=$(tshark_q -r "$PCAP" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -T fields -E separator=' ' \
  -e frame.number -e udp.srcport -e udp.checksum -e ip.checksum.status -e udp.checksum.status -e frame.len)
check "tshark reads 1000 frames" 1000 "$(printf '%s\n' "$F" | grep -c .)"
check "every frame: good IP and UDP checksums, 60 B" 1000 \
  "$(printf '%s\n' "$F" | awk '$4 == 1 && $5 == 1 && $6 == 60 { n++ } END { print n + 0 }')"
check "udp.srcport: 10 values, 100 frames each" \
  "1024:100 1025:100 1026:100 1027:100 1028:100 1029:100 1030:100 1031:100 1032:100 1033:100" \
  "$(printf '%s\n' "$F" | awk '{ print $2 }' | sort -n | uniq -c | awk '{ printf "%s%s:%s", sep, $2, $1; sep = " " }')"
# group g (frames 4g+1..4g+4) is allocated packet g: srcport 1024 + g % 10
check "groups of 4 carry srcport 1024 + group % 10" 1000 \
  "$(printf '%s\n' "$F" | awk '$2 == 1024 + int((NR - 1) / 4) % 10 { n++ } END { print n + 0 }')"
check "consecutive groups differ in srcport and udp.checksum" 249 \
  "$(printf '%s\n' "$F" | awk 'NR % 4 == 1 { if (NR > 1 && ($2 != ps || $3 != pc)) n++; ps = $2; pc = $3 } END { print n + 0 }')"

# full frame bytes: the 4 frames of a group are identical
HEX=$(pcap_hex "$PCAP")
check "hex dump: 1000 frames" 1000 "$(printf '%s\n' "$HEX" | grep -c .)"
check "hex dump: each group of 4 frames is byte-identical" 250 \
  "$(printf '%s\n' "$HEX" | awk '{ f[(NR - 1) % 4] = $0 } NR % 4 == 0 { if (f[0] == f[1] && f[1] == f[2] && f[2] == f[3]) n++ }
      END { print n + 0 }')"
check "hex dump: 10 distinct frames in all (one per flow)" 10 \
  "$(printf '%s\n' "$HEX" | sort -u | wc -l | tr -d ' ')"

echo "# --count 64 --clones 16 --burst 1 (one packet per burst)"
run_surge 60 run --no-huge --stats-interval 0 --vdev "net_pcap0,tx_pcap=$TMP/c16.pcap" "$EXAMPLES/udp-flood.lua" \
  --count 64 --flows 2 --clones 16 --burst 1
check "surge exits 0" 0 "$RC"
check "summary: TX 64 packets" 64 "$(summary_count "$OUT" 0 TX)"
check_pools "clones 16"
check "srcports in runs of 16: 1024 1025 1024 1025" "1024:16 1025:16 1024:16 1025:16" \
  "$(tshark_q -r "$TMP/c16.pcap" -T fields -e udp.srcport | uniq -c | awk '{ printf "%s%s:%s", sep, $2, $1; sep = " " }')"

echo "# --count 1001 --clones 4: refused"
run_surge 60 run --no-huge -q --vdev "net_pcap0,tx_pcap=$TMP/bad.pcap" "$EXAMPLES/udp-flood.lua" --count 1001 --clones 4
check_user_error "count not a multiple of clones"
check "one line on stderr" 1 "$(printf '%s\n' "$ERR" | grep -c .)"
check_match "the line names --count 1001 and --clones 4" '--count 1001.*--clones 4|--clones 4.*--count 1001' "$ERR"
finish
