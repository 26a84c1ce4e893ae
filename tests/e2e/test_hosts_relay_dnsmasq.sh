#!/bin/bash
# test_hosts_relay_dnsmasq.sh - issue 33: the generator as the DHCP relay
# agent in front of its emulated clients (RFC 2131 4.1, RFC 3046;
# docs/hosts.md "DHCP relay"), dnsmasq in a network namespace the server
# of a pool that is not its own link's: 10.20.0.0/24, reached through
# the relay's address 10.20.0.1 (giaddr) by an on-link route.
#  1. 8 hosts bound from the remote pool: the relay resolved the server by
#     ARP (the kernel learnt the relay's MAC from it); dnsmasq's leases file
#     holds exactly their MACs; tshark sees each request from 10.20.0.1
#     port 67 with giaddr 10.20.0.1, hops 1 and option 82 (circuit-id
#     "p<n>", remote-id "olt-7"), dnsmasq's replies to 10.20.0.1 port 67
#     echoing it (no mismatch counted); the kernel pings host 0's
#     address (answered: ARP and echo for its remote-pool address).
#  2. a relay address the server cannot reach (10.30.0.1, dropped by the
#     server's firewall: dnsmasq sends a reply out of the interface a
#     request came in on, route or none): dnsmasq receives the DISCOVERs
#     but its OFFERs never leave; every host gives up (dhcp_gave_up 8).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
need_cmd dnsmasq
need_cmd tshark
need_cmd iptables
conn_pair hrl
surge_ns
LEASES=$TMP/leases
SCRIPT=$SURGE_SRC/tests/e2e/hosts_relay.lua
N=8
# the server's way to the relay: the pool's subnet on its link
in_k ip route add 10.20.0.0/24 dev "$IF_K"
: >"$LEASES"
ip netns exec "$NS_K" dnsmasq --no-daemon --port=0 --interface="$IF_K" --bind-interfaces \
  --dhcp-leasefile="$LEASES" --dhcp-authoritative --no-ping --log-dhcp --log-facility="$TMP/dnsmasq.log" \
  --dhcp-range=10.20.0.100,10.20.0.199,255.255.255.0,1h --dhcp-range=10.30.0.100,10.30.0.199,255.255.255.0,1h \
  2>"$TMP/dnsmasq.err" &
DPID=$!
on_exit "kill $DPID"
wait_for_text "$TMP/dnsmasq.log" "sockets bound" 5 ||
  { kill -0 $DPID 2>/dev/null || skip "dnsmasq did not start: $(cat "$TMP/dnsmasq.err")"; }
val() { printf '%s\n' "$OUT" | awk -v k="$1" '$1 == k { print $2 }'; }

# --- 1. bound through the relay
start_capture "$TMP/relay.pcapng"
# the kernel pings host 0's address once it is bound (its lease in dnsmasq's file)
( for _ in $(seq 100); do
    a=$(awk '$2 == "02:79:00:00:00:01" { print $3 }' "$LEASES")
    if [ -n "$a" ] && in_k ping -c 1 -W 1 "$a" >/dev/null 2>&1; then
      echo "ok $a" >"$TMP/ping"; break
    fi
    sleep 0.2
  done ) &
PINGER=$!
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$SCRIPT" --clients $N --circuit p%d --remote olt-7 \
  --hold 3
wait $PINGER
stop_capture
check "relay: exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_match "relay: $N bound" "^states: bound $N$" "$OUT"
check "relay: every host's address from the remote pool 10.20.0.100..199" $N \
  "$(printf '%s\n' "$OUT" | grep -cE '^host [0-9]+ \S+ bound 10\.20\.0\.1[0-9][0-9]$')"
check "dnsmasq's leases file: exactly the hosts' MACs" \
  "$(for i in $(seq 1 $N); do printf '02:79:00:00:00:%02x\n' $i; done)" "$(awk '{ print $2 }' "$LEASES" | sort)"
check "relay: no option 82 mismatch, nothing dropped unresolved, no bad or stray reply" "0 0 0 0" \
  "$(val dhcp_relay_mismatch) $(val dhcp_relay_unresolved) $(val dhcp_bad) $(val dhcp_stray)"
check "tshark: host 0 answered the kernel's ARP for its address from its MAC" yes \
  "$(tshark_q -r "$TMP/relay.pcapng" -Y 'arp.opcode == 2 && arp.src.hw_mac == 02:79:00:00:00:01' | grep -q . && echo yes)"
check "the kernel's ping of host 0's address answered" "ok $(printf '%s\n' "$OUT" | awk '$1 == "host" && $2 == 0 { print $5 }') 1" \
  "$(cat "$TMP/ping" 2>/dev/null) $(val icmp_reply_tx)"
