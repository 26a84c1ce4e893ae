#!/bin/bash
# test_af_packet_veth.sh - the Linux kernel is the peer: surge sends on one end
# of a veth pair made for this test (net_af_packet), the other end, moved to
# its own network namespace with IPv6 off so the kernel adds nothing of its
# own, must count exactly what surge sent.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip

A=sg$$a
B=sg$$b
NS=sg$$n
on_exit "ip link del $A"
ip link add "$A" type veth peer name "$B" 2>/dev/null || skip "cannot create a veth pair (ip link add)"
# the receiving end lives in its own namespace when that works: nothing on
# the host's stack ever sees the frames
if ip netns add "$NS" 2>/dev/null; then
  on_exit "ip netns del $NS"
  ip link set "$B" netns "$NS" || skip "cannot move $B into $NS"
  INB=(ip netns exec "$NS")
else
  INB=()
fi
sysctl -qw "net.ipv6.conf.$A.disable_ipv6=1" || skip "cannot disable IPv6 on $A"
"${INB[@]}" sysctl -qw "net.ipv6.conf.$B.disable_ipv6=1" || skip "cannot disable IPv6 on $B"
ip link set "$A" up
"${INB[@]}" ip link set "$B" up
rx_b() { "${INB[@]}" cat "/sys/class/net/$B/statistics/rx_packets"; }
rxb_b() { "${INB[@]}" cat "/sys/class/net/$B/statistics/rx_bytes"; }
tx_a() { cat "/sys/class/net/$A/statistics/tx_packets"; }

# wait until the kernel is quiet on the pair (it sends nothing with IPv6 off)
sleep 0.3

send() {  # send COUNT SIZE: one run, checks the peer's counters move by exactly that
  local count=$1 size=$2 rx0 rxb0 tx0 rx1 rxb1 tx1
  rx0=$(rx_b) rxb0=$(rxb_b) tx0=$(tx_a)
  run_surge 60 run --no-huge --stats-interval 0 --vdev "net_af_packet0,iface=$A" "$EXAMPLES/udp-flood.lua" \
    --count "$count" --size "$size" --flows 8
  check "surge exits 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run
  check "surge summary: TX $count" "$count" "$(summary_count "$OUT" 0 TX)"
  check_match "surge summary: tx-drops 0" 'port 0  tx-drops 0 ' "$OUT"
  check_pools "af_packet $count x $size"
  sleep 0.2
  rx1=$(rx_b) rxb1=$(rxb_b) tx1=$(tx_a)
  check "$A (kernel) tx_packets grew by $count" "$count" "$((tx1 - tx0))"
  check "$B (kernel) rx_packets grew by $count" "$count" "$((rx1 - rx0))"
  check "$B (kernel) rx_bytes grew by $count x $size" "$((count * size))" "$((rxb1 - rxb0))"
}

echo "# udp-flood.lua --count 5000 on $A, counted on $B"
send 5000 60
echo "# udp-flood.lua --count 1000 --size 1500"
send 1000 1500
finish
