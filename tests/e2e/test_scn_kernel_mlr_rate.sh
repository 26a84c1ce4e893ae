#!/bin/bash
# test_scn_kernel_mlr_rate.sh - mlrsearch (RFC 9971) against a DUT whose
# throughput is known in advance: the Linux kernel router of
# scripts/lab-router with a tbf qdisc at 20 Mbit/s on its egress veth. The
# kernel counts frames without FCS, so the true forwarding rate is
# 20e6 / (8 x 60) = 41 667 pps at 64 bytes and 20e6 / (8 x 508) = 4 921 pps at
# 512. NDR and PDR must each lie within 1 % of it (their conditional
# throughput, what the DUT forwarded; the PDR load within 1 % of truth /
# 0.995, where a shaper loses 0.5 %); with 0.1 % random loss in the router's
# FORWARD chain the PDR stays within 1 % while the NDR falls
# below. The trial time MLRsearch takes for both goals at 512 B is printed
# next to rfc2544's binary search for the same goals, width and trial length,
# and is lower (at 64 B the router pushes back on af_packet's sender instead
# of dropping: rfc2544 counts loss over what was sent and passes at once
# with T = what surge could send, so 512 B, where tbf drops, is the fair
# comparison). Bad goals: one line naming the option, exit 2, no traffic.
#
# Final trials of 2.5 s with a duration sum of 5 s (2 trials): tbf's queue
# (latency 20 ms) lets a load about 20 ms / trial above the rate through
# without loss, 0.9 % at 2.5 s; shorter trials read high by more than 1 %.
# The machine is shared: when the kernel on it cannot forward even 99 % of
# the tbf rate whole (its softirq or surge's sender starved; checked before
# each search), the truth does not hold and the accuracy checks say so and
# are skipped (the rest still run).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip
need_cmd tc
need_cmd iptables-legacy
need_cmd python3

P=mlr$$
NS=${P}dut
on_exit "$SURGE_SRC/scripts/lab-router down --prefix $P >/dev/null"
"$SURGE_SRC/scripts/lab-router" up --prefix "$P" --tbf 20mbit ||
  skip "cannot set up the router (netns, veths, tc tbf)"
DEVS=(--vdev "net_af_packet0,iface=${P}a0" --vdev "net_af_packet1,iface=${P}b0")
DUT=(--tx 0 --rx 1 --gateway 10.0.0.1 --rx-gateway 10.1.0.1 --settle 0.1)
# 40 Mbit/s of L1: 59.5 kpps at 64 B, 9.4 kpps at 512 B, above either truth
TOP=(--max-rate 40mbit)
MLR=(--final-trial 2.5 --duration-sum 5)
T64=41667
T512=4921.26

# field J SIZE GOAL KEY: a row's value in results file J
field() {
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["scenarios"]["mlrsearch"]
for r in d["rows"]:
    if r["frame_size"] == int(sys.argv[2]) and r["goal"] == sys.argv[3]:
        print(r.get(sys.argv[4], 0)); break' "$@"
}
within1() { awk -v v="$1" -v t="$2" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(d <= t * 0.01) }'; }

