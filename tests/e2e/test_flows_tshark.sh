#!/bin/bash
# test_flows_tshark.sh - examples/flows.lua and examples/imix.lua write
# through net_pcap; tshark reads every frame back: the exact number of
# distinct (ip.src, udp.srcport) flows with equal counts per flow, every
# IPv4/UDP checksum Good, lengths coherent, and the frame.len histogram of
# IMIX within 1 % of 7:4:1.
. "$(dirname "$0")/lib.sh"
need_cmd tshark

TSHARK_CK=(-o ip.check_checksum:TRUE -o udp.check_checksum:TRUE)
FIELDS=(-T fields -E separator=' ' -e frame.len -e ip.src -e udp.srcport -e ip.dst -e ip.len -e udp.length
        -e ip.checksum.status -e udp.checksum.status)
# fields: 1 frame.len 2 ip.src 3 udp.srcport 4 ip.dst 5 ip.len 6 udp.length 7 ip.checksum.status
#         8 udp.checksum.status
fields() { tshark_q -r "$1" "${TSHARK_CK[@]}" "${FIELDS[@]}"; }
# flow_stats < fields: "DISTINCT MIN MAX" of the packets per (ip.src, udp.srcport)
flow_stats() {
  awk '{ n[$2 " " $3]++ } END { min = -1; for (k in n) { d++; if (min < 0 || n[k] < min) min = n[k];
       if (n[k] > max) max = n[k] } print d + 0, min + 0, max + 0 }'
}
count_bad() { awk '$7 != 1 || $8 != 1 { n++ } END { print n + 0 }'; }                 # < fields
count_badlen() { awk '$5 != $1 - 14 || $6 != $1 - 34 { n++ } END { print n + 0 }'; }  # < fields
pcap_run() {  # pcap_run NAME SCRIPT ARGS...: runs SCRIPT into $TMP/NAME.pcap, sets F (the fields)
  local name=$1 script=$2
  shift 2
  run_surge 120 run --no-huge -q --vdev "net_pcap0,tx_pcap=$TMP/$name.pcap" "$EXAMPLES/$script" "$@"
  check "$name: surge exits 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run
  check_no_crash "$name"
  F=$(fields "$TMP/$name.pcap")
}

echo "# flows.lua: product of 10 source addresses x 4 source ports, 4000 packets"
pcap_run product flows.lua --flows-src 10 --flows-port 4 --count 4000
check "product: summary TX 4000 packets" 4000 "$(summary_count "$OUT" 0 TX)"
check_match "product: 40 flows announced" 'flows.lua: 40 flows \(product' "$OUT"
check "product: tshark reads 4000 frames" 4000 "$(printf '%s\n' "$F" | grep -c .)"
check "product: 40 distinct (ip.src, udp.srcport), 100 frames each" "40 100 100" "$(printf '%s\n' "$F" | flow_stats)"
check "product: sources 10.0.0.1..10.0.0.10, ports 1024..1027" "10.0.0.1 10.0.0.10 1024 1027" \
  "$(printf '%s\n' "$F" | awk '{ split($2, a, "."); s[a[4]] = 1; p[$3] = 1 } END {
     lo = 999; for (x in s) { if (x + 0 < lo) lo = x + 0; if (x + 0 > hi) hi = x + 0 }
     plo = 99999; for (x in p) { if (x + 0 < plo) plo = x + 0; if (x + 0 > phi) phi = x + 0 }
     print "10.0.0." lo, "10.0.0." hi, plo, phi }')"
check "product: the source address varies fastest" 4000 \
  "$(printf '%s\n' "$F" | awk '$2 == "10.0.0." (1 + (NR - 1) % 10) && $3 == 1024 + int((NR - 1) / 10) % 4 { n++ } END { print n + 0 }')"
check "product: every IPv4 and UDP checksum Good" 0 "$(printf '%s\n' "$F" | count_bad)"
check "product: ip.len and udp.length follow frame.len (60)" "0 4000" \
  "$(printf '%s\n' "$F" | count_badlen) $(printf '%s\n' "$F" | awk '$1 == 60 { n++ } END { print n + 0 }')"

echo "# flows.lua --zip: 5 addresses and 3 ports together, 500 packets"
pcap_run zip flows.lua --flows-src 5 --flows-port 3 --zip --count 500
check "zip: summary TX 500 packets" 500 "$(summary_count "$OUT" 0 TX)"
check "zip: 5 distinct flows, 100 frames each" "5 100 100" "$(printf '%s\n' "$F" | flow_stats)"
check "zip: frame i is (10.0.0.(1 + i % 5), 1024 + (i % 5) % 3)" 500 \
  "$(printf '%s\n' "$F" | awk '{ i = (NR - 1) % 5 } $2 == "10.0.0." (1 + i) && $3 == 1024 + i % 3 { n++ } END { print n + 0 }')"
check "zip: every IPv4 and UDP checksum Good" 0 "$(printf '%s\n' "$F" | count_bad)"

echo "# flows.lua: 4096 flows (128 addresses across a byte boundary x 16 ports x 2 destinations), 16384 packets"
pcap_run many flows.lua --src 10.0.0.200 --flows-src 128 --flows-port 16 --flows-dst 2 --size 128 --count 16384
check "many: summary TX 16384 packets" 16384 "$(summary_count "$OUT" 0 TX)"
check "many: 4096 distinct (ip.src, udp.srcport, ip.dst), 4 frames each" "4096 4 4" \
  "$(printf '%s\n' "$F" | awk '{ print $1, $2 "/" $4, $3 }' | flow_stats)"
