#!/bin/bash
# test_scn_kernel_rfc9693.sh - issue 21 item 4: the rfc9693 scenario against
# the Linux kernel as a stateful DUT: conntrack + NAT (iptables MASQUERADE)
# in a network namespace between surge's client port and surge's server
# port (PEERS.md "Known connection limits"), surge's ports in a namespace of
# their own. The DUT gets known limits, and rfc9693 must find them:
#   - a connection table of N entries (connlimit --connlimit-above N
#     --connlimit-mask 0 on SYNs; the global nf_conntrack_max is left alone):
#     capacity within 1 %;
#   - new connections limited to R/s (conntrack NEW + hashlimit): the setup
#     rate within 2 % (a burst of 15: surge's pacer on these shared CPUs may lag
#     ~10 ms, and a trial of 1.5 s lets a 1 % overshoot through at most).
# Then a short teardown-rate (300 connections held 1.2 s: each second response
# right at an idle tick, where an early RTO sent it twice) and throughput run through the NAT with no
# limit, and the results validated against docs/results.schema.json.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/dut_lib.sh"
need_root
need_cmd ip
need_cmd ethtool
need_cmd iptables-legacy
need_cmd python3

P=r9$$
dut_router "$P"
in_d iptables-legacy -t nat -A POSTROUTING -o "${P}b1" -j MASQUERADE || skip "no iptables NAT here"
SCN=(rfc9693 --tx 0 --rx 1 --gateway 10.0.0.1 --rx-gateway 10.1.0.1)
row() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["scenarios"]["rfc9693"]
print(next((str(x["value"]) for x in r["rows"] if x["test"] == sys.argv[2]), ""))' "$TMP/$1.json" "$2"; }
validate() {
  python3 - "$TMP/$1.json" "$SURGE_SRC/docs/results.schema.json" <<'PY' || FAILS=$((FAILS + 1))
import json, sys
import jsonschema
r = json.load(open(sys.argv[1]))
jsonschema.validate(r, json.load(open(sys.argv[2])))
print("ok   --output valid against the schema: rows", [(x["test"], x["value"]) for x in r["scenarios"]["rfc9693"]["rows"]])
PY
}

N=400
echo "# capacity: the DUT holds at most $N connections (connlimit); 480 offered"
in_d iptables-legacy -A FORWARD -p tcp --syn -m connlimit --connlimit-above $N --connlimit-mask 0 -j DROP ||
  skip "no connlimit match here"
run_surge 30 run --no-huge --stats-interval 0 --output "$TMP/cap.json" "${DEVS[@]}" "${SCN[@]}" --tests capacity \
  --max-connections 480 --open-rate 2000
echo "#   ($SECS s)"
check "capacity run exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
check_match "surge resolved the DUT's MAC by ARP" "via gateway 10.0.0.1 \(" "$OUT"
cap=$(row cap capacity)
echo "#   capacity found: $cap (truth $N)"
check_true "capacity $cap within 1 % of $N" "capacity '$cap'" awk -v v="${cap:-0}" -v t=$N \
  'BEGIN { exit !(v >= t * 0.99 && v <= t * 1.01) }'
check_match "the server saw the same connections" "capacity: $cap of 480 established and held \(the server saw $cap\)" "$OUT"
validate cap
in_d iptables-legacy -F FORWARD

R=1000
echo "# setup rate: new connections limited to $R/s (conntrack NEW + hashlimit)"
in_d iptables-legacy -A FORWARD -p tcp -m conntrack --ctstate NEW -m hashlimit --hashlimit-above $R/sec \
  --hashlimit-burst 15 --hashlimit-name "${P}new" -j DROP || skip "no hashlimit match here"
run_surge 40 run --no-huge --stats-interval 0 --output "$TMP/setup.json" "${DEVS[@]}" "${SCN[@]}" --tests setup-rate \
  --min-rate 700 --max-rate 1400 --trial 1.5 --width 1% --settle 0.3
echo "#   ($SECS s)"
check "setup-rate run exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
rate=$(row setup setup_rate)
echo "#   setup rate found: $rate/s (truth $R/s)"
check_true "setup rate $rate within 2 % of $R" "setup_rate '$rate'" awk -v v="${rate:-0}" -v t=$R \
  'BEGIN { exit !(v >= t * 0.98 && v <= t * 1.02) }'
check_match "a trial above the limit failed" "setup-rate: trial at +[0-9.]+/s .* fail: " "$OUT"
validate setup
in_d iptables-legacy -F FORWARD

echo "# teardown rate and throughput through the NAT without a limit: every trial passes at the top"
run_surge 30 run --no-huge --stats-interval 0 --output "$TMP/tt.json" "${DEVS[@]}" "${SCN[@]}" \
  --tests teardown-rate,throughput --max-rate 300 --min-rate 50 --trial 1 --max-trials 1 \
  --connections 8 --throughput-time 0.5 --response-size 1024
echo "#   ($SECS s)"
check "teardown/throughput run exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
check_match "teardown at 300/s passed: all closed cleanly, nothing sent again" \
  "teardown-rate: trial at +300.0/s +300 connections +300 established +300 completed +pass" "$OUT"
check "teardown_rate row: 300" 300 "$(row tt teardown_rate)"
tput=$(row tt throughput)
check_true "throughput measured (${tput:-none} bit/s)" "throughput '$tput'" awk -v v="${tput:-0}" 'BEGIN { exit !(v > 0) }'
check_match "throughput: every connection open, none failed" "throughput: .* 8 of 8 connections open, 0 failed" "$OUT"
# a bit rate for people, never an exponent (issue 31 item 17: "4.2e+07 bit/s")
check_match "throughput: the bit rate in words" "throughput: [0-9.]+ [kMG]?bit/s of responses \(" "$OUT"
check_match "the server sent nothing again" "server.retransmits 0," "$OUT"
validate tt
check_pools "rfc9693"
finish
