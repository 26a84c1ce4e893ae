#!/bin/bash
# test_hosts_bench.sh - issue 33: the hosts bench row's driver
# (bench/hosts.lua --role both: surge's DHCPv4 clients and surge's DHCP
# server on one loopback ring, one task) run for correctness, not speed:
# 20000 clients all bound and the server's ACKs, leases and the clients'
# counters agree; the hosts' counters and the binding-time histogram
# scraped from --metrics pass promtool and add up; the results file
# (--output) holds them and validates against docs/results.schema.json.
. "$(dirname "$0")/lib.sh"
need_cmd promtool
need_cmd curl
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema not installed"
N=20000
"$SURGE" run --no-huge --stats-interval 0 --vdev net_ring_hbench0 --metrics 0 --output "$TMP/r.json" \
  "$SURGE_SRC/bench/hosts.lua" --role both --count $N --hold 20 >"$TMP/s.out" 2>"$TMP/s.err" &
SPID=$!
on_exit "kill -KILL $SPID"
wait_for_text "$TMP/s.out" '^surge: metrics: http://127\.0\.0\.1:[0-9]+/metrics$' 20 "$SPID"
URL=$(sed -n 's|^surge: metrics: \(http://127\.0\.0\.1:[0-9]*/metrics\)$|\1|p' "$TMP/s.out" | head -1)
# scraped once every client is bound (the gauge says so)
bound=no
for _ in $(seq 200); do
  curl -s "$URL" >"$TMP/m.txt" 2>/dev/null
  grep -q "^surge_script_hosts_state_bound $N\$" "$TMP/m.txt" && { bound=yes; break; }
  kill -0 $SPID 2>/dev/null || break
  sleep 0.1
done
check "the scrape shows $N clients bound" yes "$bound"
check_true "promtool check metrics passes the scrape" "$(promtool check metrics <"$TMP/m.txt" 2>&1)" \
  promtool check metrics <"$TMP/m.txt"
m() { sed -n "s/^$1 \([0-9.e+]*\)\$/\1/p" "$TMP/m.txt"; }
check "ACKs received = bindings" $N "$(m surge_script_hosts_dhcp_ack_rx_total)"
check "the server's ACKs (another table) = bindings" $N "$(m surge_script_dhcps_dhcps_ack_tx_total)"
check "the server's leases" $N "$(m surge_script_dhcps_state_bound)"
check "the histogram's last bucket counts every binding" $N "$(m surge_script_hosts_bind_le_inf_total)"
# the cumulative buckets never fall
prev=0 ok=yes
for b in 1 8 64 512 4096 32768; do
  v=$(m "surge_script_hosts_bind_le_${b}ms_total")
  [ -n "$v" ] && [ "$v" -ge "$prev" ] || ok="no ($b ms: '$v' after $prev)"
  prev=${v:-0}
done
check "the buckets rise to the count" yes "$ok"
kill -INT $SPID
wait $SPID
check "the driver exits 0" 0 $?
check_match "its summary: every client bound" "^dhcp-client: bound $N of $N in " "$(cat "$TMP/s.out")"
check_match "the server's summary" "^dhcp-server: $N acks, $N leases, 0 naks$" "$(cat "$TMP/s.out")"
python3 - "$TMP/r.json" "$SURGE_SRC/docs/results.schema.json" "$N" <<'PY' || FAILS=$((FAILS + 1))
import json, sys
import jsonschema
r = json.load(open(sys.argv[1]))
jsonschema.validate(r, json.load(open(sys.argv[2])))
n = int(sys.argv[3])
c = {x["name"]: x["value"] for x in r["counters"]}
want = {"hosts.dhcp_ack_rx": n, "hosts.state.bound": n, "hosts.bind_le_inf": n, "dhcps.dhcps_ack_tx": n,
        "dhcps.state.bound": n, "hosts.dhcp_nak_rx": 0}
bad = {k: c.get(k) for k, v in want.items() if c.get(k) != v}
assert not bad, "results file: %s" % bad
assert 0 < c["hosts.bind_seconds"] < n * 10, c["hosts.bind_seconds"]
print("ok   --output: the hosts' and the server's counters, the histogram (schema-valid)")
PY
finish