check "many: 2048 distinct (ip.src, udp.srcport), 8 frames each" "2048 8 8" "$(printf '%s\n' "$F" | flow_stats)"
check "many: every IPv4 and UDP checksum Good" 0 "$(printf '%s\n' "$F" | count_bad)"
check "many: all 128 bytes, lengths coherent" "0 16384" \
  "$(printf '%s\n' "$F" | count_badlen) $(printf '%s\n' "$F" | awk '$1 == 128 { n++ } END { print n + 0 }')"

echo "# imix.lua: 12000 packets over 4 flows"
pcap_run imix imix.lua --count 12000 --flows 4
check "imix: summary TX 12000 packets" 12000 "$(summary_count "$OUT" 0 TX)"
check "imix: tshark reads 12000 frames" 12000 "$(printf '%s\n' "$F" | grep -c .)"
HIST=$(printf '%s\n' "$F" | awk '{ print $1 }' | sort -n | uniq -c | awk '{ printf "%s%s:%s", sep, $2, $1; sep = " " }')
echo "     frame.len histogram: $HIST"
check "imix: only 60, 566 and 1514-byte frames" "60 566 1514" \
  "$(printf '%s\n' "$F" | awk '{ print $1 }' | sort -n | uniq | tr '\n' ' ' | sed 's/ $//')"
check_true "imix: 7:4:1 within 1 % of all frames" "histogram $HIST" awk -v h="$HIST" 'BEGIN {
  n = split(h, e, " "); w[60] = 7 / 12; w[566] = 4 / 12; w[1514] = 1 / 12
  for (i = 1; i <= n; i++) { split(e[i], kv, ":"); c[kv[1]] = kv[2]; t += kv[2] }
  for (s in w) if (t == 0 || (c[s] / t - w[s]) > 0.01 || (w[s] - c[s] / t) > 0.01) exit 1 }'
check "imix: exact over whole 12-packet blocks" "60:7000 566:4000 1514:1000" "$HIST"
check "imix: every IPv4 and UDP checksum Good" 0 "$(printf '%s\n' "$F" | count_bad)"
check "imix: ip.len and udp.length follow frame.len" 0 "$(printf '%s\n' "$F" | count_badlen)"
check "imix: 4 flows, 3000 frames each" "4 3000 3000" "$(printf '%s\n' "$F" | flow_stats)"
check_match "imix: the script's size report" '60 bytes +7000 packets +58\.33 %' "$OUT"
check_match "imix: bytes by size = bytes counted by the port" 'imix.lua: 4198000 bytes by size, 4198000 counted by the port' "$OUT"

echo "# imix.lua --sizes 100-1400 (uniform), 2602 packets = 2 periods"
pcap_run uniform imix.lua --sizes 100-1400 --count 2602
check "uniform: every size 100..1400 twice" "1301 2 2 100 1400" \
  "$(printf '%s\n' "$F" | awk '{ n[$1]++; if (lo == "" || $1 < lo) lo = $1; if ($1 > hi) hi = $1 } END {
     min = -1; for (k in n) { d++; if (min < 0 || n[k] < min) min = n[k]; if (n[k] > max) max = n[k] }
     print d, min, max, lo, hi }')"
check "uniform: every IPv4 and UDP checksum Good" 0 "$(printf '%s\n' "$F" | count_bad)"
check "uniform: lengths coherent" 0 "$(printf '%s\n' "$F" | count_badlen)"
check "uniform: 1301 sizes reported in 10 ranges, not 1301 lines" 10 \
  "$(printf '%s\n' "$OUT" | grep -cE '^ +[0-9]+-[0-9]+ bytes +[0-9]+ packets')"
check_match "uniform: the ranges cover 100..1400 (first 100-230, 2 x 131 frames)" '^ +100-230 bytes +262 packets' "$OUT"
check_match "uniform: the last range ends at 1400 (122 sizes x 2)" '^ +1279-1400 bytes +244 packets' "$OUT"

echo "# surge show"
run_surge 60 show --packets 6 "$EXAMPLES/flows.lua" --flows-src 3 --flows-port 2
check "show flows.lua: exits 0" 0 "$RC"
check "show flows.lua: 6 packets, checksums ok" 6 "$(printf '%s\n' "$OUT" | grep -c '^packet .*ip4 10\.0\.0\.[123] > .*csum ok | udp 102[45] > 5000 .*csum ok')"
check_nomatch "show flows.lua: nothing BAD" 'BAD' "$OUT"
run_surge 60 show --packets 12 "$EXAMPLES/imix.lua"
check "show imix.lua: exits 0" 0 "$RC"
check "show imix.lua: 12 packets at 7:4:1" "60:7 566:4 1514:1" \
  "$(printf '%s\n' "$OUT" | sed -n 's/^packet [0-9]*, \([0-9]*\) bytes.*/\1/p' | sort -n | uniq -c | awk '{ printf "%s%s:%s", sep, $2, $1; sep = " " }')"
check_nomatch "show imix.lua: nothing BAD" 'BAD' "$OUT"

echo "# errors"
run_surge 60 run --no-huge -q --vdev net_null0,no-rx=1 "$EXAMPLES/imix.lua" --sizes 9000
check_user_error "imix.lua --sizes 9000"
check_match "imix.lua --sizes 9000: names the size and the limit" 'size 9000 bytes is above the limit 1514' "$ERR"
run_surge 60 run --no-huge -q --vdev net_null0,no-rx=1 "$EXAMPLES/flows.lua" --src 255.255.255.255 --flows-src 2
check_user_error "flows.lua past 255.255.255.255"
check_match "flows.lua past 255.255.255.255: names the field" 'ip4.src = 4294967296 outside 0..4294967295' "$ERR"
finish
