#!/usr/bin/env bash
# Checksum offload against a real implementation: net_tap offers IPv4, UDP
# and TCP checksum offload, and computes them when a packet asks. surge then
# sends packets whose checksums it did NOT finish (IPv4 zeroed, L4 holding
# only the pseudo-header sum); the kernel side of the tap captures them and
# tshark must find every checksum Good. With checksum_offload = false the
# same traffic carries surge's own software checksums, also Good.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd tshark
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
IFACE=sgtap$$
run() {  # run KIND [--software]: capture on the tap while surge sends 200 packets
  local kind=$1; shift
  local pcap=$TMP/$kind$#.pcap go=$TMP/go
  rm -f "$go"
  timeout 60 "$SURGE" run --no-huge -q --stats-interval 0 --vdev "net_tap0,iface=$IFACE" \
    "$SURGE_SRC/tests/e2e/scripts/tap_send.lua" --kind "$kind" --count 200 --go "$go" "$@" >"$TMP/log" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do ip link show "$IFACE" >/dev/null 2>&1 && break; sleep 0.1; done
  ip link set "$IFACE" up 2>/dev/null
  sysctl -qw "net.ipv6.conf.$IFACE.disable_ipv6=1" 2>/dev/null
  tshark -i "$IFACE" -f "port 5000" -c 200 -a duration:20 -w "$pcap" >"$TMP/tshark.log" 2>&1 &
  local cap=$!
  for _ in $(seq 100); do grep -q "Capturing on" "$TMP/tshark.log" && break; sleep 0.1; done
  sleep 0.5
  touch "$go"
  wait $pid; RC=$?
  wait $cap
  OFFLOAD=$(grep "^offload" "$TMP/log")
  PCAP=$pcap
}
fields() { tshark_q -r "$PCAP" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE \
           -T fields "$@"; }

run udp4
check "udp4: surge exit status" 0 "$RC"
check "the tap port took the checksum offloads" "offload ip4 true udp true tcp true" "$OFFLOAD"
check "udp4: packets captured" 200 "$(fields -e frame.number | wc -l)"
check "udp4: IPv4 checksums computed by the port are Good" 1 "$(fields -e ip.checksum.status | sort -u)"
check "udp4: UDP checksums computed by the port are Good" 1 "$(fields -e udp.checksum.status | sort -u)"
check "udp4: 10 flows, 20 packets each" "20" "$(fields -e udp.srcport | sort | uniq -c | awk '{print $1}' | sort -u)"

run tcp6
check "tcp6: surge exit status" 0 "$RC"
check "tcp6: packets captured" 200 "$(fields -e frame.number | wc -l)"
check "tcp6: TCP checksums over IPv6 computed by the port are Good" 1 "$(fields -e tcp.checksum.status | sort -u)"

run udp4 --software
check "software: surge exit status" 0 "$RC"
check "software: no offload asked for" "offload ip4 false udp false tcp false" "$OFFLOAD"
check "software: IPv4 checksums Good" 1 "$(fields -e ip.checksum.status | sort -u)"
check "software: UDP checksums Good" 1 "$(fields -e udp.checksum.status | sort -u)"
finish
