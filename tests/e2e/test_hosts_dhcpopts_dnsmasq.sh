#!/bin/bash
# test_hosts_dhcpopts_dnsmasq.sh - issue 33 items 2, 3, 8: the DHCPv4
# clients' scripted options and behaviour (docs/hosts.md "DHCP options")
# against dnsmasq in a network namespace, dnsmasq's tags as the judge:
#  1. relay agent information (82: circuit-id "c%d", remote-id "r%d"),
#     vendor class (60) and host name (12, "cpe-%d"): each circuit-id
#     selects a one-address pool, so host i is bound to exactly
#     10.1.0.(100 + 10 i); remote-id r2 and the vendor class select the
#     DNS servers and router dnsmasq sends, which the hosts keep (options
#     in); dnsmasq's leases file holds the host names sent.
#  2. the ARP check: host 0's reserved address 10.1.0.120 is another
#     kernel's too (a macvlan in a third namespace): it answers the probe, host 0 DECLINEs it (tshark: DHCPDECLINE
#     with option 50 = 10.1.0.120; dnsmasq logs it) and binds another.
#  3. renewals = 2 with dnsmasq's T1 of 2 s: two renewals each (tshark:
#     REQUESTs with ciaddr), then RELEASE; leave_after: RELEASE after 1 s;
#     dnsmasq's leases file is empty each time.
#  4. the generator as the relay agent in front of its clients (RFC 2131
#     4.1, RFC 3046; docs/hosts.md "DHCP relay"), dnsmasq the server of a
#     pool that is not its own link's, 10.20.0.0/24, reached through the
#     relay's address 10.20.0.1 (giaddr) by an on-link route: 8 hosts
#     bound from it; the relay resolved the server by ARP (the kernel
#     learnt the relay's MAC from it); dnsmasq's leases file holds exactly
#     their MACs; tshark sees each request from 10.20.0.1 port 67 with
#     giaddr 10.20.0.1, hops 1 and option 82 (circuit-id "p<n>", remote-id
#     "olt-7") last, dnsmasq's replies to 10.20.0.1 port 67 echoing it (no
#     mismatch counted); the kernel pings host 0's address (answered: ARP
#     and echo for its remote-pool address). A relay address the server
#     cannot reach (10.30.0.1, dropped by its firewall): dnsmasq receives
#     the DISCOVERs, its OFFERs never leave; every host gives up.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
need_cmd dnsmasq
need_cmd tshark
conn_pair hdo
surge_ns
LEASES=$TMP/leases
SCRIPT=$SURGE_SRC/tests/e2e/hosts_dhcpopts.lua
DPID=
# dnsmasq ARGS...: (re)starts dnsmasq on $IF_K with an empty leases file and log
start_dnsmasq() {
  [ -n "$DPID" ] && { kill "$DPID"; wait "$DPID" 2>/dev/null; }
  : >"$LEASES"
  : >"$TMP/dnsmasq.log"
  ip netns exec "$NS_K" dnsmasq --no-daemon --port=0 --interface="$IF_K" --bind-interfaces \
    --dhcp-leasefile="$LEASES" --dhcp-authoritative --no-ping --log-dhcp --log-facility="$TMP/dnsmasq.log" \
    "$@" 2>"$TMP/dnsmasq.err" &
  DPID=$!
  on_exit "kill $DPID"
  wait_for_text "$TMP/dnsmasq.log" "sockets bound" 5 ||
    { kill -0 $DPID 2>/dev/null || skip "dnsmasq did not start: $(cat "$TMP/dnsmasq.err")"; }
}
val() { printf '%s\n' "$OUT" | awk -v k="$1" '$1 == k { print $2 }'; }
hostline() { printf '%s\n' "$OUT" | awk -v i="$1" '$1 == "host" && $2 == i { print $4, $5, $6, $7, $8 }'; }
# wait for dnsmasq's leases file to hold N lines
leases_n() { local n; for _ in $(seq 30); do n=$(wc -l <"$LEASES"); [ "$n" = "$1" ] && break; sleep 0.1; done; echo "$n"; }

# --- 1. options out select dnsmasq's pools and options; options in kept
start_dnsmasq \
  --dhcp-circuitid=set:c0,c0 --dhcp-circuitid=set:c1,c1 --dhcp-circuitid=set:c2,c2 --dhcp-circuitid=set:c3,c3 \
  --dhcp-range=tag:c0,10.1.0.100,10.1.0.100,255.255.255.0,1h --dhcp-range=tag:c1,10.1.0.110,10.1.0.110,255.255.255.0,1h \
  --dhcp-range=tag:c2,10.1.0.120,10.1.0.120,255.255.255.0,1h --dhcp-range=tag:c3,10.1.0.130,10.1.0.130,255.255.255.0,1h \
  --dhcp-remoteid=set:r2,r2 --dhcp-option=tag:r2,option:dns-server,10.1.0.53,10.1.0.54 \
  --dhcp-vendorclass=set:cpe,surge-cpe --dhcp-option=tag:cpe,option:router,10.1.0.254
