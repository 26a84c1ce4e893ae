#!/bin/bash
# test_scn_kernel_rfc2889.sh - the rfc2889 scenario against two switches
# nobody here wrote, whose answers are known:
# - Open vSwitch, userspace `netdev` datapath on veths, in a private run
#   directory, with other_config:mac-table-size=500 and then 300: the
#   address caching capacity found is exactly the table size (the learned
#   addresses plus the test port's own), and OVS's own fdb/stats-show says
#   its table was full at that size;
# - the Linux bridge: fully meshed forwarding on 3 ports with no loss below
#   the rate found and every frame on its own port (surge's counts against
#   the kernel's), the address learning rate search, broadcast to every
#   other port.
# Short trials and small search ranges keep it within ~30 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ovs_lib.sh"
need_root
need_cmd ip
need_cmd python3

P=r2889$$            # names unique to this test and run
P=${P:0:10}
for k in 0 1 2; do on_exit "ip link del ${P}o$k"; on_exit "ip link del ${P}l$k"; done
on_exit "ip link del ${P}lbr"

veth() {  # veth NAME PEER: a pair, both up, no IPv6 (no kernel frames of its own on the switch)
  ip link add "$1" type veth peer name "$2" || return 1
  local d
  for d in "$1" "$2"; do sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"; ip link set "$d" up; done
}

for k in 0 1 2; do veth "${P}o$k" "${P}p$k" || skip "cannot make veths"; done
ovs_start "${P}br"
for k in 0 1 2; do "${V[@]}" add-port "${P}br" "${P}p$k"; done
fdb_stats() { ovs_appctl fdb/stats-show "${P}br"; }
OVS=(--vdev "net_af_packet0,iface=${P}o0" --vdev "net_af_packet1,iface=${P}o1" --vdev "net_af_packet2,iface=${P}o2")

row() {  # row FILE TEST FIELD: the field of the results' row of that test
  python3 -c 'import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["scenarios"]["rfc2889"]["rows"] if r["test"] == sys.argv[2]]
v = rows[0].get(sys.argv[3])
print("null" if v is None else (str(v).lower() if isinstance(v, bool) else v))' "$@"
}

top() {  # top FILE FIELD: a field of the rfc2889 results' top level
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["scenarios"]["rfc2889"][sys.argv[2]])' "$@"
}

for size in 500 300; do
  echo "# OVS with a MAC table of $size entries: the caching capacity is $size"
  "${V[@]}" set bridge "${P}br" other_config:mac-table-size=$size
  J=$TMP/ovs$size.json
  run_surge 60 run --no-huge --stats-interval 0 --output "$J" "${OVS[@]}" rfc2889 --ports 0,1,2 --tests caching \
    --min-addresses $((size - 100)) --max-addresses $((size + 100)) --learn-rate 5kpps --settle 0.1
  check "OVS $size: rfc2889 exits 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run 30
  check "OVS $size: capacity (learned + the test port's) is the table size" "$size" "$(row "$J" address_caching capacity)"
  check "OVS $size: learned addresses" "$((size - 1))" "$(row "$J" address_caching learned_addresses)"
  # the trial one above the capacity floods exactly the one address OVS could not keep
  check_match "OVS $size: $((size - 1)) addresses pass, none flooded" \
    "caching  $((size - 1)) addresses  test frames $((size - 1))  received $((size - 1))  flooded 0  lost 0  pass" "$OUT"
  check_match "OVS $size: $size addresses fail, one flooded" \
    "caching  $size addresses  test frames $size  received $size  flooded 1  lost 0  fail" "$OUT"
  check_match "OVS $size: OVS says its table is full at $size" "Current/maximum MAC entries in the table: $size/$size" \
    "$(fdb_stats)"
  check_pools "OVS $size"
done

echo "# the Linux bridge: forwarding, learning, broadcast on 3 ports"
ip link add "${P}lbr" type bridge || skip "no Linux bridge"
sysctl -qw "net.ipv6.conf.${P}lbr.disable_ipv6=1"
ip link set "${P}lbr" up
for k in 0 1 2; do
  veth "${P}l$k" "${P}m$k"
  ip link set "${P}m$k" master "${P}lbr"