REQ='udp.srcport == 67 && udp.dstport == 67 && dhcp.type == 1'
check "tshark: $N DISCOVERs, each from 10.20.0.1 to 10.1.0.1, giaddr 10.20.0.1, hops 1, remote-id olt-7" $N \
  "$(tshark_q -r "$TMP/relay.pcapng" -Y "$REQ && dhcp.option.dhcp == 1 && ip.src == 10.20.0.1 && ip.dst == 10.1.0.1 \
     && dhcp.ip.relay == 10.20.0.1 && dhcp.hops == 1" -T fields -e dhcp.hw.mac_addr \
     -e dhcp.option.agent_information_option.agent_remote_id | sort -u | awk '$2 == "6f:6c:74:2d:37" || $2 == "6f6c742d37"' |
     wc -l)"
# host i's circuit-id is "p<i>", in every request it sent (DISCOVER and REQUEST)
check "tshark: each request's circuit-id the host's (p0..p$((N - 1)))" 0 \
  "$(tshark_q -r "$TMP/relay.pcapng" -Y "$REQ" -T fields -e dhcp.hw.mac_addr \
     -e dhcp.option.agent_information_option.agent_circuit_id | python3 -c '
import sys
bad = 0
for l in sys.stdin:
    mac, cid = l.split()
    n = int(mac.split(":")[-1], 16) - 1
    bad += bytes.fromhex(cid.replace(":", "")).decode() != "p%d" % n
print(bad)')"
# (tshark lists the options' codes, padding as 0, the end apart)
check "tshark: option 82 the last option before the end in every request" "0 $((2 * N))" \
  "$(tshark_q -r "$TMP/relay.pcapng" -Y "$REQ" -T fields -e dhcp.option.type -e dhcp.option.end |
     awk -F'\t' '{ n = split($1, c, ","); while (n > 0 && c[n] == 0) n--; if (c[n] != 82 || $2 != 255) bad++; k++ }
       END { print bad + 0, k + 0 }')"
check "tshark: dnsmasq's OFFERs and ACKs to 10.20.0.1 port 67, from 67, giaddr set, 82 echoed" "$N $N" \
  "$(for m in 2 5; do tshark_q -r "$TMP/relay.pcapng" -Y "ip.dst == 10.20.0.1 && udp.srcport == 67 && udp.dstport == 67 \
     && dhcp.option.dhcp == $m && dhcp.ip.relay == 10.20.0.1 && dhcp.option.agent_information_option.agent_remote_id" \
     -T fields -e dhcp.hw.mac_addr | sort -u | wc -l; done | tr '\n' ' ' | sed 's/ $//')"
check "tshark: no malformed frame" 0 "$(tshark_q -r "$TMP/relay.pcapng" -Y '_ws.malformed || _ws.expert.severity >= "error"' | wc -l)"

# --- 2. a relay address dnsmasq has no route to: every host gives up
in_k iptables -A OUTPUT -d 10.30.0.0/24 -j DROP || skip "iptables cannot filter in a namespace"
KMAC=$(in_k cat "/sys/class/net/$IF_K/address")
LOG0=$(grep -c DHCPDISCOVER "$TMP/dnsmasq.log")
start_capture "$TMP/unreach.pcapng"
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$SCRIPT" --clients $N --mac 02:79:00:00:01:01 \
  --subnet 10.30.0.0/24 --relay 10.30.0.1 --gateway-mac "$KMAC" --retries 2 --circuit p%d
stop_capture
check "unreachable: exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_match "unreachable: all $N gave up" "^states: gave_up $N$" "$OUT"
check "unreachable: dhcp_gave_up $N, 2 DISCOVERs each sent, no OFFER" "$N $((2 * N)) 0" \
  "$(val dhcp_gave_up) $(val dhcp_discover_tx) $(val dhcp_offer_rx)"
check "unreachable: dnsmasq received the $((2 * N)) DISCOVERs" $((2 * N)) \
  "$(( $(grep -c DHCPDISCOVER "$TMP/dnsmasq.log") - LOG0 ))"
check "unreachable: dnsmasq OFFERed (to the relay it cannot reach)" yes \
  "$([ "$(grep -c 'DHCPOFFER.*10\.30\.0\.' "$TMP/dnsmasq.log")" -ge $N ] && echo yes)"
check "unreachable: tshark: nothing to 10.30.0.1 on the wire" 0 \
  "$(tshark_q -r "$TMP/unreach.pcapng" -Y 'ip.dst == 10.30.0.1' | wc -l)"
finish
