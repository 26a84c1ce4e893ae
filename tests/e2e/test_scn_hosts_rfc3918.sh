#!/bin/bash
# test_scn_hosts_rfc3918.sh - issue 33 item 4: rfc3918 whose member port is
# emulated hosts (--member-hosts M) that join the groups with IGMP and
# answer the DUT's querier. The DUT: a Linux bridge with snooping and its
# own querier (scripts/lab-bridge), the querier every second and a member
# forgotten 3 s after its last report; flooding of groups nobody joined is
# off on the member's bridge port, so it gets a group's frames only while
# the bridge holds the group there. The judges:
#   - `bridge mdb show`, sampled through the run: on the member's port
#     exactly the 8 groups the hosts joined, nothing else;
#   - throughput over a 4 s trial (past the 3 s membership interval: the
#     groups stay only because the hosts answer the queries): 8 kpps with
#     no loss, nothing leaked to the observer port, and the hosts counted
#     the queries they answered;
#   - a group nobody joined, sent into the bridge during the run (tshark
#     sees it enter on the sender's bridge port), never reaches the member
#     port (tshark there);
#   - IGMPv3 and IGMPv2 both; the hosts leave at the end: the mdb is empty;
#   - MLDv2 (IPv6 groups): the join and leave delays, every group measured.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rfc3918_lib.sh"
need_root
need_cmd ip
need_cmd bridge
need_cmd tshark
need_cmd python3

P=r3h$(($$ % 100000))
BR=${P}br
on_exit "$SURGE_SRC/scripts/lab-bridge down --prefix $P >/dev/null"
DEVS=(--vdev "net_af_packet0,iface=${P}a0" --vdev "net_af_packet1,iface=${P}b0" --vdev "net_af_packet2,iface=${P}c0")
hosts_field() {
  python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["scenarios"]["rfc3918"]["member_hosts"][0][sys.argv[2]])' "$@" 2>/dev/null
}
mdb_groups() {
  bridge mdb show dev "$BR" | awk -v p="${P}b1" '$3 == "port" && $4 == p { for (i = 5; i < NF; i++) if ($i == "grp") print $(i + 1) }' | sort -u
}
# a frame to group 239.9.9.9 (nobody joins it) into the bridge from the sender's veth, every 50 ms
stray() {
  python3 - "${P}a0" <<'PY' &
import socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + 18, 0, 0, 4, 17, 0, socket.inet_aton("10.0.0.9"),
                 socket.inet_aton("239.9.9.9"))
c = 0
for i in range(0, 20, 2): c += (ip[i] << 8) | ip[i + 1]
c = (c & 0xffff) + (c >> 16); c = (c & 0xffff) + (c >> 16)
ip = ip[:10] + struct.pack("!H", ~c & 0xffff) + ip[12:]
frame = bytes.fromhex("01005e090909") + bytes.fromhex("020000000009") + b"\x08\x00" + ip + \
    struct.pack("!HHHH", 5000, 5000, 8 + 18, 0) + b"x" * 18
while True:
    s.send(frame)
    time.sleep(0.05)
PY
  SPID=$!
}

DOC='surge run --vdev net_af_packet0,iface=lba0 --vdev net_af_packet1,iface=lbb0 --vdev net_af_packet2,iface=lbc0 rfc3918 --tx 0 --rx 1,2 --members 1 --member-hosts 10 --groups 239.1.1.1/6,239.1.2.1/2 --igmp v3 --tests throughput --rate 8kpps --max-rate 8kpps --trial 4'
grep -qxF -- "$DOC" "$SURGE_SRC/docs/scenarios.md" || { echo "FAIL docs/scenarios.md no longer shows: $DOC"; FAILS=$((FAILS + 1)); }

