#!/bin/bash
# test_proto_tshark.sh - every protocol stack surge builds, written through
# net_pcap and decoded by tshark field by field: addresses, ports, tags,
# labels, VNI, TCP flags/seq, ICMP type/code/id/seq, ARP, and every checksum
# Good. tests/e2e/proto/emit.lua sends 4 frames per stack; frame i has one
# field changed by a hot-loop setter (so the incremental checksum updates
# are checked by tshark too). A corrupted payload must make tshark report
# Bad, which shows that its checksum checks are on.
. "$(dirname "$0")/lib.sh"
need_cmd tshark
need_cmd mergecap
need_cmd timeout

EMIT=$SURGE_SRC/tests/e2e/proto/emit.lua
. "$(dirname "$0")/proto/stacks.sh"

A=02:00:00:00:00:0a B=02:00:00:00:00:0b IA=02:00:00:00:01:0a IB=02:00:00:00:01:0b
S4=192.0.2.1 D4=198.51.100.2 S6=2001:db8::a D6=2001:db8:0:1::2
G=1   # tshark's checksum status "Good"

# Each line: the template's values (emit.lua), packet i's change, lengths
# from the frame size, checksum statuses.
e_ip4_udp() { echo "$A|$B|0x0800|$S4|$D4|33|0x0007|17|$((100 - 14))|$G|$((40000 + $1))|50000|$((100 - 34))|$G"; }
stack eth/ip4/udp e_ip4_udp eth.src eth.dst eth.type ip.src ip.dst ip.ttl ip.id ip.proto ip.len \
  ip.checksum.status udp.srcport udp.dstport udp.length udp.checksum.status

e_vlan_ip4_udp() { echo "$A|$B|0x8100|$((100 + $1))|3|0|0x0800|$S4|$D4|$((100 - 18))|$G|40000|$((50000 + $1))|$G"; }
stack eth/vlan/ip4/udp e_vlan_ip4_udp eth.src eth.dst eth.type vlan.id vlan.priority vlan.dei vlan.etype \
  ip.src ip.dst ip.len ip.checksum.status udp.srcport udp.dstport udp.checksum.status

e_qinq_tcp() {
  echo "$A|$B|0x88a8|10|5|100|3|0x0800|$S4|$D4|6|$G|1234|80|$((1000000 + 1000 * $1))|777|0x0012|8192|20|0|$((100 - 62))|$G"
}
stack eth/qinq/vlan/ip4/tcp e_qinq_tcp eth.src eth.dst eth.type ieee8021ad.id ieee8021ad.priority vlan.id \
  vlan.priority vlan.etype ip.src ip.dst ip.proto ip.checksum.status tcp.srcport tcp.dstport tcp.seq_raw \
  tcp.ack_raw tcp.flags tcp.window_size_value tcp.hdr_len tcp.urgent_pointer tcp.len tcp.checksum.status

e_ip6_udp() { echo "$A|$B|0x86dd|$S6|2001:db8:0:1::$((2 + $1))|33|17|$((100 - 54))|0x012345|0x00000028|$((40000 + $1))|50000|$((100 - 54))|$G"; }
stack eth/ip6/udp e_ip6_udp eth.src eth.dst eth.type ipv6.src ipv6.dst ipv6.hlim ipv6.nxt ipv6.plen ipv6.flow \
  ipv6.tclass udp.srcport udp.dstport udp.length udp.checksum.status

e_vlan_ip6_tcp() { echo "$A|$B|0x8100|200|1|0x86dd|$S6|$D6|6|$((120 - 58))|$((1234 + $1))|80|$((1000000 + 1000 * $1))|777|0x0012|8192|$G"; }
stack eth/vlan/ip6/tcp e_vlan_ip6_tcp eth.src eth.dst eth.type vlan.id vlan.priority vlan.etype ipv6.src ipv6.dst \
  ipv6.nxt ipv6.plen tcp.srcport tcp.dstport tcp.seq_raw tcp.ack_raw tcp.flags tcp.window_size_value tcp.checksum.status

# a SYN made without size or payload: no TCP data, the frame's last 6 bytes
# are Ethernet padding tshark sees outside the IP packet
e_syn() { echo "$S4|$D4|40|$G|$((1000000 + 1000 * $1))|0x0002|0|$G|000000000000|60"; }
stack tcp-syn e_syn ip.src ip.dst ip.len ip.checksum.status tcp.seq_raw tcp.flags tcp.len tcp.checksum.status \
  eth.padding frame.len

e_icmp() { echo "$A|$B|0x0800|$S4|$D4|1|$G|8|0|$((0x1234))|$((1 + $1))|$G"; }
stack eth/ip4/icmp e_icmp eth.src eth.dst eth.type ip.src ip.dst ip.proto ip.checksum.status icmp.type icmp.code \
  icmp.ident icmp.seq icmp.checksum.status

e_icmp6() { echo "$A|$B|0x86dd|$S6|$D6|58|$((118 - 54))|128|0|0x004d|$((1 + $1))|$G"; }
stack eth/ip6/icmp6 e_icmp6 eth.src eth.dst eth.type ipv6.src ipv6.dst ipv6.nxt ipv6.plen icmpv6.type icmpv6.code \
  icmpv6.echo.identifier icmpv6.echo.sequence_number icmpv6.checksum.status

