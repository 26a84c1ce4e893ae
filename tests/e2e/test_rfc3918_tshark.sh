#!/bin/bash
# test_rfc3918_tshark.sh - the membership reports surge sends (issue 18 item
# 4), written through net_pcap and decoded by tshark: the rfc3918 scenario's
# joins and leaves (IGMPv2, IGMPv3, MLDv2) on its member port and the
# source-list reports of tests/e2e/scripts/igmp_sources.lua. Each must have
# a good checksum, IPv4 TTL 1 with the Router Alert option (IPv6: hop limit
# 1, a hop-by-hop Router Alert for MLD), go to the mapped multicast MAC and
# carry the groups asked for; tshark must raise no expert warning (no
# malformed packet). The test traffic's UDP checksums are checked too.
. "$(dirname "$0")/lib.sh"
need_cmd tshark

# f PCAP FIELD...: one line per frame, fields separated by |
f() { local p=$1; shift; local a=(); for x in "$@"; do a+=(-e "$x"); done
      tshark_q -r "$p" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -T fields -E separator='|' "${a[@]}"; }
# member VERSION GROUPS: the scenario's join test; port 1's capture holds its reports
member() {
  run_surge 30 run --no-huge -q --vdev "net_pcap0,tx_pcap=$TMP/tx_$1.pcap" --vdev "net_pcap1,tx_pcap=$TMP/m_$1.pcap" \
    rfc3918 --tx 0 --rx 1 --groups "$2" --igmp "${1/mld2/v3}" --tests join --trial 0.05 --join-wait 0.01 --settle 0.01
  check "$1: rfc3918 exits 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run 10
}
no_warnings() {  # no_warnings NAME PCAP
  check "$1: tshark reports no warning or error (malformed, checksum)" "" \
    "$(tshark_q -r "$2" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -T fields -e _ws.expert.message -e _ws.malformed | grep -v '^[[:space:]]*$' | head -3)"
}

member v2 239.1.1.1/3,239.9.0.1
P=$TMP/m_v2.pcap
check "v2: 4 reports to each group's MAC, then 4 leaves to 224.0.0.2's" \
  "01:00:5e:01:01:01|1|148|0x16|1|239.1.1.1
01:00:5e:01:01:02|1|148|0x16|1|239.1.1.2
01:00:5e:01:01:03|1|148|0x16|1|239.1.1.3
01:00:5e:09:00:01|1|148|0x16|1|239.9.0.1
01:00:5e:00:00:02|1|148|0x17|1|239.1.1.1
01:00:5e:00:00:02|1|148|0x17|1|239.1.1.2
01:00:5e:00:00:02|1|148|0x17|1|239.1.1.3
01:00:5e:00:00:02|1|148|0x17|1|239.9.0.1" \
  "$(f "$P" eth.dst ip.ttl ip.opt.type igmp.type igmp.checksum.status igmp.maddr)"
check "v2: IP header checksums good (status 1)" "1" "$(f "$P" ip.checksum.status | sort -u)"
no_warnings v2 "$P"
check "v2: the test traffic's UDP checksums are good" "1" \
  "$(tshark_q -r "$TMP/tx_v2.pcap" -o udp.check_checksum:TRUE -T fields -e udp.checksum.status | sort -u)"

member v3 239.1.1.1/3,239.9.0.1
P=$TMP/m_v3.pcap
check "v3: one report joining (TO_EX, 4) the 4 groups, one leaving them (TO_IN, 3), to 224.0.0.22, TOS 0xc0" \
  "01:00:5e:00:00:16|1|148|0xc0|0x22|1|4,4,4,4|239.1.1.1,239.1.1.2,239.1.1.3,239.9.0.1
01:00:5e:00:00:16|1|148|0xc0|0x22|1|3,3,3,3|239.1.1.1,239.1.1.2,239.1.1.3,239.9.0.1" \
  "$(f "$P" eth.dst ip.ttl ip.opt.type ip.dsfield igmp.type igmp.checksum.status igmp.record_type igmp.maddr)"
no_warnings v3 "$P"

member mld2 ff3e::1/3
P=$TMP/m_mld2.pcap
check "MLDv2: reports to 33:33:00:00:00:16 (ff02::16), hop limit 1, hop-by-hop Router Alert MLD, type 143, checksum good" \
  "33:33:00:00:00:16|ff02::16|1|0|0|143|1|4,4,4|ff3e::1,ff3e::2,ff3e::3
33:33:00:00:00:16|ff02::16|1|0|0|143|1|3,3,3|ff3e::1,ff3e::2,ff3e::3" \
  "$(f "$P" eth.dst ipv6.dst ipv6.hlim ipv6.nxt ipv6.opt.router_alert icmpv6.type icmpv6.checksum.status \
      icmpv6.mldr.mar.record_type icmpv6.mldr.mar.multicast_address)"
check_match "MLDv2: from a link-local source" "^fe80::" "$(f "$P" ipv6.src | head -1)"
no_warnings mld2 "$P"
check "MLDv2: the test traffic goes to 33:33 + the group's low 32 bits" "33:33:00:00:00:01
33:33:00:00:00:02
33:33:00:00:00:03" "$(f "$TMP/tx_mld2.pcap" eth.dst | sort -u)"

# reports with source lists
run_surge 30 run --no-huge -q --vdev "net_pcap0,tx_pcap=$TMP/src.pcap" "$E2E_DIR/scripts/igmp_sources.lua"
check "igmp_sources.lua exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 10
P=$TMP/src.pcap
check "v3 with sources: ALLOW (5) 232.1.1.1 from 2, BLOCK (6) 232.1.1.2 from 1" \
  "0x22|1|5,6|2,1|232.1.1.1,232.1.1.2|10.9.0.1,10.9.0.2,10.9.0.3" \
  "$(f "$P" igmp.type igmp.checksum.status igmp.record_type igmp.num_src igmp.maddr igmp.saddr | head -1)"
check "MLDv2 with sources: IS_IN (1) from 2, IS_EX (2) from 1, checksum good" \
  "143|1|1,2|2,1|2001:db8::9,2001:db8::a,2001:db8::b" \
  "$(f "$P" icmpv6.type icmpv6.checksum.status icmpv6.mldr.mar.record_type icmpv6.mldr.mar.nb_sources \
      icmpv6.mldr.mar.source_address | tail -1)"
no_warnings sources "$P"
finish