start_capture "$TMP/opts.pcapng"
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$SCRIPT" --clients 4 --hostname cpe-%d \
  --circuit c%d --remote r%d --vendor surge-cpe
stop_capture
check "options: exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_match "options: 4 bound" "^states: bound 4$" "$OUT"
for i in 0 1 2 3; do
  dns=-; [ $i = 2 ] && dns=10.1.0.53,10.1.0.54
  check "host $i (circuit-id c$i): its pool's one address, mask, vendor class's router, remote-id r$i's DNS" \
    "bound 10.1.0.$((100 + 10 * i)) 255.255.255.0 10.1.0.254 $dns" "$(hostline $i)"
done
check "dnsmasq's leases file: the host names surge sent, by MAC" \
  "02:78:00:00:00:01 10.1.0.100 cpe-0
02:78:00:00:00:02 10.1.0.110 cpe-1
02:78:00:00:00:03 10.1.0.120 cpe-2
02:78:00:00:00:04 10.1.0.130 cpe-3" "$(awk '{ print $2, $3, $4 }' "$LEASES" | sort)"
# tshark decodes the options surge sent: host 3's DISCOVER
check "tshark: host 3's DISCOVER carries 12 cpe-3, 60 surge-cpe, 82.1 c3, 82.2 r3" "cpe-3 surge-cpe c3 r3" \
  "$(tshark_q -r "$TMP/opts.pcapng" -Y 'dhcp.option.dhcp == 1 && eth.src == 02:78:00:00:00:04' -T fields \
     -e dhcp.option.hostname -e dhcp.option.vendor_class_id -e dhcp.option.agent_information_option.agent_circuit_id \
     -e dhcp.option.agent_information_option.agent_remote_id | head -1 | tr '\t' ' ' | python3 -c '
import sys
f = sys.stdin.read().split()
# tshark shows the sub-options as hex bytes
print(" ".join(bytes.fromhex(x.replace(":", "")).decode() if i >= 2 else x for i, x in enumerate(f)))')"
check "tshark: no malformed DHCP frame" 0 "$(tshark_q -r "$TMP/opts.pcapng" -Y '_ws.malformed || _ws.expert.severity >= "error"' | wc -l)"

# --- 2. the ARP check: 10.1.0.120 reserved for host 0 is another kernel's
# too (a macvlan on the link in a third namespace: not dnsmasq's own, whose
# OFFER would be delivered locally)
NS_T=hdot$$
ip netns add "$NS_T" || skip "cannot create a network namespace"
on_exit "ip netns del $NS_T"
in_k ip link add hdot$$m link "$IF_K" type macvlan mode bridge || skip "cannot create a macvlan"
in_k ip link set hdot$$m netns "$NS_T"
ip netns exec "$NS_T" ip addr add 10.1.0.120/24 dev hdot$$m
ip netns exec "$NS_T" ip link set hdot$$m up
start_dnsmasq --dhcp-range=10.1.0.121,10.1.0.129,255.255.255.0,1h --dhcp-host=02:78:00:00:00:01,10.1.0.120 \
  --dhcp-option=option:T1,2 --dhcp-option=option:T2,3
start_capture "$TMP/decline.pcapng"
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$SCRIPT" --clients 3 --arp-check --decline-wait 0.5 \
  --renewals 2 --wait-released
stop_capture
check "decline: exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_match "decline, renewals: all 3 released in the end" "^states: released 3$" "$OUT"
check "one DECLINE, an ARP conflict; 3 left after their 2 renewals (6), none after leave_after, none gave up" \
  "1 1 3 6 0 0" "$(val dhcp_declined) $(val arp_conflict) $(val dhcp_left_renewals) $(val dhcp_renewed) $(val dhcp_left_after) $(val dhcp_gave_up)"
check "tshark: host 0's DHCPDECLINE asks for 10.1.0.120 from the server 10.1.0.1" "02:78:00:00:00:01 10.1.0.120 10.1.0.1" \
  "$(tshark_q -r "$TMP/decline.pcapng" -Y 'dhcp.option.dhcp == 4' -T fields -e eth.src \
     -e dhcp.option.requested_ip_address -e dhcp.option.dhcp_server_id | tr '\t' ' ')"
