#!/bin/bash
# test_hosts_mcast_bridge.sh - issue 33: emulated hosts' group memberships
# (surge.hosts t:join, examples/mcast-hosts.lua on net_af_packet) judged by
# a Linux bridge with IGMP/MLD snooping and its own querier, in a network
# namespace: surge's port is one bridge port (a veth), a sender's another.
# For IGMPv2 + MLDv1 and then IGMPv3 + MLDv2 (the bridge's versions set to
# match): `bridge mdb show` lists on surge's port exactly the groups the
# hosts joined; the entries outlive the membership interval (3 s here) only
# because the hosts answer the querier's queries (every second); a UDP
# stream sent into the bridge for a joined group reaches surge's port and
# one for a group nobody joined does not (flooding of unknown groups is off
# on that port, so the bridge forwards by its mdb alone); after the leaves
# the entries are gone.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip
need_cmd bridge
need_cmd python3
NS_B=hmb$$ NS_S=hms$$ NS_T=hmt$$ IF_S=hm$$s IF_SB=hm$$sb IF_T=hm$$t IF_TB=hm$$tb
for ns in $NS_B $NS_S $NS_T; do
  ip netns add $ns 2>/dev/null || skip "cannot create a network namespace"
  on_exit "ip netns del $ns"
  ip -n $ns link set lo up
done
# surge's side and the sender's side: no kernel multicast of their own
# (IPv6 off on surge's; the sender's needs it to send, it joins nothing)
ip netns exec $NS_S sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip netns exec $NS_B sysctl -qw net.ipv6.conf.default.dad_transmits=0 net.ipv6.conf.all.dad_transmits=0
ip netns exec $NS_T sysctl -qw net.ipv6.conf.default.dad_transmits=0 net.ipv6.conf.all.dad_transmits=0
ip link add $IF_S netns $NS_S type veth peer name $IF_SB netns $NS_B || skip "cannot create a veth pair"
ip link add $IF_T netns $NS_T type veth peer name $IF_TB netns $NS_B || skip "cannot create a veth pair"
ip -n $NS_S link set $IF_S up
ip -n $NS_T link set $IF_T up
ip -n $NS_T addr add 10.78.0.9/24 dev $IF_T
ip -n $NS_T addr add 2001:db8:78::9/64 dev $IF_T nodad
ip -n $NS_T route add 224.0.0.0/4 dev $IF_T
VDEV="net_af_packet0,iface=$IF_S"
printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "$NS_S" "$SURGE" >"$TMP/surge-ns"
chmod +x "$TMP/surge-ns"

# bridge IGMP_VERSION MLD_VERSION: br0 made anew, the querier every 1 s
# (answers within 0.5 s), members forgotten 3 s after their last report
bridge_up() {
  ip -n $NS_B link del br0 2>/dev/null
  ip -n $NS_B link add br0 type bridge mcast_snooping 1 mcast_igmp_version "$1" \
    mcast_mld_version "$2" mcast_query_interval 100 mcast_query_response_interval 50 \
    mcast_membership_interval 300 mcast_startup_query_interval 100 mcast_last_member_interval 20 \
    mcast_querier_interval 300 || skip "this kernel's bridge does not take IGMPv$1 / MLDv$2 snooping options"
  # the querier after the response interval: turned on, the bridge counts
  # itself no querier for one response interval (10 s had it come first),
  # and without one it floods every group (to no port with mcast_flood off)
  ip -n $NS_B link set br0 type bridge mcast_querier 1
  ip -n $NS_B link set $IF_SB master br0
  ip -n $NS_B link set $IF_TB master br0
  ip -n $NS_B link set $IF_SB up
  ip -n $NS_B link set $IF_TB up
  ip -n $NS_B link set br0 up
  ip netns exec $NS_B bridge link set dev $IF_SB mcast_flood off
  # the MLD querier needs the bridge's link-local source; it counts from
  # its next query after the address is there (a second here)
  local i
  for i in $(seq 30); do
    ip -n $NS_B -6 addr show dev br0 scope link | grep -q inet6 && break
    sleep 0.1
  done
  BR_UP=$(date +%s.%N)
}
# the groups the bridge holds on surge's port, sorted
mdb_groups() {
  ip netns exec $NS_B bridge mdb show dev br0 | awk -v p=$IF_SB '$3 == "port" && $4 == p { for (i = 5; i < NF; i++) if ($i == "grp") print $(i + 1) }' | sort -u
}
wait_mdb() {  # wait_mdb EXPECTED SECONDS: until mdb_groups is EXPECTED
  local end=$(($(date +%s) + $2))
  while [ "$(date +%s)" -le "$end" ]; do
    [ "$(mdb_groups | tr '\n' ' ')" = "$1" ] && return 0
    sleep 0.1
  done
  return 1
}
send_stream() {  # send_stream GROUP...: 20 UDP datagrams to each, from the sender's port
  ip netns exec $NS_T python3 - "$IF_T" "$@" <<'PY'
import socket, struct, sys, time
ifname, groups = sys.argv[1], sys.argv[2:]
idx = socket.if_nametoindex(ifname)
for _ in range(20):
    for g in groups:
        if ":" in g:
            s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, idx)
            s.sendto(b"x" * 32, (g, 5000, 0, 0))
        else:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 4)
            s.sendto(b"x" * 32, (g, 5000))
        s.close()
    time.sleep(0.01)
