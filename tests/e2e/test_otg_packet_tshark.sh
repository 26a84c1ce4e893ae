#!/bin/bash
# test_otg_packet_tshark.sh - OTG flows (model 1.3.0 JSON, as snappi sends
# them) compiled by surge.otg.packet and sent on surge's data path (template
# pool, surge.flow, surge.size) through net_pcap, then decoded by tshark
# field by field: every header choice surge builds, every pattern kind
# (value, values, increment, decrement, auto) over the first 4 packets,
# sizes, and every checksum Good. tests/e2e/proto/otg_emit.lua holds the
# flows; the values below are written out from them.
. "$(dirname "$0")/lib.sh"
need_cmd tshark
need_cmd mergecap
need_cmd timeout

EMIT=$SURGE_SRC/tests/e2e/proto/otg_emit.lua
. "$(dirname "$0")/proto/stacks.sh"

A=02:00:00:00:00:0a B=02:00:00:00:00:0b
S4=192.0.2.1 D4=198.51.100.2 S6=2001:db8::a
G=1   # tshark's checksum status "Good"

# vlan id increment (count 3), DSCP 46 with ECN values 0/1, dst increment,
# TTL decrement, UDP source values; 128 bytes on the wire are 124 in pcap
e_ipv4_udp() {
  echo "$A|$B|0x8100|$((100 + $1 % 3))|3|0x0800|46|$(($1 % 2))|$S4|198.51.100.$((2 + $1))|$((33 - $1))|0x0007|106|$G|$((40000 + $1 % 2))|50000|86|$G|124"
}
stack ipv4-udp e_ipv4_udp eth.src eth.dst eth.type vlan.id vlan.priority vlan.etype ip.dsfield.dscp ip.dsfield.ecn \
  ip.src ip.dst ip.ttl ip.id ip.len ip.checksum.status udp.srcport udp.dstport udp.length udp.checksum.status frame.len

# traffic class values, flow label and destination (low bits) increments,
# SYN with ACK on/off, sequence increment
e_ipv6_tcp() {
  local tc=0x00000028 fl=0x0012
  [ $(($1 % 2)) = 1 ] && tc=0x000000b8 fl=0x0002
  echo "0x86dd|$tc|$(printf '0x%06x' $((0x12345 + $1)))|33|6|66|$S6|2001:db8:0:1::$((2 + $1))|1234|80|$((1000000 + 1000 * $1))|$fl|8192|20|$G"
}
stack ipv6-tcp e_ipv6_tcp eth.type ipv6.tclass ipv6.flow ipv6.hlim ipv6.nxt ipv6.plen ipv6.src ipv6.dst tcp.srcport \
  tcp.dstport tcp.seq_raw tcp.flags tcp.window_size_value tcp.hdr_len tcp.checksum.status

e_pause() { echo "$A|01:80:c2:00:00:01|0x8808|0x0001|$((100 * $1))"; }
stack pause e_pause eth.src eth.dst eth.type macc.opcode macc.pause_time

e_pfc() { echo "01:80:c2:00:00:01|0x8808|0x0101|0x0088|0|$((1 + $1 % 2))|65535"; }
stack pfc e_pfc eth.dst eth.type macc.opcode macc.cbfc.enbv macc.cbfc.pause_time.c0 macc.cbfc.pause_time.c3 \
  macc.cbfc.pause_time.c7

e_arp() { echo "ff:ff:ff:ff:ff:ff|0x0806|1|0x0800|6|4|2|$A|$S4|00:00:00:00:00:00|192.0.2.$((10 + $1))"; }
stack arp e_arp eth.dst eth.type arp.hw.type arp.proto.type arp.hw.size arp.proto.size arp.opcode arp.src.hw_mac \
  arp.src.proto_ipv4 arp.dst.hw_mac arp.dst.proto_ipv4

e_icmp() { echo "1|82|$G|8|0|$((0x1234))|$((1 + $1))|$G"; }
stack icmp e_icmp ip.proto ip.len ip.checksum.status icmp.type icmp.code icmp.ident icmp.seq icmp.checksum.status

e_icmpv6() { echo "58|64|128|0|$(printf '0x%04x' $((77 + $1 % 2)))|$((1 + $1))|$G"; }
stack icmpv6 e_icmpv6 ipv6.nxt ipv6.plen icmpv6.type icmpv6.code icmpv6.echo.identifier icmpv6.echo.sequence_number \
  icmpv6.checksum.status

