#!/bin/bash
# test_hosts_radvd.sh - issue 33: emulated IPv6 hosts (surge.hosts with ip6,
# examples/hosts6.lua on net_af_packet) judged by radvd and the kernel in a
# network namespace: radvd answers the hosts' router solicitations with
# 2001:db8:36::/64; each host's SLAAC address is that prefix plus the
# interface ID the kernel itself derives from the host's MAC (a dummy
# device given the MAC shows the kernel's link-local address) and every
# one is distinct; the kernel pings each host's SLAAC address (ping -6)
# and every one answers, and its `ip -6 neigh` then holds each address
# with that host's MAC. Then DAD finds the kernel's own address: three
# hosts from the kernel's 2001:db8:36::1: host 0's address in conflict
# (counted once, never answered for), hosts 1 and 2 assigned.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
need_cmd radvd
need_cmd ping
need_cmd xargs
conn_pair h6r 6
surge_ns
in_k sysctl -qw net.ipv6.conf.all.forwarding=1
in_k ip addr add 2001:db8:36::1/64 dev "$IF_K" nodad
neigh_room 6
cat >"$TMP/radvd.conf" <<EOF
interface $IF_K {
  AdvSendAdvert on;
  MinRtrAdvInterval 3;
  MaxRtrAdvInterval 4;
  prefix 2001:db8:36::/64 { AdvOnLink on; AdvAutonomous on; AdvValidLifetime 3600; AdvPreferredLifetime 1800; };
};
EOF
# radvd needs the link-local address of its interface: wait until it is no longer tentative
for _ in $(seq 50); do in_k ip -6 addr show dev "$IF_K" scope link | grep -q 'fe80' && \
  ! in_k ip -6 addr show dev "$IF_K" | grep -q tentative && break; sleep 0.1; done
ip netns exec "$NS_K" radvd -n -C "$TMP/radvd.conf" -p "$TMP/radvd.pid" -m logfile -l "$TMP/radvd.log" -d 1 \
  2>"$TMP/radvd.err" &
RPID=$!
on_exit "kill $RPID"
sleep 0.5
kill -0 $RPID 2>/dev/null || skip "radvd did not start: $(cat "$TMP/radvd.err" "$TMP/radvd.log" 2>/dev/null | tail -3)"

N=50
"$SURGE" run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/hosts6.lua" --count $N \
  --mac 02:36:00:00:00:01 --probe 0.1 --seconds 12 --list >"$TMP/s.out" 2>"$TMP/s.err" &
SPID=$!
on_exit "kill $SPID"
# host i: 02:36:00:00:00:01 + i; its SLAAC address computed here on its own
python3 -c '
import sys
for i in range(int(sys.argv[1])):
    m = 0x023600000001 + i
    b = [m >> s & 255 for s in range(40, -8, -8)]
    iid = [b[0] ^ 2, b[1], b[2], 0xff, 0xfe, b[3], b[4], b[5]]
    g = ["%x" % (iid[k] << 8 | iid[k + 1]) for k in range(0, 8, 2)]
    print("2001:db8:36:0:" + ":".join(g), ":".join("%02x" % x for x in b))' $N >"$TMP/expected"
A0=$(head -1 "$TMP/expected" | cut -d' ' -f1)
up=no
for _ in $(seq 80); do
  in_k ping -6 -c1 -W1 -n -q "$A0" >/dev/null 2>&1 && { up=yes; break; }
  kill -0 $SPID 2>/dev/null || break
  sleep 0.1
done
check "host 0's SLAAC address $A0 answers the kernel's ping" yes "$up"
[ "$up" = yes ] || { cat "$TMP/s.out" "$TMP/s.err" "$TMP/radvd.log" | tail -20; finish; }
OKS=$(cut -d' ' -f1 "$TMP/expected" | in_k xargs -P 16 -I{} sh -c 'ping -6 -c1 -W2 -n -q {} >/dev/null && echo ok' | grep -c ok)
check "the kernel pings $N hosts' SLAAC addresses: every one answers" $N "$OKS"
check_neigh "ip -6 neigh: each host's SLAAC address with its MAC, none missing" 6
# the kernel's own EUI-64 for three of the MACs: a veth in a namespace of
# its own given each MAC (addr_gen_mode eui64) shows its link-local address
NS_M=h6rm$$
ip netns add "$NS_M"
on_exit "ip netns del $NS_M"
ip netns exec "$NS_M" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0 \
  net.ipv6.conf.default.addr_gen_mode=0
