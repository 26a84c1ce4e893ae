#!/bin/bash
# test_scn_kernel_y1564.sh - the y1564 scenario (ITU-T Y.1564, issue 18 item 3)
# against DUTs whose answer is known in advance: the Linux kernel router of
# scripts/lab-router on af_packet veths.
#
# 1. Policing: a tbf at 4 Mbit/s on the router's egress (burst 2 kB, latency
#    10 ms: a queue of ~7 kB that absorbs the bursts of a busy sender below
#    the limit). One service with CIR 2 Mbit/s and EIR 2 Mbit/s: the steps at
#    25..100 % of CIR lie below the limit and pass with FLR 0; the overshoot
#    step (CIR + EIR + 25 % of CIR = 4.5 Mbit/s) is policed, and what it
#    delivers is the limit: the kernel counts frames without FCS, so at 512 B
#    the delivered IR (FCS counted, as Y.1564's IR is) is 4e6 x 512 / 508 =
#    4.031 Mbit/s, within 3 % (tbf's bucket and queue add ~1.5 % over a 1 s
#    step: the service's ebs=7kb says so, so its verdict allows them too).
# 2. Known loss on one service: iptables drops every 1000th UDP frame to port
#    5001 (`-m statistic --mode nth --every 1000 --packet 0`). Two services,
#    one on UDP port 5001 and one on DSCP 46, in the performance test at
#    2000 frames each: the port service loses exactly sent / 1000 frames
#    (FLR 0.1 %), the DSCP one none. The rule matches only that service's
#    frames (the learning trial goes to the default port), so its counter
#    starts with the test.
# Trials are short (1 s steps, 1 s performance test) at a few Mbit/s.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip
need_cmd tc
need_cmd iptables-legacy
need_cmd python3

P=y1564$$
NS=${P}dut
on_exit "$SURGE_SRC/scripts/lab-router down --prefix $P >/dev/null"
"$SURGE_SRC/scripts/lab-router" up --prefix "$P" >/dev/null ||
  skip "cannot set up the router (netns, veths)"
ip netns exec "$NS" tc qdisc add dev "${P}b1" root tbf rate 4mbit burst 2kb latency 10ms ||
  skip "cannot add a tbf qdisc"
DEVS=(--vdev "net_af_packet0,iface=${P}a0" --vdev "net_af_packet1,iface=${P}b0")
DUT=(--tx 0 --rx 1 --gateway 10.0.0.1 --rx-gateway 10.1.0.1 --settle 0.2 --size 512 --interval 0.1)

# field J SERVICE STEP KEY: a row's value in results file J (KEY.sub for a field of an object)
field() {
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["scenarios"]["y1564"]
for r in d["rows"]:
    if r["service"] == sys.argv[2] and r["step"] == sys.argv[3]:
        v = r
        for k in sys.argv[4].split("."): v = v.get(k, "") if isinstance(v, dict) else ""
        print(v); break' "$@"
}
schema_ok() {
  python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' "$1" "$SURGE_SRC/docs/results.schema.json"
}

echo "# 1. a tbf at 4 Mbit/s: steps below it pass with FLR 0, the overshoot is policed to it"
J1=$TMP/police.json
run_surge 60 run --no-huge --stats-interval 0 --output "$J1" "${DEVS[@]}" y1564 "${DUT[@]}" \
  --services shaped:dscp=10:cir=2mbit:eir=2mbit:ebs=7kb:flr=0 --tests config --step 1
check "y1564 (policing) exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
printf '%s\n' "$OUT" | sed -n '/^y1564 results/,/^failed\|^latency/p'
for step in 25% 50% 75% 100%; do
  check "step $step: FLR 0 below the limit" "0" "$(field "$J1" shaped "$step" flr_pct)"
  check "step $step: passes" "True" "$(field "$J1" shaped "$step" pass)"
done
ir=$(field "$J1" shaped overshoot ir_bps)
want=$(awk 'BEGIN { print 4e6 * 512 / 508 }')
echo "#   overshoot: offered $(field "$J1" shaped overshoot offered_bps) bit/s, delivered IR $ir bit/s (limit $want)"
check_true "overshoot: delivered IR within 3 % of the tbf limit" "IR $ir, limit $want" \
  awk -v v="${ir:-0}" -v t="$want" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(d <= t * 0.03) }'
check_true "overshoot: the DUT dropped the excess" "FLR $(field "$J1" shaped overshoot flr_pct)" \
  awk -v f="$(field "$J1" shaped overshoot flr_pct)" 'BEGIN { exit !(f > 5) }'
check "overshoot: policed, so it passes (IR within CIR..CIR+EIR)" "True" "$(field "$J1" shaped overshoot pass)"
check_match "the report: a verdict per step and service" '^ +shaped +overshoot .* PASS ' "$OUT"
if python3 -c 'import jsonschema' 2>/dev/null; then
  check_true "the results file matches docs/results.schema.json" "$(schema_ok "$J1" 2>&1 | tail -1)" schema_ok "$J1"
fi
check_pools "y1564 policing"

echo "# 2. every 1000th frame of one service dropped: FLR 0.1 % exactly there, 0 on the other"
ip netns exec "$NS" tc qdisc del dev "${P}b1" root
ip netns exec "$NS" iptables-legacy -A FORWARD -p udp --dport 5001 -m statistic --mode nth --every 1000 --packet 0 -j DROP
J2=$TMP/nth.json
# 2000 frames of 512 B per second each: 8.192 Mbit/s
run_surge 60 run --no-huge --stats-interval 0 --output "$J2" "${DEVS[@]}" y1564 "${DUT[@]}" \
  --services lossy:port=5001:cir=8.192mbit:flr=0.1%,clean:dscp=46:cir=8.192mbit:flr=0 --tests performance --duration 1
check "y1564 (nth loss) exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
printf '%s\n' "$OUT" | sed -n '/^y1564 results/,/^failed\|^latency/p'
sent=$(field "$J2" lossy performance sent)
lost=$(field "$J2" lossy performance lost)
echo "#   lossy: sent $sent, lost $lost; clean: sent $(field "$J2" clean performance sent), lost $(field "$J2" clean performance lost)"
check "lossy: sent every planned frame" "2000" "$sent"
check "lossy: lost exactly sent / 1000" "$(( ${sent:-0} / 1000 ))" "$lost"
check "lossy: FLR 0.1 %" "0.1" "$(field "$J2" lossy performance flr_pct)"
check "clean: sent every planned frame" "2000" "$(field "$J2" clean performance sent)"
check "clean: FLR 0 (the rule matched the other service only)" "0" "$(field "$J2" clean performance flr_pct)"
check "both pass their own FLR criterion" "True True" \
  "$(field "$J2" lossy performance pass) $(field "$J2" clean performance pass)"
check "the kernel's rule dropped what surge counted lost" "$lost" \
  "$(ip netns exec "$NS" iptables-legacy -L FORWARD -v -x -n | awk '/dpt:5001/ { print $1 }')"
check_pools "y1564 nth loss"
finish