# GRE with its checksum (outer IPv4 identification increments: before GRE)
e_gre() { echo "47|$(printf '0x%04x' $((1 + $1)))|$G|0x8000|0x86dd|$G|$S6|40001|$G"; }
stack gre e_gre ip.proto ip.id ip.checksum.status gre.flags_and_version gre.proto gre.checksum.status ipv6.src \
  udp.srcport udp.checksum.status

e_gtpv1() {
  echo "2152,5|0x32|0xff|74|$(printf '0x%08x' $((0x1000 + $1)))|$(printf '0x%04x' $((7 + $1)))|$S4,10.9.0.$((1 + 2 * ($1 % 2)))|$G,$G|$G,$G"
}
stack gtpv1 e_gtpv1 udp.srcport gtp.flags gtp.message gtp.length gtp.teid gtp.seq_number ip.src ip.checksum.status \
  udp.checksum.status

e_gtpv2() { echo "2|32|8|$(printf '0x%08x' 5)|$(printf '0x%06x' $((0x010203 + $1)))|$G"; }
stack gtpv2 e_gtpv2 gtpv2.version gtpv2.message_type gtpv2.msg_length gtpv2.teid gtpv2.seq udp.checksum.status

e_ppp() { echo "0x880b|0xff|0x03|0x0021|$D4,10.0.0.$((2 + $1))|$G,$G|$G"; }
stack ppp e_ppp gre.proto ppp.address ppp.control ppp.protocol ip.dst ip.checksum.status udp.checksum.status

e_igmpv1() { echo "2|1|0x12|239.1.1.$((1 + $1))|$G"; }
stack igmpv1 e_igmpv1 ip.proto igmp.version igmp.type igmp.maddr igmp.checksum.status

# two labels: the first increments, bottom of stack is auto (0 then 1)
e_mpls() { echo "0x8847|$((100 + $1)),200|3,0|0,1|64,32|$G|$G"; }
stack mpls e_mpls eth.type mpls.label mpls.exp mpls.bottom mpls.ttl ip.checksum.status udp.checksum.status

e_vxlan() { echo "0x0800|$((42 + $1))|$A,02:00:00:00:01:0a|49152,$((40001 + $1 % 2))|4789,40003|$G,$G|$G,$G"; }
stack vxlan e_vxlan vxlan.flags vxlan.vni eth.src udp.srcport udp.dstport ip.checksum.status udp.checksum.status

e_custom() { echo "0x88b5|deadbeef01$(printf '00%.0s' $(seq 41))"; }
stack custom e_custom eth.type data.data

# size increment 64..67 on the wire: 60..63 bytes, lengths and checksum follow
e_sizes() { echo "$((60 + $1))|$((46 + $1))|$((26 + $1))|$G|$G"; }
stack sizes e_sizes frame.len ip.len udp.length ip.checksum.status udp.checksum.status

mergecap -w "$TMP/all.pcap" "${GOOD[@]}"
check "all flows: no malformed frame, no expert warning or error (a bad checksum is an error)" "" \
  "$(tshark_q -r "$TMP/all.pcap" "${TS[@]}" -Y '_ws.malformed || _ws.expert.severity >= "warning"' | head -5)"

# Negative control: a flipped last byte makes the checksums Bad (0), so the
# Good statuses above were checked, not skipped.
echo "# corrupted"
emit ipv4-udp "$TMP/bad-udp.pcap" --corrupt
emit gre "$TMP/bad-gre.pcap" --corrupt
check "corrupted: UDP checksums Bad" "0 0 0 0" "$(fields "$TMP/bad-udp.pcap" -e udp.checksum.status | xargs)"
check "corrupted: GRE checksums Bad" "0 0 0 0" "$(fields "$TMP/bad-gre.pcap" -e gre.checksum.status | xargs)"

# surge's own decoder (surge show) names each new header, checksums ok
echo "# surge show"
for s in "gtpv1 gtpv1 teid 4096" "gtpv2 gtpv2 type 32 len 8 teid 5" "ppp ppp addr 0xff" "pause pause time 0" \
         "pfc pfc enable 0x0088" "igmpv1 igmp v1-report" "custom data 46 bytes"; do
  set -- $s
  out=$(timeout 20 "$SURGE" show "$EMIT" --stack "$1" --count 1 2>&1 | head -1)
  check_match "surge show $1" "${*:2}" "$out"
  check "surge show $1: no bad checksum" "" "$(printf '%s' "$out" | grep -Eo 'BAD|truncated')"
done
finish
