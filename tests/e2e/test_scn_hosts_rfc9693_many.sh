#!/bin/bash
# test_scn_hosts_rfc9693_many.sh - issue 33 item 4 past the old bound of
# 4096 source addresses a client engine took: rfc9693 --clients-dhcp N
# with N=5000 (test_scn_hosts_rfc9693.sh: 50, through a connection table).
# The DUT is the Linux kernel in a network namespace routing between
# surge's two ports (dut_lib.sh), its client side a /17, dnsmasq there
# with --dhcp-lease-max N (its default stops at 1000) over a range of 2N
# (dnsmasq reserves nothing it offers: with a range of exactly N, offers to
# clients binding at once collide as the range fills, and the losers, NAKed
# again and again, give up: 4298 of 5000 bound). The capacity trial opens
# N connections, one from each client (the first order takes the addresses
# in turn, docs/connections.md), from port 1024; then a setup-rate trial
# of n = 1000 (2000/s for 0.5 s), fewer than the clients, from port
# 1024 + N. The judges:
#   - dnsmasq's leases file: N leases to N distinct MACs, the clients';
#   - the SYNs tshark saw arrive on the DUT's client side come from exactly
#     the leased addresses (every one of them, nothing else); the capacity
#     trial's are N connections (distinct address and port), the setup
#     trial's come from the n lowest leased addresses, one each;
#   - every capacity connection was established, the server saw each.
# The kernel's neighbour table is one for every namespace, its hard limit
# (net.ipv4.neigh.default.gc_thresh3, 1024 here) set for the whole host:
# an entry per client would overflow it, and every other test's ARP with
# it. So the DUT answers none by ARP: dnsmasq broadcasts its replies
# (--dhcp-broadcast: no ARP entry injected for each offer) and the pool is
# routed through one permanent neighbour at surge's client port's MAC
# (where the hosts' engine takes a segment by its address, not its MAC).
# The hosts answering the DUT's ARP is test_scn_hosts_rfc9693.sh's check.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/dut_lib.sh"
. "$(dirname "$0")/hosts_lib.sh"
need_root
need_cmd ip
need_cmd ethtool
need_cmd tshark
need_cmd python3

N=${MANY_N:-5000}
P=r9m$(($$ % 100000))
dut_router "$P"
NS_K=$NSD IF_K=${P}a1
in_k() { in_d "$@"; }
# the client side a /17 for a range of 2N from 10.0.4.1 (N up to 15000)
in_d ip addr del 10.0.0.1/24 dev "$IF_K"
in_d ip addr add 10.0.0.1/17 dev "$IF_K"
# the return path: the range routed through one neighbour, an entry that
# never ages, at surge's client port's MAC (see the header)
A0_MAC=$(ip netns exec "$NSS" cat "/sys/class/net/${P}a0/address")
in_d ip neigh add 10.0.0.254 lladdr "$A0_MAC" dev "$IF_K" nud permanent
for r in 10.0.4.0/22 10.0.8.0/21 10.0.16.0/20 10.0.32.0/19 10.0.64.0/18; do in_d ip route add "$r" via 10.0.0.254 dev "$IF_K"; done
first=$((0x0a000401)) last=$((0x0a000401 + 2 * N - 1))
ip_of() { printf '%d.%d.%d.%d' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) $(($1 & 255)); }
# the leases file in memory: dnsmasq syncs it to disk at each write (on
# this disk 18.7 s to bind 5000 against 11.3 s)
SHM=$(mktemp -d /dev/shm/surge-r9m.XXXXXX) || skip "no /dev/shm"
on_exit "rm -rf $SHM"
LEASES=$SHM/leases
dnsmasq_pool "$(ip_of $first)" "$(ip_of $last)" 255.255.128.0 --dhcp-lease-max="$N" --dhcp-broadcast --quiet-dhcp
in_d tshark -q -n -i "$IF_K" -f "tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn" -w "$TMP/syn.pcap" \
  >"$TMP/tshark.log" 2>&1 &
TPID=$!
on_exit "kill $TPID"
wait_for_text "$TMP/tshark.log" "Capturing on" 10 || skip "tshark did not start: $(cat "$TMP/tshark.log")"
echo "# capacity from $N DHCP clients (dnsmasq leases at most $N)"
run_surge 120 run --no-huge --stats-interval 0 --output "$TMP/cap.json" "${DEVS[@]}" rfc9693 --tx 0 --rx 1 \
  --gateway 10.0.0.1 --rx-gateway 10.1.0.1 --tests capacity,setup-rate --max-connections "$N" --open-rate 5000 --max-rate 2000 \
  --min-rate 1000 --trial 0.5 --max-trials 1 \
  --clients-dhcp "$N" --clients-subnet 10.0.0.0/17 --clients-rate "${MANY_RATE:-2000}" --clients-timeout 60
echo "#   ($SECS s)"
sleep 0.5
kill "$TPID"; wait "$TPID" 2>/dev/null
check "capacity run exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
echo "$OUT" | grep -E "clients:|capacity:" | head
check_match "the clients were bound first" "clients: $N DHCP clients bound in [0-9.]+ s" "$OUT"
awk '{ print $3 }' "$LEASES" | sort >"$TMP/leased"
check "dnsmasq leased $N" "$N" "$(wc -l <"$TMP/leased")"
check "to $N distinct MACs, the clients' (02:96:93:..)" "$N" \
  "$(awk '$2 ~ /^02:96:93:/ { print $2 }' "$LEASES" | sort -u | wc -l)"
read -r nclients <<<"$(python3 -c 'import json,sys
print(json.load(open(sys.argv[1]))["scenarios"]["rfc9693"].get("clients_dhcp", ""))' "$TMP/cap.json")"
check "the results say $N DHCP clients" "$N" "$nclients"
tshark -n -r "$TMP/syn.pcap" -T fields -e ip.src -e tcp.srcport 2>/dev/null | sort -u >"$TMP/conns"
awk '{ print $1 }' "$TMP/conns" | sort -u >"$TMP/srcs"
check_true "the DUT's SYNs come from exactly the leased addresses" \
  "$(diff "$TMP/leased" "$TMP/srcs" | head -5)" cmp -s "$TMP/leased" "$TMP/srcs"
check "capacity: $N connections opened (distinct address and port of the SYNs)" "$N" \
  "$(awk '$2 == 1024' "$TMP/conns" | wc -l)"
sort -t. -k1,1n -k2,2n -k3,3n -k4,4n "$TMP/leased" | head -1000 | sort >"$TMP/lowest"
awk -v p=$((1024 + N)) '$2 == p { print $1 }' "$TMP/conns" | sort >"$TMP/setup"
check_true "setup-rate: its 1000 connections from the 1000 lowest leased addresses, one each" \
  "$(diff "$TMP/lowest" "$TMP/setup" | head -5)" cmp -s "$TMP/lowest" "$TMP/setup"
check "no SYN from another port" "" "$(awk -v p=$((1024 + N)) '$2 != 1024 && $2 != p' "$TMP/conns" | head -3)"
check_match "every connection established, the server saw each" \
  "capacity: $N of $N established and held \(the server saw $N\)" "$OUT"
finish
