#!/bin/bash
# test_hosts_flow_dnsmasq.sh - issue 33 item 4, hosts as flow endpoints:
# 20 surge DHCPv4 clients (examples/dhcp-storm.lua on net_af_packet) bound
# by dnsmasq in a network namespace, then each sends 5 UDP datagrams to
# the kernel there from a surge.flow whose sources cycle over the bound
# clients (--send). The kernel's interface, captured by tshark, saw exactly
# 100 datagrams, 5 from each (MAC, address) pair of dnsmasq's leases file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
. "$(dirname "$0")/hosts_lib.sh"
need_cmd tshark
conn_pair hfl
surge_ns
dnsmasq_pool 10.1.0.100 10.1.0.149
KMAC=$(in_k cat "/sys/class/net/$IF_K/address")
KIP=$(in_k ip -4 -o addr show dev "$IF_K" | awk '{ split($4, a, "/"); print a[1]; exit }')
[ -n "$KIP" ] || skip "no IPv4 address on the kernel's end"
ip netns exec "$NS_K" tshark -n -i "$IF_K" -f "udp dst port 9" -T fields -e eth.src -e ip.src -e ip.dst \
  >"$TMP/cap.txt" 2>"$TMP/cap.err" &
TPID=$!
on_exit "kill $TPID"
wait_for_text "$TMP/cap.err" "Capturing on" 20 "$TPID"
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/dhcp-storm.lua" \
  --clients 20 --rto 0.3 --retries 3 --subnet 10.1.0.0/24 --send 5 --to "$KIP" --to-mac "$KMAC"
check "exits 0" 0 "$RC"
check_match "20 clients bound" "^clients: bound 20$" "$OUT"
check_match "100 datagrams sent" "^sent: 100 datagrams from 20 bound clients$" "$OUT"
sleep 1
kill -INT $TPID 2>/dev/null
wait $TPID 2>/dev/null
awk '{ print $2, $3 }' "$LEASES" | sort >"$TMP/leases.pairs"
check "dnsmasq leased 20" 20 "$(wc -l <"$TMP/leases.pairs")"
check "the kernel's interface saw 100 datagrams to its address" 100 "$(awk -v d="$KIP" '$3 == d' "$TMP/cap.txt" | wc -l)"
awk '{ print $1, $2 }' "$TMP/cap.txt" | sort | uniq -c | awk '{ print $2, $3, $1 }' >"$TMP/seen"
awk '{ print $1, $2, 5 }' "$TMP/leases.pairs" >"$TMP/want"
check_true "5 datagrams from each leased (MAC, address) pair, and from nothing else" \
  "$(diff "$TMP/want" "$TMP/seen" | head -5)" cmp -s "$TMP/want" "$TMP/seen"
finish
