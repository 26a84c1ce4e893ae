#!/bin/bash
# test_scn_kernel_router.sh - rfc2544 against the Linux kernel as a router:
# two veth pairs into a network namespace with forwarding on; surge on
# net_af_packet at the host ends. surge resolves the kernel's MAC by ARP (and
# NDP for the IPv6 run), answers the kernel's ARP/NDP for 10.1.0.2 /
# 2001:db8:b::2 on port 1, and finds a throughput T such that a trial at T
# loses no more than the tolerance and one at 1.2 T loses more.
#
# The kernel forwards whatever surge's af_packet sender can offer on this
# machine (the sender and the forwarding share the CPU), so the DUT gets a
# forwarding limit of its own: an iptables hashlimit in its FORWARD chain
# drops IPv4 above 50 kpps. What the search finds is the kernel's. The set-up
# is scripts/lab-router's, as docs/scenarios.md shows it.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip
need_cmd iptables-legacy

P=scr$$
NS=${P}dut
# the set-up docs/scenarios.md gives users, so the two cannot drift
on_exit "$SURGE_SRC/scripts/lab-router down --prefix $P >/dev/null"
"$SURGE_SRC/scripts/lab-router" up --prefix "$P" --limit 50000 ||
  skip "cannot set up the router (netns, veths, iptables hashlimit)"
DEVS=(--vdev "net_af_packet0,iface=${P}a0" --vdev "net_af_packet1,iface=${P}b0")
B0_MAC=$(cat /sys/class/net/${P}b0/address)
b1_tx() { ip netns exec "$NS" cat /sys/class/net/${P}b1/statistics/tx_packets; }

echo "# rfc2544 throughput with a confirmation at T and 1.2 T, 64 and 512 bytes"
tx0=$(b1_tx)
run_surge 120 run --no-huge --stats-interval 0 "${DEVS[@]}" rfc2544 --tx 0 --rx 1 --gateway 10.0.0.1 \
  --rx-gateway 10.1.0.1 --sizes 64,512 --tests throughput,latency --max-rate 200kpps --trial 0.4 --settle 0.2 --resolution 2 \
  --tolerance 0.5 --latency-trial 0.5 --confirm
tx1=$(b1_tx)
check "rfc2544 exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
KMAC=$(ip netns exec "$NS" cat /sys/class/net/${P}a1/address)
check_match "surge resolved the kernel's MAC on a1 ($KMAC) by ARP" "via gateway [0-9a-f.:]+ \($KMAC\)" "$OUT"
KMAC_B=$(ip netns exec "$NS" cat /sys/class/net/${P}b1/address)
check_match "surge resolved the kernel's MAC on b1 ($KMAC_B) on the rx port too" "rx side: 10.1.0.1 at $KMAC_B" "$OUT"
check_match "the kernel resolved 10.1.0.2 to surge's port 1 ($B0_MAC)" "10.1.0.2 .*lladdr $B0_MAC" \
  "$(ip netns exec "$NS" ip neigh show dev ${P}b1)"
for size in 64 512; do
  line=$(printf '%s\n' "$OUT" | grep -E "^ +$size B  confirmation:")
  at_t=$(printf '%s' "$line" | sed -E 's/.*at T loss ([0-9.]+) %.*/\1/')
  at_12=$(printf '%s' "$line" | sed -E 's/.*at 1.2 T loss ([0-9.]+) %.*/\1/')
  t=$(printf '%s\n' "$OUT" | awk -v s="$size" '$1 == s && $2 ~ /^[0-9]+$/ { print $2 }')
  echo "#   $size B: T = $t pps, loss at T $at_t %, at 1.2 T $at_12 %"
  check_true "$size B: a throughput was found (T > 0)" "T = '$t'" lt 0 "${t:-0}"
  check_true "$size B: T is below the kernel's limit plus its burst (55 kpps)" "T = $t" lt "${t:-1e9}" 55000
  check_true "$size B: loss at T ($at_t %) <= tolerance 0.5 %" "$line" lt "${at_t:-100}" 0.5001
  check_true "$size B: loss at 1.2 T ($at_12 %) > 0.5 %" "$line" lt 0.5 "${at_12:-0}"
  check_match "$size B: latency at T measured" "^ +$size B  latency at .* probes [1-9]" "$OUT"
done
# the kernel's own count: what it sent on b1 is what surge received on port 1,
# plus its few ARP/NDP frames
rx1=$(summary_count "$OUT" 1 RX)
extra=$(( (tx1 - tx0) - rx1 ))
check_true "kernel b1 tx_packets ($((tx1 - tx0))) = surge port 1 RX ($rx1) + a few control frames ($extra)" \
  "extra $extra" test "$extra" -ge 0 -a "$extra" -le 20
check_pools "kernel rfc2544"

