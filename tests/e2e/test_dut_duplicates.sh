#!/bin/bash
# test_dut_duplicates.sh - issue 23 item 12b: a DUT that duplicates frames
# cannot hide its loss. The Linux kernel is the DUT: on the far end of a veth
# pair, tc's ingress drops every frame of one flow in four (u32 on the UDP
# source port) and sends every other frame back twice (two mirred actions).
# (the lost flow goes to a second veth pair nobody reads.) surge's flood counts per flow from the sequence numbers: received = the
# unique frames (3/4 of sent), duplicated = as many again, lost = 1/4 of
# sent; before the fix the copies counted as received and the loss read 0.
# Then latency probes through it: the histogram holds each unique probe once.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip
need_cmd tc
need_cmd python3

A=sg$$d
B=sg$$e
C=sg$$f
D=sg$$g
on_exit "ip link del $A"
ip link add "$A" type veth peer name "$B" 2>/dev/null || skip "cannot create a veth pair (ip link add)"
on_exit "ip link del $C"
ip link add "$C" type veth peer name "$D" 2>/dev/null || skip "cannot create a second veth pair"
for i in "$A" "$B" "$C" "$D"; do sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1" || skip "cannot disable IPv6 on $i"; done
for i in "$A" "$B" "$C" "$D"; do ip link set "$i" up; done
tc qdisc add dev "$B" handle ffff: ingress 2>/dev/null || skip "no tc ingress qdisc"
# prio 1: UDP source ports with the low two bits 0 (flow 0 of --flows 4) are
# lost: sent into a second veth pair nobody reads (this kernel has no gact "drop")
tc filter add dev "$B" parent ffff: prio 1 protocol ip u32 match ip protocol 17 0xff match ip sport 0 0x3 \
  action mirred egress redirect dev "$C" 2>/dev/null || skip "no tc u32 classifier or mirred action"
# prio 2: everything else goes back out of $B twice
tc filter add dev "$B" parent ffff: prio 2 protocol ip u32 match u32 0 0 \
  action mirred egress mirror dev "$B" action mirred egress redirect dev "$B" 2>/dev/null || skip "no tc mirred"
sleep 0.3

run_surge 90 run --no-huge --stats-interval 0 --file-prefix "sgdup$$" --output "$TMP/r.json" \
  --vdev "net_af_packet0,iface=$A" flood --flows 4 --trial 0.5 --rate 2000 --settle 0.3
check "flood exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 20
check_match "the summary table has a duplicated column" "size +sent +received +loss_% +reordered +duplicated" "$OUT"
check_match "the progress line names the duplicates" "loss [0-9.]+ %  duplicated [1-9][0-9]*" "$OUT"
GOT=$(python3 - "$TMP/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["scenarios"]["flood"]
sent, recv, lost, dup = r["sent"], r["received"], r["lost"], r.get("duplicated")
want_lost = (sent + 3) // 4          # flow 0 of 4, the rotation starts at flow 0
print("sent>0", sent > 0)
print("lost", lost == want_lost, lost, want_lost)
print("received", recv == sent - want_lost, recv)
print("duplicated", dup == recv, dup)
print("size row", r["sizes"][0].get("duplicated") == dup)
PY
)
check_match "sent" "sent>0 True" "$GOT"
check_match "lost = the quarter the DUT dropped" "^lost True" "$GOT"
check_match "received = unique frames only" "^received True" "$GOT"
check_match "duplicated = one copy of each forwarded frame" "^duplicated True" "$GOT"
check_match "the per-size row has it too" "^size row True" "$GOT"
check_true "the results file is schema-valid" "$(python3 "$E2E_DIR/results/check_results.py" "$TMP/r.json" \
  "$SURGE_SRC/docs/results.schema.json" 2>&1 | grep -v '^ok' | head -3)" \
  python3 "$E2E_DIR/results/check_results.py" "$TMP/r.json" "$SURGE_SRC/docs/results.schema.json"

# The same DUT under latency probes (load-latency, a probe every third
# frame: spread over the 4 flows, a quarter of them lost): each forwarded
# probe comes back twice, and the second copy's latency stays out of the
# histogram, whose count is the unique probes (before, it held both: 1500
# latencies for 750 probes, p50 and max taken up by the copies' later
# arrival).
run_surge 90 run --no-huge --stats-interval 0 --file-prefix "sgdupl$$" --output "$TMP/l.json" \
  --vdev "net_af_packet0,iface=$A" load-latency --flows 4 --rates 3000 --probes 1000 --trial 1 --settle 0.3
check "load-latency exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 20
GOT=$(python3 - "$TMP/l.json" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))["latency"][0]
probes, dup, lost, hist = l["probes"], l["duplicated"], l["lost"], sum(l["buckets"]["count"])
print("probes>0", probes > 0, probes)
print("probe copies", dup == probes, dup)
print("probes lost", lost * 3 == probes, lost)
print("histogram", hist == probes, hist)
PY
)
check_match "probes came back" "probes>0 True" "$GOT"
check_match "each forwarded probe counted duplicated once" "^probe copies True" "$GOT"
check_match "the dropped flow's probes are lost" "^probes lost True" "$GOT"
check_match "the histogram times each unique probe once, no copy" "^histogram True" "$GOT"
finish