PY
}
val() { printf '%s\n' "$OUT" | awk -v k="$1" '$1 == k { print $2 }'; }
rxg() { printf '%s\n' "$OUT" | awk -v g="$1" '$1 == "rx" && $2 == g { print $3 }'; }

# one_round IGMP_V MLD_V: 20 hosts; 0..9 join 239.78.0.1-3, 10..19 239.78.1.1,
# 0..4 ff3e::78:1-2, 5..6 ff3e::78:9
one_round() {
  local v4=$1 v6=$2 tag="IGMPv$1+MLDv$2"
  bridge_up "$v4" "$v6"
  local want="239.78.0.1 239.78.0.2 239.78.0.3 239.78.1.1 ff3e::78:1 ff3e::78:2 ff3e::78:9 "
  "$TMP/surge-ns" run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/mcast-hosts.lua" --count 20 \
    --join "239.78.0.1/3@0+10v$v4;239.78.1.1@10+10v$v4;ff3e::78:1/2@0+5v$v6;ff3e::78:9@5+2v$v6" \
    --seconds 6 --linger 1.5 --events >"$TMP/s.out" 2>"$TMP/s.err" &
  local spid=$! t0
  on_exit "kill $spid"
  wait_mdb "$want" 10
  check "$tag: bridge mdb on surge's port: exactly the joined groups" "$want" "$(mdb_groups | tr '\n' ' ')"
  t0=$(date +%s.%N)
  sleep "$(awk -v a="$BR_UP" -v b="$t0" 'BEGIN { d = a + 2 - b; print (d > 0 ? d : 0) }')"
  [ -n "${HM_DEBUG:-}" ] && ip netns exec $NS_B bridge -d -s mdb show dev br0
  send_stream 239.78.0.2 239.78.9.9 ff3e::78:9 ff3e::78:77
  [ -n "${HM_DEBUG:-}" ] && ip netns exec $NS_B bridge -d -s mdb show dev br0
  # past the membership interval (3 s) after the joins: held by the answers to the queries
  sleep 3.6
  check "$tag: the entries outlive the membership interval (the queries answered)" "$want" "$(mdb_groups | tr '\n' ' ')"
  # the leaves (at 6 s) and the bridge's last-member queries (2 x 0.2 s): gone
  wait "$spid"
  local rc=$?
  OUT=$(cat "$TMP/s.out") ERR=$(cat "$TMP/s.err")
  wait_mdb "" 3
  check "$tag: after the leaves no group on surge's port" "" "$(mdb_groups | tr '\n' ' ')"
  check "$tag: mcast-hosts exits 0" 0 "$rc"
  [ "$rc" = 0 ] || { tail -5 "$TMP/s.err"; return; }
  check "$tag: the joined IPv4 group's stream reaches surge's port (20 datagrams)" 20 "$(rxg 239.78.0.2)"
  check "$tag: the joined IPv6 group's stream reaches surge's port (20 datagrams)" 20 "$(rxg ff3e::78:9)"
  check "$tag: no group nobody joined reaches it" "" "$(rxg 239.78.9.9)$(rxg ff3e::78:77)"
  check_true "$tag: the querier's IGMP queries taken (one a second)" "got $(val igmp_query_rx)" \
    [ "$(val igmp_query_rx)" -ge 4 ]
  check_true "$tag: the querier's MLD queries taken" "got $(val mld_query_rx)" [ "$(val mld_query_rx)" -ge 4 ]
  check "$tag: no query refused" 0 "$(val mcast_bad)"
  if [ "$v4" = 2 ]; then
    # a report a host and group: 40 at the join (10 x 3 + 10 x 1; the
    # second round is spread over v2's 10 s unsolicited interval, cut by
    # the leave at 6 s), 40 for each general query (one a second)
    check_true "$tag: v2 reports: the join's 40 and 40 for each query" "got $(val igmp_v2_report_tx)" \
      [ "$(val igmp_v2_report_tx)" -ge $((40 + 40 * 4)) ]
    check "$tag: one leave a host and group" 40 "$(val igmp_leave_tx)"
    check "$tag: MLDv1: one done a host and group" 12 "$(val mld_done_tx)"
    check "$tag: no v3 or MLDv2 report" "0 0" "$(val igmp_v3_report_tx) $(val mld_v2_report_tx)"
  else
    # a host's report holds all its groups: 2 x 20 at the join, 20 a general query, 2 x 20 leaving
    check_true "$tag: v3 reports: the joins' 40, 20 a query, the leaves' 40" "got $(val igmp_v3_report_tx)" \
      [ "$(val igmp_v3_report_tx)" -ge $((40 + 20 * 4 + 40)) ]
    check_true "$tag: MLDv2 reports" "got $(val mld_v2_report_tx)" [ "$(val mld_v2_report_tx)" -ge $((14 + 7 * 4 + 14)) ]
    check "$tag: no v2 report, leave or done" "0 0 0 0" \
      "$(val igmp_v2_report_tx) $(val igmp_leave_tx) $(val mld_v1_report_tx) $(val mld_done_tx)"
  fi
  check_match "$tag: every membership free after its leaves" "^membership 3: free" "$OUT"
  check_match "$tag: an event a host and membership joining and leaving (10 + 10 + 5 + 2)" \
    "^events: joined 27, left 27$" "$OUT"
  check_match "$tag: the joins' reports timed" "^joined: the joins' reports sent in [0-9.]+ s" "$OUT"
  SURGE_PID="" check_pools "$tag"
}
one_round 2 1
one_round 3 2
finish
