#!/bin/bash
# test_hosts_conn_dnsmasq.sh - issue 33 item 4, hosts as the TCP engine's
# sources: 20 surge DHCPv4 clients (examples/dhcp-storm.lua on
# net_af_packet) bound by dnsmasq in a network namespace, then one HTTP GET
# from each bound client's address (surge.conn with the addresses as its
# sources, --http) to the kernel's HTTP server there (python3 -m
# http.server); the kernel resolves each source by ARP, answered by the
# host table. The server's log holds exactly one GET from each address of
# dnsmasq's leases file, and the kernel's neighbour table maps each to
# that lease's MAC.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
. "$(dirname "$0")/hosts_lib.sh"
conn_pair hcn
surge_ns
dnsmasq_pool 10.1.0.100 10.1.0.149
KMAC=$(in_k cat "/sys/class/net/$IF_K/address")
KIP=10.1.0.1
(cd "$TMP" && exec ip netns exec "$NS_K" python3 -m http.server --bind "$KIP" 8080) >"$TMP/http.log" 2>&1 &
HPID=$!
on_exit "kill $HPID"
for _ in $(seq 50); do in_k bash -c "exec 3<>/dev/tcp/$KIP/8080" 2>/dev/null && break; sleep 0.1; done
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/dhcp-storm.lua" \
  --clients 20 --rto 0.3 --retries 3 --subnet 10.1.0.0/24 --http 8080 --to "$KIP" --to-mac "$KMAC"
check "exits 0" 0 "$RC"
check_match "20 clients bound" "^clients: bound 20$" "$OUT"
check_match "20 connections completed, none failed" "^client: 20 attempted, 20 established, 20 completed, 0 failed " "$OUT"
awk '{ print $3 }' "$LEASES" | sort >"$TMP/leased"
grep '"GET / HTTP/1.1" 200' "$TMP/http.log" | awk '{ print $1 }' | sort >"$TMP/got"
check "dnsmasq leased 20" 20 "$(wc -l <"$TMP/leased")"
check_true "the server's log: one GET from each leased address, from nothing else" \
  "$(diff "$TMP/leased" "$TMP/got" | head -5)" cmp -s "$TMP/leased" "$TMP/got"
check_lease_neigh "the kernel's neighbours: each leased address at its lease's MAC"
finish