e_arp() { echo "$A|ff:ff:ff:ff:ff:ff|0x0806|1|0x0800|6|4|1|$A|$S4|00:00:00:00:00:00|192.0.2.$((10 + $1))|60"; }
stack eth/arp e_arp eth.src eth.dst eth.type arp.hw.type arp.proto.type arp.hw.size arp.proto.size arp.opcode \
  arp.src.hw_mac arp.src.proto_ipv4 arp.dst.hw_mac arp.dst.proto_ipv4 frame.len

e_vxlan() {
  echo "$A,$IA|$B,$IB|0x0800,0x0800|$S4,10.1.0.1|$D4,10.1.0.2|$G,$G|49152,40001|4789,40002|$((128 - 34)),$((128 - 84))|0x0800|$((42 + $1))|$G,$G"
}
stack eth/ip4/udp/vxlan/eth/ip4/udp e_vxlan eth.src eth.dst eth.type ip.src ip.dst ip.checksum.status udp.srcport \
  udp.dstport udp.length vxlan.flags vxlan.vni udp.checksum.status

e_gre() { echo "$A|$B|0x0800|$S4,10.1.0.1|$D4,10.1.0.2|47,17|33,9|$G,$G|0x0000|0x0800|$((40001 + $1))|40002|$G"; }
stack eth/ip4/gre/ip4/udp e_gre eth.src eth.dst eth.type ip.src ip.dst ip.proto ip.ttl ip.checksum.status \
  gre.flags_and_version gre.proto udp.srcport udp.dstport udp.checksum.status

e_gre_eth() { echo "$A,$IA|$B,$IB|0x0800,0x86dd|47|$G|0x2000|$(printf '0x%08x' $((7 + $1)))|0x6558|$S6|$D6|40001|$G"; }
stack eth/ip4/gre/eth/ip6/udp e_gre_eth eth.src eth.dst eth.type ip.proto ip.checksum.status gre.flags_and_version \
  gre.key gre.proto ipv6.src ipv6.dst udp.srcport udp.checksum.status

e_mpls() { echo "$A|$B|0x8847|$((100 + $1)),200|3,5|0,1|64,32|10.1.0.1|10.1.0.2|$G|40001|40002|$G"; }
stack eth/mpls/mpls/ip4/udp e_mpls eth.src eth.dst eth.type mpls.label mpls.exp mpls.bottom mpls.ttl ip.src ip.dst \
  ip.checksum.status udp.srcport udp.dstport udp.checksum.status

# tshark flags nothing in any of these frames (one run over all of them:
# tshark takes about a second to start).
mergecap -w "$TMP/all.pcap" "${GOOD[@]}"
check "all stacks: no malformed frame, no expert warning or error (a bad checksum is an error)" "" \
  "$(tshark_q -r "$TMP/all.pcap" "${TS[@]}" -Y '_ws.malformed || _ws.expert.severity >= "warning"')"

# Negative control: a flipped payload byte makes each L4 checksum Bad (0),
# so the Good statuses above were checked, not skipped.
echo "# corrupted payloads"
BAD=() WANT=""
for s in "eth/ip6/udp 0|||" "eth/qinq/vlan/ip4/tcp |0||" "eth/ip4/icmp ||0|" "eth/ip6/icmp6 |||0"; do
  set -- $s
  emit "$1" "$TMP/bad-${#BAD[@]}.pcap" --corrupt
  BAD+=("$TMP/bad-${#BAD[@]}.pcap")
  for ((i = 0; i < N; i++)); do WANT+="$2"$'\n'; done
done
mergecap -a -w "$TMP/bad.pcap" "${BAD[@]}"
check "corrupted: udp (IPv6), tcp, icmp, icmpv6 checksums Bad" "${WANT%$'\n'}" \
  "$(fields "$TMP/bad.pcap" -e udp.checksum.status -e tcp.checksum.status -e icmp.checksum.status \
     -e icmpv6.checksum.status)"

# surge's own decoder (surge show) agrees: every layer, checksums ok.
echo "# surge show"
for s in eth/ip4/udp eth/vlan/ip4/udp eth/qinq/vlan/ip4/tcp eth/ip6/udp eth/vlan/ip6/tcp eth/ip4/icmp eth/ip6/icmp6 \
         eth/arp eth/ip4/udp/vxlan/eth/ip4/udp eth/ip4/gre/ip4/udp eth/ip4/gre/eth/ip6/udp eth/mpls/mpls/ip4/udp; do
  out=$(timeout 20 "$SURGE" show "$EMIT" --stack "$s" --count 1 2>&1 | head -1)
  # qinq's decoder prints the S-tag as "vlan"
  re="^packet 1, [0-9]+ bytes: $(printf '%s' "$s" | sed 's#qinq#vlan#; s#/# [^|]*\\| #g') "
  check_match "surge show $s: layers in order" "$re" "$out"
  check "surge show $s: no bad checksum" "" "$(printf '%s' "$out" | grep -Eo 'BAD|truncated')"
done
finish
