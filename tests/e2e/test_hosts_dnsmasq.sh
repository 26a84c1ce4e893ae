#!/bin/bash
# test_hosts_dnsmasq.sh - issue 33: surge's DHCPv4 clients (surge.hosts,
# examples/dhcp-storm.lua on net_af_packet) against dnsmasq in a network
# namespace with a pool of exactly 50 addresses (PEERS.md's recipe):
# 51 clients, 50 bound and the 51st refused (no offer, or dnsmasq's NAK
# of an address taken meanwhile: it gives up after its retries); dnsmasq's leases file holds
# exactly the 50 MACs and addresses surge says it bound; a second run of
# 50 binds and releases, and the leases file is empty.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
. "$(dirname "$0")/hosts_lib.sh"
conn_pair hod
surge_ns
dnsmasq_pool 10.1.0.100 10.1.0.149
val() { printf '%s\n' "$OUT" | awk -v k="$1" '$1 == k { print $2 }'; }

run_surge 60 run --no-huge --stats-interval 0 --output "$TMP/r.json" --vdev "$VDEV" "$EXAMPLES/dhcp-storm.lua" \
  --clients 51 --rto 0.3 --retries 3 --list --subnet 10.1.0.0/24
check "51 clients: exits 0" 0 "$RC"
check_match "51 clients on a pool of 50: 50 bound, 1 gave up" "^clients: bound 50, gave_up 1$" "$OUT"
# the 51st is NAKed when dnsmasq offered it an address another took meanwhile, or
# never offered one: surge's NAKs are dnsmasq's
NAKS=$(grep -c DHCPNAK "$TMP/dnsmasq.log")
check "50 ACKs, the NAKs dnsmasq logged ($NAKS), one client given up" "50 $NAKS 1" \
  "$(val dhcp_ack_rx) $(val dhcp_nak_rx) $(val dhcp_gave_up)"
check "dnsmasq logged 50 DHCPACKs" 50 "$(grep -c DHCPACK "$TMP/dnsmasq.log")"
check "nothing refused as garbage, nothing stray" "0 0" "$(val dhcp_bad) $(val dhcp_stray)"
printf '%s\n' "$OUT" | awk '$1 == "bound" { print $2, $3 }' | sort >"$TMP/surge.bound"
awk '{ print $2, $3 }' "$LEASES" | sort >"$TMP/dnsmasq.bound"
check "dnsmasq's leases file: 50 leases" 50 "$(wc -l <"$TMP/dnsmasq.bound")"
check_true "the leases file holds exactly the MACs and addresses surge bound" \
  "$(diff "$TMP/surge.bound" "$TMP/dnsmasq.bound" | head -5)" cmp -s "$TMP/surge.bound" "$TMP/dnsmasq.bound"
check_true "every MAC is one surge's clients use (02:77:00:00:00:01 + 0..50)" "$(cat "$TMP/dnsmasq.bound" | head -3)" \
  python3 -c '
import sys
ok = {"02:77:00:00:00:%02x" % (1 + i) for i in range(51)}
sys.exit(0 if all(l.split()[0] in ok for l in open(sys.argv[1])) else 1)' "$TMP/dnsmasq.bound"
python3 - "$TMP/r.json" "$SURGE_SRC/docs/results.schema.json" "$NAKS" <<'PY' || FAILS=$((FAILS + 1))
import json, sys
import jsonschema
r = json.load(open(sys.argv[1]))
jsonschema.validate(r, json.load(open(sys.argv[2])))
c = {x["name"]: x["value"] for x in r["counters"]}
assert c["hosts.dhcp_ack_rx"] == 50 and c["hosts.dhcp_nak_rx"] == int(sys.argv[3]), c
assert c["hosts.dhcp_gave_up"] == 1 and c["hosts.dhcp_lost"] == 0, c
assert c["hosts.state.bound"] == 50 and c["hosts.state.gave_up"] == 1, c
print("ok   --output: the hosts' counters and states (schema-valid)")
PY
check_pools "51 clients"

run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/dhcp-storm.lua" --clients 50 \
  --rto 0.3 --retries 3 --release --subnet 10.1.0.0/24
check "release: exits 0" 0 "$RC"
check_match "release: the 50 bound, then released" "^clients: released 50$" "$OUT"
check "release: 50 DHCPRELEASEs sent" 50 "$(val dhcp_release_tx)"
n=50
for _ in $(seq 30); do n=$(wc -l <"$LEASES"); [ "$n" = 0 ] && break; sleep 0.1; done
check "release: dnsmasq's leases file is empty" 0 "$n"
check "release: dnsmasq logged 50 DHCPRELEASEs" 50 "$(grep -c DHCPRELEASE "$TMP/dnsmasq.log")"
check_pools "release"
finish