echo "# IPv6: NDP both ways, no loss below capacity"
run_surge 60 run --no-huge --stats-interval 0 "${DEVS[@]}" rfc2544 --tx 0 --rx 1 --src 2001:db8:a::2 \
  --dst 2001:db8:b::2 --gateway 2001:db8:a::1 --rx-gateway 2001:db8:b::1 --sizes 128 --tests throughput \
  --max-rate 10kpps --trial 0.4 --settle 0.2
check "IPv6 rfc2544 exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
check_match "surge resolved the kernel's MAC by NDP" "via gateway [0-9a-f.:]+ \($KMAC\)" "$OUT"
check_match "surge resolved the kernel's rx-side MAC by NDP too" "rx side: 2001:db8:b::1 at $KMAC_B" "$OUT"
check_match "the kernel resolved 2001:db8:b::2 to surge's port 1 by NDP" "2001:db8:b::2 .*lladdr $B0_MAC" \
  "$(ip netns exec "$NS" ip -6 neigh show dev ${P}b1)"
check_match "10 kpps of IPv6 forwarded without loss" "throughput trial  1  offered 10 kpps .* loss 0.000 %" "$OUT"

echo "# the stand-alone responder: the kernel asks for 10.1.0.2 again, surge answers"
ip netns exec "$NS" ip neigh flush dev ${P}b1
# a UDP datagram from the router to 10.1.0.2 makes it ask (bash /dev/udp: no ping needed)
( sleep 1; ip netns exec "$NS" bash -c "echo x >/dev/udp/10.1.0.2/9" ) 2>/dev/null &
run_surge 30 run --no-huge --stats-interval 0 "${DEVS[@]}" "$E2E_DIR/scripts/dut_respond.lua" --seconds 3
wait
check "responder script exits 0" 0 "$RC"
check_match "the responder answered the kernel" "^responder: answered [1-9]" "$OUT"
check_match "the kernel learnt surge's port 1 MAC again" "10.1.0.2 .*lladdr $B0_MAC" \
  "$(ip netns exec "$NS" ip neigh show dev ${P}b1)"

echo "# a gateway that never answers ARP: one line, non-zero exit, no hang"
run_surge 20 run --no-huge --stats-interval 0 -q "${DEVS[@]}" rfc2544 --tx 0 --rx 1 --gateway 10.0.0.99 \
  --resolve-timeout 1
check_user_error "unanswered ARP"
check_match "the error names the address and the timeout" "^port 0: no ARP reply from 10.0.0.99 within 1 s" "$ERR"
check_true "it gave up in time (${SECS} s)" "took $SECS s" lt "$SECS" 10

echo "# the commands docs/scenarios.md shows, as written but for the names (a0 -> ${P}a0)"
docline() {
  grep -qxF -- "$1" "$SURGE_SRC/docs/scenarios.md" || { echo "FAIL docs/scenarios.md no longer shows: $1"; FAILS=$((FAILS + 1)); }
  printf '%s' "$1" | sed -E "s/[[:space:]]+#[[:space:]].*$//; s/iface=([ab]0)/iface=$P\1/g; s|^scripts/lab-router ([a-z]+)|$SURGE_SRC/scripts/lab-router \1 --prefix $P|; s|^build/surge |$SURGE |"
}
docrun() { local c; c=$(docline "$1"); timeout -k 5 120 bash -c "$c" >"$TMP/doc.out" 2>&1; RC=$?; OUT=$(cat "$TMP/doc.out"); }
"$SURGE_SRC/scripts/lab-router" down --prefix "$P" >/dev/null
docrun 'scripts/lab-router up --limit 50000          # router "dut": 10.0.0.1 on a1, 10.1.0.1 on b1; 50 kpps'
check "doc: lab-router up" 0 "$RC"
t0=$(date +%s)
docrun 'build/surge run --vdev net_af_packet0,iface=a0 --vdev net_af_packet1,iface=b0 rfc2544 --tx 0 --rx 1 --gateway 10.0.0.1 --rx-gateway 10.1.0.1 --sizes 64,512 --tests throughput,latency --max-rate 200kpps --trial 1'
secs=$(( $(date +%s) - t0 ))
check "doc: the rfc2544 command exits 0" 0 "$RC"
[ "$RC" = 0 ] || { printf '%s\n' "$OUT" | tail -10; }
check_true "doc: it takes about 30 s, as the doc says (took $secs s)" "$secs s" test "$secs" -le 90
for size in 64 512; do
  t=$(printf '%s\n' "$OUT" | awk -v s="$size" '$1 == s && $2 ~ /^[0-9]+$/ { print $2 }')
  check_true "doc: $size B finds the router's 50 kpps (T = $t, within 10 %)" "T = '$t'" \
    awk -v t="${t:-0}" 'BEGIN { exit !(t >= 45000 && t <= 55000) }'
done
docrun 'scripts/lab-router down'
check "doc: lab-router down" 0 "$RC"
finish
