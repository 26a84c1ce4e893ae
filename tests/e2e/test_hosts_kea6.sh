#!/bin/bash
# test_hosts_kea6.sh - issue 33: surge's DHCPv6 clients (surge.hosts with
# dhcp6 and pd, examples/hosts6.lua on net_af_packet) against kea-dhcp6 in a
# network namespace with a pool of exactly 8 addresses and a prefix pool
# of exactly 8 /64s (2001:db8:3700::/61): 9 clients, 8 bound each with an
# address and a prefix, the 9th refused (NoAddrsAvail: it gives up after its
# retries); kea's lease file holds exactly the DUIDs (DUID-LL of each MAC),
# IAIDs, addresses and prefixes surge says it bound. Then rapid commit: 8
# clients bound by SOLICIT and REPLY alone, and released: every lease of
# kea's file released.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
need_cmd kea-dhcp6
conn_pair h6k 6
surge_ns
in_k ip addr add 2001:db8:37::1/64 dev "$IF_K" nodad
for _ in $(seq 50); do in_k ip -6 addr show dev "$IF_K" scope link | grep -q fe80 && \
  ! in_k ip -6 addr show dev "$IF_K" | grep -q tentative && break; sleep 0.1; done
LEASES=$TMP/leases6.csv
# kea_conf RAPID: the server's configuration
kea_conf() {
  cat <<EOF
{ "Dhcp6": {
  "interfaces-config": { "interfaces": [ "$IF_K" ] },
  "lease-database": { "type": "memfile", "name": "$LEASES", "persist": true, "lfc-interval": 0 },
  "server-id": { "type": "LL", "persist": false },
  "preferred-lifetime": 1800, "valid-lifetime": 3600, "renew-timer": 900, "rebind-timer": 1440,
  "subnet6": [ { "id": 1, "subnet": "2001:db8:37::/64", "interface": "$IF_K", "rapid-commit": $1,
    "pools": [ { "pool": "2001:db8:37::100 - 2001:db8:37::107" } ],
    "pd-pools": [ { "prefix": "2001:db8:3700::", "prefix-len": 61, "delegated-len": 64 } ] } ],
  "loggers": [ { "name": "kea-dhcp6", "severity": "INFO", "output_options": [ { "output": "$TMP/kea.log" } ] } ]
} }
EOF
}
export KEA_PIDFILE_DIR=$TMP KEA_LOCKFILE_DIR=$TMP
start_kea() {
  kea_conf "$1" >"$TMP/kea.json"
  : >"$TMP/kea.log"
  ip netns exec "$NS_K" kea-dhcp6 -c "$TMP/kea.json" >"$TMP/kea.out" 2>&1 &
  KPID=$!
  on_exit "kill $KPID"
  wait_for_text "$TMP/kea.log" "DHCP6_STARTED|opening sockets|DHCPSRV_CFGMGR_USE_UNICAST|DHCP6_CONFIG_COMPLETE" 10 $KPID ||
    { kill -0 $KPID 2>/dev/null || skip "kea-dhcp6 did not start: $(tail -3 "$TMP/kea.out" "$TMP/kea.log")"; }
  sleep 0.3
}
stop_kea() { kill $KPID; wait $KPID 2>/dev/null; }
val() { printf '%s\n' "$OUT" | awk -v k="$1" '$1 == k { print $2 }'; }
# the leases kea holds now: the last line of each address or prefix, not released or expired (valid > 0, state 0)
kea_held() {
  python3 - "$LEASES" <<'PY'
import csv, sys
last = {}
for r in csv.DictReader(open(sys.argv[1])):
    last[(r["address"], r["lease_type"])] = r
for (a, t), r in sorted(last.items()):
    if int(r["valid_lifetime"]) > 0 and r["state"] == "0" and int(r["expire"]) > 0:
        kind = "na" if t == "0" else "pd"
        p = a if kind == "na" else a + "/" + r["prefix_len"]
        print(kind, p, r["duid"].lower(), r["iaid"])
PY
}
# surge's bindings in the same form: DUID-LL 00:03:00:01 and the MAC
surge_held() {
  printf '%s\n' "$OUT" | awk '$1 == "dhcp6" && $4 == "bound" { print "na", $5, "00:03:00:01:" $3, $6 }
                              $1 == "pd" { print "pd", $4, "00:03:00:01:" $3, $5 }' | sort
}