# one VERSION: the bridge made afresh, M=10 hosts on port 1 join 8 groups with IGMP VERSION
one() {
  local v=$1 tag="IGMP$1" J=$TMP/$1.json
  "$SURGE_SRC/scripts/lab-bridge" up --prefix "$P" >/dev/null || skip "cannot make the bridge (scripts/lab-bridge)"
  ip link set "$BR" type bridge mcast_query_interval 100 mcast_query_response_interval 50 \
    mcast_membership_interval 300 mcast_querier_interval 300 mcast_last_member_interval 20 ||
    skip "this kernel's bridge does not take the query intervals"
  bridge link set dev "${P}b1" mcast_flood off
  tshark -q -n -i "${P}b0" -f "dst host 239.9.9.9" -w "$TMP/$v-b.pcap" >"$TMP/tb.log" 2>&1 &
  local tb=$!
  tshark -q -n -i "${P}a1" -f "dst host 239.9.9.9" -w "$TMP/$v-a.pcap" >"$TMP/tc.log" 2>&1 &
  local tc=$!
  wait_for_text "$TMP/tb.log" "Capturing on" 10 && wait_for_text "$TMP/tc.log" "Capturing on" 10 ||
    skip "tshark did not start"
  stray
  # the groups the bridge holds on the member's port, sampled every 0.1 s while surge runs
  (while true; do mdb_groups; sleep 0.1; done) >"$TMP/$v-mdb" 2>/dev/null &
  local mp=$!
  # docs/scenarios.md's command, with this test's names and --igmp VERSION
  local args
  read -ra args <<<"$(printf '%s' "$DOC" | sed -E "s/^surge run //; s/iface=lb/iface=$P/g; s/--igmp v3/--igmp $v/")"
  run_surge 60 run --no-huge --stats-interval 0 --output "$J" "${args[@]}"
  kill $mp $SPID; wait $mp $SPID 2>/dev/null
  sleep 0.5
  kill $tb $tc; wait $tb $tc 2>/dev/null
  echo "#   $tag: $SECS s"
  check "$tag: run exits 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run 30
  check "$tag: the member port's mdb through the run: exactly the 8 joined groups" \
    "239.1.1.1 239.1.1.2 239.1.1.3 239.1.1.4 239.1.1.5 239.1.1.6 239.1.2.1 239.1.2.2 " \
    "$(sort -u "$TMP/$v-mdb" | tr '\n' ' ')"
  check "$tag: throughput 8 kpps over 4 s, no loss, nothing leaked to the observer" "8000 0 0" \
    "$(row "$J" throughput throughput_pps) $(row "$J" throughput loss_pct) $(row "$J" throughput leaked)"
  # (surge's sender on the main lcore may fall a few frames short of the
  # 32 000 planned on this shared machine: it says so; the DUT lost none)
  check_match "$tag: the member received every frame sent" \
    "throughput 8 kpps  sent (3[12][0-9]{3})  member copies \1 of \1  loss 0.000 %" "$OUT"
  check_true "$tag: the hosts answered the querier (3 queries or more in 4 s)" "queries $(hosts_field "$J" queries)" \
    test "$(hosts_field "$J" queries)" -ge 3
  check "$tag: 10 hosts, no query refused" "10 0" "$(hosts_field "$J" hosts) $(hosts_field "$J" bad)"
  valid "$J"
  local nb nc
  nb=$(tshark -n -r "$TMP/$v-b.pcap" 2>/dev/null | wc -l)
  nc=$(tshark -n -r "$TMP/$v-a.pcap" 2>/dev/null | wc -l)
  check_true "$tag: frames to a group nobody joined entered the bridge ($nc)" "$nc" test "$nc" -ge 40
  check "$tag: and never the member port" 0 "$nb"
  for _ in $(seq 20); do [ -z "$(mdb_groups)" ] && break; sleep 0.1; done
  check "$tag: after the run (the hosts left) no group on the member port" "" "$(mdb_groups | tr '\n' ' ')"
}
one v3
one v2

echo "# MLDv2: 5 hosts join and leave 4 IPv6 groups (join and leave delay)"
"$SURGE_SRC/scripts/lab-bridge" up --prefix "$P" --ipv6 >/dev/null || skip "cannot make the bridge (scripts/lab-bridge)"
(while true; do mdb_groups; sleep 0.1; done) >"$TMP/v6-mdb" 2>/dev/null &
MP=$!
J=$TMP/v6.json
run_surge 60 run --no-huge --stats-interval 0 --output "$J" "${DEVS[@]}" rfc3918 --tx 0 --rx 1,2 --members 1 \
  --member-hosts 5 --groups ff3e::1:1/4 --tests join,leave --rate 8kpps --trial 0.5
kill $MP; wait $MP 2>/dev/null
check "MLDv2: run exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
check "MLDv2: the member port's mdb through the run: exactly the 4 joined groups" \
  "ff3e::1:1 ff3e::1:2 ff3e::1:3 ff3e::1:4 " "$(sort -u "$TMP/v6-mdb" | tr '\n' ' ')"
check "MLDv2 join: 4 groups measured, none missing or early, nothing leaked" "4 0 0 0" \
  "$(row "$J" join_delay measured) $(row "$J" join_delay missing) $(row "$J" join_delay early) $(row "$J" join_delay leaked)"
jd=$(row "$J" join_delay join_delay_max_us)
echo "#   join delay: mean $(row "$J" join_delay join_delay_us) us, max $jd us"
check_true "MLDv2 join: delay measured, under 100 ms" "max $jd us" awk -v d="${jd:-x}" 'BEGIN { exit !(d + 0 > 0 && d + 0 < 1e5) }'
check "MLDv2 leave: all 4 groups stopped, nothing leaked" "4 0" "$(row "$J" leave_delay stopped) $(row "$J" leave_delay leaked)"
valid "$J"
finish