echo "# bad goals: one line naming the option, exit 2, before any traffic"
for bad in "--goals NDR:1|--goals: goal NDR: loss ratio 1 must be" \
           "--exceed-ratio 1.5|--exceed-ratio: goal NDR: exceed ratio 1.5 must be in 0..1" \
           "--exceed-ratio -0.5|--exceed-ratio: goal NDR: exceed ratio -0.5 must be in 0..1" \
           "--width 0|--width: goal NDR: width 0 must be above 0" \
           "--goals NDR:0,NDR:0.01|--goals: goal 'NDR' given twice" \
           "--final-trial 2 --duration-sum 1|--duration-sum: goal NDR: duration sum 1 s must be at least"; do
  args=${bad%%|*} msg=${bad#*|}
  # shellcheck disable=SC2086
  run_surge 30 run --no-huge --stats-interval 0 -q "${DEVS[@]}" mlrsearch "${DUT[@]}" "${TOP[@]}" $args
  check "mlrsearch $args: exit 2" 2 "$RC"
  check_match "mlrsearch $args: the line names the option" "^mlrsearch: $msg" "$ERR"
  check_nomatch "mlrsearch $args: no trial ran" "trial +1 " "$OUT"
done
run_surge 30 run --no-huge --stats-interval 0 -q "${DEVS[@]}" rfc2544 "${DUT[@]}" "${TOP[@]}" --search mlr --resolution 0
check "rfc2544 --search mlr --resolution 0: exit 2" 2 "$RC"
check_match "rfc2544: the line names --resolution" "^rfc2544: --resolution: width 0 must be above 0" "$ERR"

# truth_holds SIZE TRUTH: 99 % of the tbf rate goes through now (2.5 s, less
# than 1 % lost); ACC[SIZE]=0 (and a NOTE) when it does not: the machine is
# loaded, the kernel or surge's sender short of CPU (they lose 20 % and more
# then), and the truth does not hold
declare -A ACC
truth_holds() {
  local size=$1 truth=$2 line
  run_surge 60 run --no-huge --stats-interval 0 "${DEVS[@]}" mlrsearch "${DUT[@]}" --sizes "$size" --phases 0 \
    --max-rate "$(awk -v t="$truth" 'BEGIN { printf "%.0f", t * 0.99 }')" --final-trial 2.5 --duration-sum 2.5 \
    --initial-trial 2.5 --max-trials 1
  line=$(printf '%s\n' "$OUT" | grep -E "B  trial +1 ")
  echo "#   does the truth hold now? $line"
  ACC[$size]=1
  if ! printf '%s' "$line" | awk '{ for (i = 1; i < NF; i++) if ($i == "ratio") exit !($(i + 1) < 0.01); exit 1 }'; then
    ACC[$size]=0
    echo "NOTE: 99 % of the tbf rate at $size B does not go through now (the machine is loaded: the kernel or"
    echo "NOTE: surge's sender is short of CPU): the truth does not hold, its 1 % checks below are skipped"
  fi
}

echo "# MLRsearch NDR and PDR at 64 and 512 bytes"
truth_holds 64 $T64
truth_holds 512 $T512
J1=$TMP/mlr.json
run_surge 200 run --no-huge --stats-interval 0 --output "$J1" "${DEVS[@]}" mlrsearch "${DUT[@]}" "${TOP[@]}" --sizes 64,512 \
  "${MLR[@]}"
check "mlrsearch exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
# docs/scenarios.md's output (issue 31 item 13): its first line with this
# run's MACs, its table's columns, its trial line's shape
doc_first=$(grep -m1 '^mlrsearch: tx port ' "$SURGE_SRC/docs/scenarios.md")
doc_re=$(printf '%s' "$doc_first" | sed -E 's/[][().^$*+?{}|\\]/\\&/g; s/([0-9a-f]{2}:){5}[0-9a-f]{2}/[0-9a-f:]{17}/g')
check_match "its first line is the one docs/scenarios.md shows (MACs aside)" "^$doc_re$" \
  "$(printf '%s\n' "$OUT" | grep -v '^surge: ' | head -1)"
doc_head=$(grep -m1 '^size  goal  loss_ratio' "$SURGE_SRC/docs/scenarios.md" | tr -s ' ')
check "the table's columns are the ones docs/scenarios.md shows" "$doc_head" \
  "$(printf '%s\n' "$OUT" | grep -m1 '^size  goal  loss_ratio' | tr -s ' ')"
check_match "a trial line of the shape the doc shows" \
  "^ +64 B  trial   1  [0-9.]+ s at [0-9.]+ [kM]pps  sent [0-9]+  received [0-9]+  loss ratio [0-9.e-]+" "$OUT"
for size in 64 512; do
  truth=$([ $size = 64 ] && echo $T64 || echo $T512)
  for goal in NDR PDR; do
    lb=$(field "$J1" $size $goal lower_bound_pps)
    ub=$(field "$J1" $size $goal upper_bound_pps)
    ct=$(field "$J1" $size $goal conditional_throughput_pps)
    echo "#   $size B $goal: lower bound $lb, upper bound $ub, conditional throughput $ct pps (truth $truth)"
    check_true "$size B $goal: bounds found (lower > 0)" "lower $lb" lt 0 "${lb:-0}"
    check_true "$size B $goal: relative width <= 0.5 %" "lower $lb upper $ub" \
      awk -v l="${lb:-0}" -v u="${ub:-0}" 'BEGIN { exit !(u == 0 || (u - l) / u <= 0.005 + 1e-9) }'
    if [ "${ACC[$size]}" = 1 ]; then
      # what the DUT forwarded at the goal's lower bound; the PDR load itself
      # may lose 0.5 %: a shaper's is truth / 0.995
      check_true "$size B $goal: conditional throughput within 1 % of $truth" "$ct" within1 "${ct:-0}" "$truth"
      want=$([ $goal = NDR ] && echo "$truth" || awk -v t="$truth" 'BEGIN { print t / 0.995 }')
      check_true "$size B $goal: lower bound within 1 % of $want" "lower bound $lb" within1 "${lb:-0}" "$want"
    fi
  done
done
ts=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["scenarios"]["mlrsearch"]["trial_seconds"])' "$J1")
check_true "trial_seconds at the scenario level" "trial_seconds $ts" lt 0 "${ts:-0}"
check_true "every trial listed with load, duration and loss" "$(head -c 300 "$J1")" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["scenarios"]["mlrsearch"]
assert d["search"] == "mlr" and len(d["trials"]) > 4
assert all(t["load_pps"] > 0 and t["duration_s"] > 0 and 0 <= t["loss_ratio"] <= 1 for t in d["trials"])
assert abs(sum(t["duration_s"] for t in d["trials"]) - d["trial_seconds"]) < 1e-6' "$J1"
MLR512=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["scenarios"]["mlrsearch"]
print(sum(s["trial_seconds"] for s in d["sizes"] if s["size"] == 512))' "$J1")
if command -v python3 >/dev/null && python3 -c 'import jsonschema' 2>/dev/null; then
  check_true "the results file matches docs/results.schema.json" "$(python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' "$J1" "$SURGE_SRC/docs/results.schema.json" 2>&1 | tail -1)" \
    python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' "$J1" "$SURGE_SRC/docs/results.schema.json"