done
BR=(--vdev "net_af_packet0,iface=${P}l0" --vdev "net_af_packet1,iface=${P}l1" --vdev "net_af_packet2,iface=${P}l2")
# frames the kernel delivered to / took from surge's veth ends (what af_packet reads and writes), all three ports
l_count() { local k s=0; for k in 0 1 2; do s=$((s + $(cat /sys/class/net/${P}l$k/statistics/$1))); done; echo $s; }
J=$TMP/br.json
rx0=$(l_count rx_packets) tx0=$(l_count tx_packets)
run_surge 90 run --no-huge --stats-interval 0 --output "$J" "${BR[@]}" rfc2889 --ports 0,1,2 \
  --tests forwarding,learning,broadcast --rate 6kpps --trial 0.3 --settle 0.2 --resolution 5 --macs 4 \
  --learning-addresses 200 --learning-max-rate 20kpps --learn-rate 5kpps
rx1=$(l_count rx_packets) tx1=$(l_count tx_packets)
check "bridge: rfc2889 exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 40
fr=$(row "$J" forwarding forwarding_rate_fps)
tp=$(row "$J" forwarding throughput_pps)
echo "#   forwarding rate $fr fps at 6 kpps per port, throughput $tp pps per port"
check_true "bridge: a throughput was found" "throughput '$tp'" lt 0 "${tp:-0}"
check "bridge: fully meshed" fully_meshed "$(row "$J" forwarding pattern)"
# every passing forwarding trial: all frames on their own port, nothing misdirected
check_true "bridge: trials at or below the throughput lost nothing and misdirected nothing" "$OUT" python3 -c '
import re, sys
tp = float(sys.argv[2])
seen = 0
for m in re.finditer(r"forwarding  ([\d.]+) (k?)pps per port  sent (\d+)  received (\d+)  lost (\d+)  misdirected (\d+)  (pass|fail)", sys.argv[1]):
    rate = float(m.group(1)) * (1000 if m.group(2) else 1)
    if rate <= tp * 1.0001:
        seen += 1
        assert m.group(3) == m.group(4) and m.group(5) == "0" and m.group(6) == "0" and m.group(7) == "pass", m.group(0)
assert seen >= 1' "$OUT" "${tp:-0}"
check "bridge: no frame misdirected at the offered load" 0 "$(row "$J" forwarding misdirected_at_max)"
lr=$(row "$J" address_learning learning_rate_fps)
echo "#   learning rate $lr fps for 200 addresses"
check_true "bridge: a learning rate was found" "learning rate '$lr'" lt 0 "${lr:-0}"
check "bridge: broadcast reached both other ports, every frame" \
  "$(( 2 * $(row "$J" broadcast sent) ))" "$(row "$J" broadcast received)"
check_true "bridge: broadcast latency measured" "avg '$(row "$J" broadcast latency_avg_us)'" \
  lt 0 "$(row "$J" broadcast latency_avg_us | sed 's/null/0/')"
# the kernel's counts on surge's veth ends against the trials' own (no frames of the kernel's own: no IPv6):
# every frame sent, exactly; the frames the bridge delivered within 0.5 %: in about one run of three
# surge also reads 3 to 27 frames without its tag that the veth's rx_packets does not count (so surge's
# total is then a little above the kernel's), or the veth counts 3 more than surge read; not understood
# yet. The per-trial counts above, per stream and port, are exact.
echo "#   kernel: took $((tx1 - tx0)), delivered $((rx1 - rx0)); surge: sent $(top "$J" frames_sent), received $(top "$J" frames_received) ($(top "$J" frames_other) untagged)"
check "bridge: the frames surge sent are the frames the kernel took" "$((tx1 - tx0))" "$(top "$J" frames_sent)"
got=$(top "$J" frames_received)
check_true "bridge: the frames surge received ($got) are the frames the bridge delivered ($((rx1 - rx0))) within 0.5 %" \
  "kernel $((rx1 - rx0)), surge $got" python3 -c 'import sys; a, b = int(sys.argv[1]), int(sys.argv[2]); assert abs(a - b) <= 0.005 * a' \
  "$((rx1 - rx0))" "$got"
if python3 -c 'import jsonschema' 2>/dev/null; then
  for f in "$TMP/ovs500.json" "$J"; do
    check_true "$(basename "$f"): matches docs/results.schema.json" "$(python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' "$f" "$SURGE_SRC/docs/results.schema.json" 2>&1 | tail -1)" \
      python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' "$f" "$SURGE_SRC/docs/results.schema.json"
  done
fi
check_pools "bridge"
finish