start_kea false
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/hosts6.lua" --count 9 --mac 02:37:00:00:00:01 \
  --dhcp6 --pd --rs 0 --probe 0.05 --rto 0.3 --retries 3 --settle --seconds 30 --list
check "9 clients: exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check "8 clients bound, with an address and a prefix each" "8 8" \
  "$(printf '%s\n' "$OUT" | grep -c '^dhcp6 .* bound ') $(printf '%s\n' "$OUT" | grep -c '^pd ')"
check "the 9th gave up (counted once)" "1 1" \
  "$(printf '%s\n' "$OUT" | grep -c '^dhcp6 .* gave_up ') $(val dhcp6_gave_up)"
check "hosts6_dhcp 8, nothing garbage or stray" "8 0 0" "$(val hosts6_dhcp) $(val dhcp6_bad) $(val dhcp6_stray)"
check_true "8 replies binding, the 9th's refusals besides" "got $(val dhcp6_reply_rx)" [ "$(val dhcp6_reply_rx)" -ge 8 ]
check_true "the 9th refused: NoAddrsAvail/NoPrefixAvail counted" "got $(val dhcp6_noaddr)" [ "$(val dhcp6_noaddr)" -ge 1 ]
surge_held >"$TMP/surge.held"
kea_held | sort >"$TMP/kea.held"
check "kea's lease file: 8 addresses and 8 prefixes held" "8 8" \
  "$(grep -c '^na' "$TMP/kea.held") $(grep -c '^pd' "$TMP/kea.held")"
check "kea's leases are exactly surge's bindings (DUID, IAID, address, prefix)" "" \
  "$(diff "$TMP/surge.held" "$TMP/kea.held" | head -6)"
check_true "every address from the pool, every prefix a /64 of 2001:db8:3700::/61" "$(head -3 "$TMP/kea.held")" \
  python3 -c '
import ipaddress, sys
for l in open(sys.argv[1]):
    k, a = l.split()[:2]
    if k == "na":
        assert ipaddress.ip_address("2001:db8:37::100") <= ipaddress.ip_address(a) <= ipaddress.ip_address("2001:db8:37::107"), a
    else:
        assert ipaddress.ip_network(a).subnet_of(ipaddress.ip_network("2001:db8:3700::/61")) and a.endswith("/64"), a
' "$TMP/kea.held"
check_pools "9 clients"
stop_kea

# rapid commit: a fresh server; SOLICIT and REPLY bind, no REQUEST; then RELEASE
rm -f "$LEASES"
start_kea true
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/hosts6.lua" --count 8 --mac 02:37:00:00:01:01 \
  --dhcp6 --pd --rapid --rs 0 --probe 0.05 --rto 0.3 --retries 3 --settle --release --seconds 30 --list
check "rapid commit: exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check "rapid commit: 8 bound by a REPLY to the SOLICIT (no ADVERTISE, no REQUEST), then released" "8 0 8 8" \
  "$(val dhcp6_reply_rx) $(val dhcp6_advertise_rx) $(val dhcp6_release_tx) $(printf '%s\n' "$OUT" | grep -c '^dhcp6 .* released ')"
check "rapid commit: only SOLICITs and RELEASEs sent" "8 0" "$(val dhcp6_solicit_tx) $(val dhcp6_request_tx)"
n=16
for _ in $(seq 30); do n=$(kea_held | wc -l); [ "$n" = 0 ] && break; sleep 0.1; done
check "release: kea holds no lease any more" 0 "$n"
check_pools "rapid commit"
stop_kea
finish
