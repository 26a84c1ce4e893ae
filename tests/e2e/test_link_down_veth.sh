#!/bin/bash
# test_link_down_veth.sh - issue 23 item 12c: a link that goes down during a
# trial fails it on net_af_packet too, whose PMD never updates its link
# status: the control layer reads the kernel interface's operstate as well
# (core/control/port.c port_link). A veth pair whose far end sends every
# frame back (tc mirred) is the DUT; a second into a 3 s flood one end of the
# pair goes down: the far end (surge's end is then "lowerlayerdown") and, in
# a second run, surge's own end. Both runs must end with "port 0: link went
# down" and exit 1, well before the trial would have ended.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip
need_cmd tc

A=sg$$l
B=sg$$m
on_exit "ip link del $A"
ip link add "$A" type veth peer name "$B" 2>/dev/null || skip "cannot create a veth pair (ip link add)"
for i in "$A" "$B"; do sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1" || skip "cannot disable IPv6 on $i"; done

for down in "$B" "$A"; do
  echo "# $down goes down during the flood"
  ip link set "$A" up
  ip link set "$B" up
  tc qdisc del dev "$B" ingress 2>/dev/null
  tc qdisc add dev "$B" handle ffff: ingress 2>/dev/null || skip "no tc ingress qdisc"
  tc filter add dev "$B" parent ffff: protocol ip u32 match u32 0 0 action mirred egress redirect dev "$B" \
    2>/dev/null || skip "no tc u32 classifier or mirred action"
  sleep 0.3
  ( sleep 2; ip link set "$down" down ) &
  DOWNER=$!
  run_surge 60 run --no-huge --stats-interval 0 --file-prefix "sglink$$" --vdev "net_af_packet0,iface=$A" \
    flood --flows 4 --trial 3 --rate 2000 --settle 0.2
  wait "$DOWNER"
  check "$down down: exits 1" 1 "$RC"
  check_match "$down down: the trial fails naming the port" "port 0: link went down during the flood" "$ERR"
  check_true "$down down: it ended early (${SECS} s, the trial alone is 3 s after ~1 s of set-up)" "" lt "$SECS" 4.5
  check_nomatch "$down down: no crash" "$CRASH_RE" "$OUT
$ERR"
done
finish
