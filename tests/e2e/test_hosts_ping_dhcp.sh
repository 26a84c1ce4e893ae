#!/bin/bash
# test_hosts_ping_dhcp.sh - issue 33: DHCPv4 hosts ping a target off their
# subnet through the router their ACK named (option 3), with no `via`
# (docs/hosts.md "Ping"). The kernel in a namespace is dnsmasq's host and
# the router: 10.1.0.1/24 on its veth (dnsmasq's default router option),
# the target 10.99.0.1 on its loopback, and arp_ignore=1 on the veth, so
# an ARP request for the target itself is never answered there.
# 1. dnsmasq names the router: 20 hosts bind, ping 10.99.0.1 3 times each;
#    the kernel's IcmpInEchos rise by exactly the 60 surge sent, all
#    answered; tshark sees the hosts ask ARP for 10.1.0.1 only, never for
#    10.99.0.1.
# 2. dnsmasq names no router (an empty option 3): the hosts ask ARP for the
#    target itself, nobody answers, the ping ends unresolved, nothing sent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
. "$(dirname "$0")/hosts_lib.sh"
need_cmd tshark
conn_pair hpd
surge_ns
in_k ip addr add 10.99.0.1/32 dev lo
in_k sysctl -qw "net.ipv4.conf.$IF_K.arp_ignore=1"
N=20
snmp4() { in_k awk '/^Icmp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 } else print $c["InEchos"] }' /proc/net/snmp; }
ping_run() {  # ping_run MAC: N DHCP hosts from MAC ping 10.99.0.1, no --via
  run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/hosts-ping.lua" --dhcp 10.1.0.0/24 \
    --count $N --mac "$1" --target 10.99.0.1 --pings 3 --interval 0.2 --timeout 1
}
val() { printf '%s\n' "$OUT" | awk -v k="$1" '$1 == k { print $2 }'; }
arp_targets() {  # the addresses the hosts asked ARP for, one line each
  tshark_q -r "$1" -Y "arp.opcode == 1 && eth.src[0:3] == ${2}" -T fields -e arp.dst.proto_ipv4 | sort -u | tr '\n' ' '
}

# --- 1. the router from the ACK
dnsmasq_pool 10.1.0.100 10.1.0.149
start_capture "$TMP/r.pcapng"
E4=$(snmp4)
ping_run 02:3d:00:00:00:01
A4=$(snmp4)
stop_capture
check "router: exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check "router: the $N hosts bound by dnsmasq (ACKed, none gave up)" "$N 0" "$(val dhcp_ack_rx) $(val dhcp_gave_up)"
check "router: $N x 3 requests sent, all answered, none timed out" "$((N * 3)) $((N * 3)) 0" \
  "$(val ping_tx) $(val ping_reply) $(val ping_timeout)"
check "router: the kernel's IcmpInEchos rose by exactly what surge sent" "$(val ping_tx)" $((A4 - E4))
check "router: tshark, the hosts asked ARP for the router only" "10.1.0.1 " "$(arp_targets "$TMP/r.pcapng" 02:3d:00)"
check_pools "router"
kill "$DPID"
wait "$DPID" 2>/dev/null
mv "$TMP/dnsmasq.log" "$TMP/dnsmasq.1.log"   # the next one's "sockets bound" is its own

# --- 2. no router option: the target asked for itself, unanswered
dnsmasq_pool 10.1.0.100 10.1.0.149 255.255.255.0 --dhcp-option=3
start_capture "$TMP/n.pcapng"
ping_run 02:3e:00:00:00:01
stop_capture
check "no router: exits 0" 0 "$RC"
[ "$RC" = 0 ] || { show_run; tail -5 "$TMP/dnsmasq.log"; }
check "no router: 3 ARP requests, the ping unresolved, nothing sent" "3 1 0" \
  "$(val ping_resolve_tx) $(val ping_unresolved) $(val ping_tx)"
check "no router: tshark, the hosts asked ARP for the target itself" "10.99.0.1 " \
  "$(arp_targets "$TMP/n.pcapng" 02:3e:00)"
check_pools "no router"
finish
