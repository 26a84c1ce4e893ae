#!/bin/bash
# test_scn_hosts_rfc9693.sh - issue 33 item 4: rfc9693 from DHCP-bound
# clients (--clients-dhcp N). The DUT is the Linux kernel in a network
# namespace: a router between surge's client port and surge's server port,
# dnsmasq on its client side leasing exactly N=50 addresses, and a known
# connection table (connlimit: at most 80 connections through, 120
# offered). surge binds the 50 clients first, then the capacity trial opens
# its connections from their addresses. The judges:
#   - dnsmasq's leases file: 50 leases, and the SYNs tshark saw arrive on
#     the DUT's client side come from exactly those addresses, nothing else;
#   - the capacity figure is the known 80 (the server saw the same);
#   - the kernel's neighbour table holds each leased address at its lease's
#     MAC (the hosts answered the DUT's ARP for the server's replies);
#   - a pool one address short: a clear error naming --clients-dhcp, exit 1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/dut_lib.sh"
. "$(dirname "$0")/hosts_lib.sh"
need_root
need_cmd ip
need_cmd ethtool
need_cmd iptables-legacy
need_cmd tshark
need_cmd python3

P=r9h$(($$ % 100000))
dut_router "$P"
# hosts_lib's dnsmasq_pool runs in $NS_K on $IF_K
NS_K=$NSD IF_K=${P}a1
in_k() { in_d "$@"; }
SCN=(rfc9693 --tx 0 --rx 1 --gateway 10.0.0.1 --rx-gateway 10.1.0.1 --tests capacity --max-connections 120
  --open-rate 1000)
# DOC: the command docs/scenarios.md shows (it must still show it), run
# with this test's names and --output
DOC='surge run --vdev net_af_packet0,iface=a0 --vdev net_af_packet1,iface=b0 rfc9693 --tx 0 --rx 1 --gateway 10.0.0.1 --rx-gateway 10.1.0.1 --tests capacity --max-connections 120 --open-rate 1000 --clients-dhcp 50'
grep -qxF -- "$DOC" "$SURGE_SRC/docs/scenarios.md" || { echo "FAIL docs/scenarios.md no longer shows: $DOC"; FAILS=$((FAILS + 1)); }
row() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["scenarios"]["rfc9693"]
print(next((str(x["value"]) for x in r["rows"] if x["test"] == sys.argv[2]), ""), r.get("clients_dhcp", ""))' \
  "$TMP/$1.json" "$2"; }

N=49   # a pool one address short of 50 first: refused with a clear line
dnsmasq_pool 10.0.0.100 10.0.0.148
run_surge 30 run --no-huge --stats-interval 0 "${DEVS[@]}" "${SCN[@]}" --clients-dhcp 50 --clients-timeout 3
check "a pool of $N for 50 clients: exit 1" 1 "$RC"
check_match "the error names --clients-dhcp and the count bound" \
  "^--clients-dhcp: $N of 50 DHCP clients bound in [0-9.]+ s \(bound $N, selecting 1\)" "$ERR"
kill "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null

N=50
echo "# capacity through a table of 80 from $N DHCP clients (dnsmasq leases exactly $N)"
rm -f "$TMP/dnsmasq.log" "$TMP/leases"
dnsmasq_pool 10.0.0.100 10.0.0.149
in_d iptables-legacy -A FORWARD -p tcp --syn -m connlimit --connlimit-above 80 --connlimit-mask 0 -j DROP ||
  skip "no connlimit match here"
in_d tshark -q -n -i "${P}a1" -f "tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn" -w "$TMP/syn.pcap" \
  >"$TMP/tshark.log" 2>&1 &
TPID=$!
on_exit "kill $TPID"
wait_for_text "$TMP/tshark.log" "Capturing on" 10 || skip "tshark did not start: $(cat "$TMP/tshark.log")"
read -ra DOCARGS <<<"$(printf '%s' "$DOC" | sed -E "s/^surge run //; s/iface=([ab])0/iface=${P}\10/g")"
run_surge 40 run --no-huge --stats-interval 0 --output "$TMP/cap.json" "${DOCARGS[@]}"
echo "#   ($SECS s)"
sleep 0.5
kill "$TPID"; wait "$TPID" 2>/dev/null
check "capacity run exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
check_match "the clients were bound first" "clients: $N DHCP clients bound in [0-9.]+ s" "$OUT"
read -r cap nclients <<<"$(row cap capacity)"
check "capacity: the table's 80" 80 "$cap"
check "the results say $N DHCP clients" $N "$nclients"
check_match "the server saw the same connections" "capacity: 80 of 120 established and held \(the server saw 80\)" "$OUT"
awk '{ print $3 }' "$LEASES" | sort >"$TMP/leased"
tshark -n -r "$TMP/syn.pcap" -T fields -e ip.src 2>/dev/null | sort -u >"$TMP/srcs"
check "dnsmasq leased $N" $N "$(wc -l <"$TMP/leased")"
check_true "the DUT's SYNs come from exactly the leased addresses" \
  "$(diff "$TMP/leased" "$TMP/srcs" | head -5)" cmp -s "$TMP/leased" "$TMP/srcs"
conns=$(tshark -n -r "$TMP/syn.pcap" -T fields -e ip.src -e tcp.srcport 2>/dev/null | sort -u | wc -l)
check "120 connections opened (distinct address and port of the SYNs)" 120 "$conns"
python3 -c 'import jsonschema' 2>/dev/null &&
  check "the results file matches docs/results.schema.json" "" "$(python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' "$TMP/cap.json" \
    "$SURGE_SRC/docs/results.schema.json" 2>&1 | tail -1)"
check_lease_neigh "the DUT's neighbours: each leased address at its lease's MAC"
finish
