#!/usr/bin/env bash
# examples/vxlan.lua into a pcap, decoded by tshark as VXLAN: the VNIs and
# inner sources take exactly the values the flow defines, equally often, and
# every outer and inner checksum is valid.
. "$(dirname "$0")/lib.sh"
need_cmd tshark
out=$TMP/vxlan.pcap
timeout 60 "$SURGE" run --no-huge -q --stats-interval 0 --vdev "net_pcap0,tx_pcap=$out" \
  "$SURGE_SRC/examples/vxlan.lua" --count 2000 --vnis 4 --inner-flows 5 >"$TMP/log" 2>&1
check "surge exit status" 0 $?
fields() { tshark_q -r "$out" -d udp.port==4789,vxlan -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE \
           -T fields -E occurrence=a -E aggregator=, "$@"; }
check "packets in the capture" 2000 "$(fields -e frame.number | wc -l)"
check "distinct VNIs" "42 43 44 45" "$(fields -e vxlan.vni | sort -un | tr '\n' ' ' | sed 's/ $//')"
check "packets per VNI" "500" "$(fields -e vxlan.vni | sort | uniq -c | awk '{print $1}' | sort -u)"
check "distinct inner sources" 5 "$(fields -e ip.src | cut -d, -f2 | sort -u | wc -l)"
check "packets per (VNI, inner source)" "100" \
  "$(fields -e vxlan.vni -e ip.src | awk -F'\t' '{split($2, a, ","); print $1, a[2]}' | sort | uniq -c | awk '{print $1}' | sort -u)"
check "outer source is 192.168.0.1 everywhere" "192.168.0.1" "$(fields -e ip.src | cut -d, -f1 | sort -u)"
check "IPv4 checksums, outer and inner, all Good" "1,1" "$(fields -e ip.checksum.status | sort -u)"
check "UDP checksums, outer and inner, all Good" "1,1" "$(fields -e udp.checksum.status | sort -u)"
check "no malformed frames" 0 "$(tshark_q -r "$out" -d udp.port==4789,vxlan -Y '_ws.malformed || _ws.expert.severity >= 6' | wc -l)"
finish
