#!/bin/bash
# test_hosts_kernel.sh - issue 33: emulated hosts (surge.hosts, examples/many-hosts.lua
# on net_af_packet) judged by the kernel in a network namespace: it pings
# 1000 emulated hosts and every one answers; its `ip neigh` holds each
# host's address with that host's MAC (base + i); and RFC 5227 duplicate
# detection finds the kernel's own address (the host on it in conflict,
# counted; its neighbours, free, bound).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
need_cmd ping
need_cmd xargs
conn_pair hok
surge_ns
in_k ip addr add 10.34.0.1/16 dev "$IF_K"
neigh_room 4
N=1000
"$SURGE" run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/many-hosts.lua" --count $N \
  --ip 10.34.1.1 --mac 02:34:00:00:00:01 --seconds 20 >"$TMP/s.out" 2>"$TMP/s.err" &
SPID=$!
on_exit "kill $SPID"
check_answers "host 0 answers the kernel's ping" $SPID ping -c1 -W1 -n -q 10.34.1.1
# host i: 10.34.1.1 + i, 02:34:00:00:00:01 + i
python3 -c '
import sys
for i in range(int(sys.argv[1])):
    a = (10 << 24 | 34 << 16 | 1 << 8 | 1) + i
    m = 0x023400000001 + i
    print("%d.%d.%d.%d" % (a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255),
          ":".join("%02x" % (m >> s & 255) for s in range(40, -8, -8)))' $N >"$TMP/expected"
T0=$(date +%s.%N)
OKS=$(cut -d' ' -f1 "$TMP/expected" | in_k xargs -P 32 -I{} sh -c 'ping -c1 -W2 -n -q {} >/dev/null && echo ok' | grep -c ok)
T1=$(date +%s.%N)
check "the kernel pings $N emulated hosts: every one answers" $N "$OKS"
echo "     ($N pings, 32 at a time, in $(awk -v a=$T0 -v b=$T1 'BEGIN { printf "%.2f", b - a }') s)"
check_neigh "ip neigh: each host's address with its MAC (base + i), none missing" 4
wait $SPID
RC=$?
OUT=$(cat "$TMP/s.out") ERR=$(cat "$TMP/s.err")
check "many-hosts exits 0" 0 "$RC"
check_match "all $N hosts bound" "^hosts: bound $N$" "$OUT"
val() { printf '%s\n' "$OUT" | awk -v k="$1" '$1 == k { print $2 }'; }
check_true "icmp_reply_tx >= $N (one per ping answered)" "got $(val icmp_reply_tx)" [ "$(val icmp_reply_tx)" -ge $N ]
check "every echo request answered" "$(val icmp_echo_rx)" "$(val icmp_reply_tx)"
check "every ARP request for a host answered" "$(val arp_request_rx)" "$(val arp_reply_tx)"
check_true "arp_reply_tx >= $N" "got $(val arp_reply_tx)" [ "$(val arp_reply_tx)" -ge $N ]
check "no frame lost to an empty pool or a full ring" "0 0" "$(val tx_nobufs) $(val tx_full)"
check_true "bytes per host under 128" "got $(val bytes_per_host)" [ "$(val bytes_per_host)" -lt 128 ]
echo "     (bytes per host: $(val bytes_per_host))"
check_pools "many-hosts"

# the kernel takes what a gratuitous ARP says (arp_accept): host 1's announcement shows
in_k sysctl -qw "net.ipv4.conf.$IF_K.arp_accept=1"
# RFC 5227: three hosts from the kernel's own 10.34.0.1 probe first; the
# kernel answers the probe for its address: host 0 in conflict, 1 and 2 bound. The
# kernel goes on ARPing from its address (for 10.34.0.4, no host's) after the conflict: no
# second conflict, host 0 holds no claim any more
"$SURGE" run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/many-hosts.lua" --count 3 \
  --ip 10.34.0.1 --mac 02:34:00:00:10:01 --dad --probe 0.05 --announce 1 --seconds 2 >"$TMP/d.out" 2>"$TMP/d.err" &
SPID=$!
sleep 1.2
in_k ping -c2 -i 0.2 -W1 -n -q 10.34.0.4 >/dev/null 2>&1
wait $SPID
RC=$?
OUT=$(cat "$TMP/d.out") ERR=$(cat "$TMP/d.err")
check "dad: exits 0" 0 "$RC"
check_match "dad: host 0 (the kernel's address) in conflict, 1 and 2 bound" "^hosts: bound 2, conflict 1$" "$OUT"
check "dad: one conflict counted (the kernel's later ARPs from its address are none)" 1 "$(val arp_conflict)"
check_true "dad: each free host probed three times (host 0 until the conflict)" "got $(val arp_probe_tx)" \
  [ "$(val arp_probe_tx)" -ge 7 ]
check "dad: the two bound hosts announced" 2 "$(val arp_announce_tx)"
K=$(in_k ip -4 neigh show 10.34.0.2 dev "$IF_K")
check_match "dad: the kernel learnt host 1 from its announcement" "lladdr 02:34:00:00:10:02" "$K"
check_pools "dad"
finish