check "dnsmasq logged the DECLINE of 10.1.0.120" 1 "$(grep -c 'DHCPDECLINE.*10.1.0.120' "$TMP/dnsmasq.log")"
check "tshark: the probes before the DECLINE: ARP from 0.0.0.0 for 10.1.0.120, the kernel's reply" "yes yes" \
  "$(tshark_q -r "$TMP/decline.pcapng" -Y 'arp.opcode == 1 && arp.src.proto_ipv4 == 0.0.0.0 && arp.dst.proto_ipv4 == 10.1.0.120' | grep -q . && echo yes) $(tshark_q -r "$TMP/decline.pcapng" -Y 'arp.opcode == 2 && arp.src.proto_ipv4 == 10.1.0.120' | grep -q . && echo yes)"
# each host's renewals: REQUESTs with ciaddr set, by transaction (a retransmission keeps its xid)
check "tshark: two renewals (REQUESTs with ciaddr, distinct xids) for each of 3 hosts" "2 2 2" \
  "$(tshark_q -r "$TMP/decline.pcapng" -Y 'dhcp.option.dhcp == 3 && dhcp.ip.client != 0.0.0.0' -T fields -e eth.src \
     -e dhcp.id | sort -u | awk '{ print $1 }' | uniq -c | awk '{ printf "%s%s", s, $1; s = " " }')"
check "tshark: 3 RELEASEs" 3 "$(tshark_q -r "$TMP/decline.pcapng" -Y 'dhcp.option.dhcp == 7' | wc -l)"
# dnsmasq's ACKs to host 0: 10.1.0.120 (declined), then one address of the range (ACKed again at each renewal)
check_match "tshark: host 0 ACKed 10.1.0.120, declined it, then bound one of the range's" \
  "^10\\.1\\.0\\.120 10\\.1\\.0\\.12[1-9]$" \
  "$(tshark_q -r "$TMP/decline.pcapng" -Y 'dhcp.option.dhcp == 5 && eth.dst == 02:78:00:00:00:01' -T fields -e dhcp.ip.your |
     uniq | tr '\n' ' ' | sed 's/ $//')"
check "decline, renewals: dnsmasq's leases file is empty" 0 "$(leases_n 0)"
ip netns del "$NS_T"

# --- 3. leave_after: bound 1 s, then RELEASE (before T1)
start_dnsmasq --dhcp-range=10.1.0.121,10.1.0.129,255.255.255.0,1h
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$SCRIPT" --clients 3 --leave-after 1 --wait-released
check "leave_after: exits 0" 0 "$RC"
check_match "leave_after: all 3 released" "^states: released 3$" "$OUT"
check "leave_after: 3 left after leave_after, none renewed, 3 RELEASEs" "3 0 0 3" \
  "$(val dhcp_left_after) $(val dhcp_left_renewals) $(val dhcp_renewed) $(val dhcp_release_tx)"
check "leave_after: dnsmasq logged 3 DHCPRELEASEs" 3 "$(grep -c DHCPRELEASE "$TMP/dnsmasq.log")"
check "leave_after: dnsmasq's leases file is empty" 0 "$(leases_n 0)"

# --- 4. the relay (docs/hosts.md "DHCP relay"): 8 hosts behind it
N=8
# the server's way to the relay: the pool's subnet on its link
in_k ip route add 10.20.0.0/24 dev "$IF_K"
start_dnsmasq --dhcp-range=10.20.0.100,10.20.0.199,255.255.255.0,1h \
  --dhcp-range=10.30.0.100,10.30.0.199,255.255.255.0,1h
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
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$SCRIPT" --clients $N --mac 02:79:00:00:00:01 \
  --subnet 10.20.0.0/24 --relay 10.20.0.1 --circuit p%d --remote olt-7 --hold 3
wait $PINGER
stop_capture
check "relay: exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_match "relay: $N bound" "^states: bound $N$" "$OUT"
check "relay: every host's address from the remote pool 10.20.0.100..199" $N \
  "$(printf '%s\n' "$OUT" | grep -cE '^host [0-9]+ \S+ bound 10\.20\.0\.1[0-9][0-9] ')"
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

# a relay address dnsmasq cannot reach (its firewall drops what goes
# there: dnsmasq sends out of the interface a request came in on, route
# or none): every host gives up
command -v iptables >/dev/null || { echo "SKIP: the unreachable relay: iptables not installed"; finish; }
in_k iptables -A OUTPUT -d 10.30.0.0/24 -j DROP || { echo "SKIP: the unreachable relay: iptables failed"; finish; }
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