fi
check_pools "mlrsearch"

echo "# binary search for the same goals at 512 bytes: rfc2544 --search binary, width 0.5 % of the truth"
BIN=0
for tol in 0 0.5; do
  J=$TMP/bin$tol.json
  run_surge 120 run --no-huge --stats-interval 0 --output "$J" "${DEVS[@]}" rfc2544 "${DUT[@]}" "${TOP[@]}" \
    --sizes 512 --tests throughput --search binary --trial 2.5 --tolerance $tol --max-trials 30 \
    --resolution "$(awk -v t=$T512 'BEGIN { printf "%.4f", 0.5 * t / (40e6 / (532 * 8)) }')"
  check "rfc2544 --search binary --tolerance $tol exits 0" 0 "$RC"
  read -r s pps < <(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["scenarios"]["rfc2544"]
assert d["search"] == "binary"
t = d["sizes"][0]["throughput"]
print(t["trial_seconds"], t["pps"])' "$J")
  echo "#   binary, tolerance $tol %: ${s:-?} trial seconds, ${pps:-?} pps"
  BIN=$(awk -v a="$BIN" -v b="${s:-0}" 'BEGIN { print a + b }')
done
echo "#   512 B, NDR and PDR to 0.5 % width: MLRsearch $MLR512 trial seconds, binary search $BIN"
check_true "MLRsearch needs less trial time than binary search ($MLR512 s < $BIN s)" "MLR $MLR512 binary $BIN" \
  lt "${MLR512:-1e9}" "$BIN"

echo "# 0.1 % random loss: PDR stays, NDR falls"
# at 512 B: the router's own rate (4921 pps) is far below what the kernel and
# surge's sender manage on a loaded machine, so what is measured is the rule's
# loss and the tbf, not a starved CPU (at 64 B the chain itself often cannot
# carry the truth here: see truth_holds)
ip netns exec "$NS" iptables-legacy -A FORWARD -m statistic --mode random --probability 0.001 -j DROP
truth_holds 512 $T512    # with the rule: netfilter costs the kernel CPU too
J2=$TMP/mlr-loss.json
run_surge 150 run --no-huge --stats-interval 0 --output "$J2" "${DEVS[@]}" mlrsearch "${DUT[@]}" "${TOP[@]}" --sizes 512 \
  "${MLR[@]}" --min-rate 4kpps
check "mlrsearch with random loss exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
pdr=$(field "$J2" 512 PDR conditional_throughput_pps)
ndr=$(field "$J2" 512 NDR lower_bound_pps)
echo "#   512 B with 0.1 % random loss: NDR $ndr, PDR $pdr pps (conditional throughput; truth $T512)"
if [ "${ACC[512]}" = 1 ]; then
  check_true "PDR's conditional throughput within 1 % of $T512 with 0.1 % random loss" "PDR $pdr" within1 \
    "${pdr:-0}" $T512
fi
check_true "NDR falls below the truth with 0.1 % random loss" "NDR $ndr" lt "${ndr:-1e9}" \
  "$(awk -v t=$T512 'BEGIN { print t * 0.99 }')"
finish