for i in 0 7 49; do
  mac=$(sed -n "$((i + 1))p" "$TMP/expected" | cut -d' ' -f2)
  ip netns exec "$NS_M" ip link add "h6m$i" address "$mac" type veth peer name "h6p$i"
  ip netns exec "$NS_M" ip link set "h6m$i" up
  ip netns exec "$NS_M" ip link set "h6p$i" up
done
sleep 0.3
wait $SPID
RC=$?
OUT=$(cat "$TMP/s.out") ERR=$(cat "$TMP/s.err")
check "hosts6 exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
for i in 0 7 49; do
  kll=$(ip netns exec "$NS_M" ip -6 -o addr show dev "h6m$i" scope link | awk '{ sub("/.*", "", $4); print $4 }')
  sll=$(printf '%s\n' "$OUT" | awk -v i=$i '$1 == "link-local" && $2 == i { print $4 }')
  check "host $i's link-local address is the kernel's for its MAC" "$kll" "$sll"
  kiid=${kll#fe80::}
  sgl=$(printf '%s\n' "$OUT" | awk -v i=$i '$1 == "slaac" && $2 == i { print $4 }')
  check "host $i's SLAAC address: radvd's prefix and the kernel's interface ID" "2001:db8:36:0:$kiid" "$sgl"
done
printf '%s\n' "$OUT" | awk '$1 == "slaac" { print $4, $3 }' | sort >"$TMP/slaac"
check "every host's SLAAC address is the one computed for its MAC" "" "$(diff "$TMP/expected.s" "$TMP/slaac" | head -3)"
val() { printf '%s\n' "$OUT" | awk -v k="$1" '$1 == k { print $2 }'; }
check "hosts with link-local and SLAAC addresses assigned" "$N $N" "$(val hosts6_ll) $(val hosts6_slaac)"
check "no conflict, nothing lost" "0 0 0" "$(val nd_conflict) $(val tx_nobufs) $(val tx_full)"
check_true "radvd's RAs seen, its prefix taken" "got $(val nd_ra_rx) $(val nd_prefix)" \
  [ "$(val nd_ra_rx)" -ge 1 -a "$(val nd_prefix)" -ge 1 ]
check "DAD: one probe per address (link-local and SLAAC)" $((2 * N)) "$(val nd_dad_tx)"
check_true "every echo request answered, >= $N" "got $(val icmp6_echo_rx) $(val icmp6_reply_tx)" \
  [ "$(val icmp6_echo_rx)" = "$(val icmp6_reply_tx)" -a "$(val icmp6_reply_tx)" -ge $N ]
check_true "the kernel's NSs answered with NAs" "got $(val nd_ns_rx) $(val nd_na_tx)" \
  [ "$(val nd_ns_rx)" -ge 1 -a "$(val nd_na_tx)" -ge "$(val nd_ns_rx)" ]
check_pools "hosts6"

# DAD finds the kernel's own address: hosts from 2001:db8:36::1 (the kernel's, assigned)
"$SURGE" run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/hosts6.lua" --count 3 \
  --mac 02:36:00:00:10:01 --ip6 2001:db8:36::1 --rs 0 --probe 0.2 --seconds 2 --list >"$TMP/d.out" 2>"$TMP/d.err"
RC=$?
OUT=$(cat "$TMP/d.out") ERR=$(cat "$TMP/d.err")
check "dad: exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check "dad: one conflict (the kernel's address)" 1 "$(val nd_conflict)"
check "dad: host 0's static address not assigned, hosts 1 and 2's are" "1 2" \
  "$(printf '%s\n' "$OUT" | awk '$1 == "static" { printf "%s ", $2 }' | sed 's/ $//')"
check "dad: three link-local addresses assigned, two static" "3 2" "$(val hosts6_ll) $(val hosts6_static)"
check_match "dad: host 1 has 2001:db8:36::2" "^static 1 02:36:00:00:10:02 2001:db8:36::2$" "$OUT"
check_pools "dad"
finish
