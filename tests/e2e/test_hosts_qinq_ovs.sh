#!/bin/bash
# test_hosts_qinq_ovs.sh - issue 33: QinQ hosts behind a real QinQ switch.
# Open vSwitch (userspace datapath, no kernel module) is the provider edge:
# its port a faces surge and carries both tags, its port b faces the
# kernel in a namespace, untagged. OVS's flows pop the outer 802.1ad tag
# only when it is VLAN 100, then the inner 802.1Q tag only when it is VLAN
# 200 (table 1), and push 200 then 0x88a8/100 the other way; any other
# frame is dropped. So a reply reaches the kernel only when it carried both
# tags right (this kernel has no VLAN devices, test_hosts_qinq_kernel.sh's
# part 2 skips itself here; this is the same proof with another switch):
# - the kernel pings 50 QinQ hosts (examples/many-hosts.lua --vlan 200
#   --outer-vlan 100) and every one answers; its `ip neigh` holds each
#   host's MAC, learnt by ARP through the switch;
# - OVS's own counters: the inner-tag flow (table 1) matched at least the
#   50 ARP and 50 echo replies;
# - tshark on the switch's side of the wire: every frame a host sent has the
#   outer tag 0x88a8 id 100, then 0x8100 id 200;
# - a second run with the outer tag 101 announcing its hosts: the switch
#   sees the 100 gratuitous ARPs (tagged 101, 200), the kernel none.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ovs_lib.sh"
need_root
need_cmd ip
need_cmd ping
need_cmd tshark
need_cmd dumpcap
need_cmd ovs-ofctl
N=50

P=hqo$$              # names unique to this test and run
P=${P:0:10}
NS=${P}n
on_exit "ip link del ${P}s"
on_exit "ip link del ${P}b"
on_exit "ip netns del $NS"
in_ns() { ip netns exec "$NS" "$@"; }

# offloads off: the tags stay in the frames (no VLAN stripping on receipt
# or insertion on send), the checksums in the bytes
quiet_link() {  # quiet_link [ip netns exec NS] DEV
  local dev=${*: -1}
  "$@" >/dev/null 2>&1 || true
  set -- "${@:1:$#-1}"
  "$@" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1"
  "$@" ethtool -K "$dev" tx off rxvlan off txvlan off rx-vlan-stag-hw-parse off tx-vlan-stag-hw-insert off \
    >/dev/null 2>&1
  "$@" ip link set "$dev" up
}
ip netns add "$NS" 2>/dev/null || skip "cannot create a network namespace"
ip link add "${P}s" type veth peer name "${P}a" || skip "cannot make veths"
ip link add "${P}k" type veth peer name "${P}b" || skip "cannot make veths"
ip link set "${P}k" netns "$NS"
for d in "${P}s" "${P}a" "${P}b"; do quiet_link "$d"; done
in_ns ip link set lo up
quiet_link ip netns exec "$NS" "${P}k"
in_ns ip addr add 10.37.0.1/16 dev "${P}k"

# two VLAN headers in OVS's flow key (its default parses one)
OVS_OTHER_CONFIG=vlan-limit=2 ovs_start "${P}br" protocols=OpenFlow13
"${V[@]}" add-port "${P}br" "${P}a" -- set Interface "${P}a" ofport_request=1
"${V[@]}" add-port "${P}br" "${P}b" -- set Interface "${P}b" ofport_request=2
OF=(ovs-ofctl -O OpenFlow13)
"${OF[@]}" del-flows "${P}br"
"${OF[@]}" add-flow "${P}br" "table=0,priority=10,in_port=1,dl_vlan=100,actions=pop_vlan,goto_table:1"
"${OF[@]}" add-flow "${P}br" "table=1,priority=10,in_port=1,dl_vlan=200,actions=pop_vlan,output:2"
"${OF[@]}" add-flow "${P}br" \
  "table=0,priority=10,in_port=2,actions=push_vlan:0x8100,set_field:4296->vlan_vid,push_vlan:0x88a8,set_field:4196->vlan_vid,output:1"
inner_flow_packets() {   # the count once it stopped rising: OVS moves the datapath's counts to its flows lazily
  local n=-1 m k
  for k in $(seq 30); do
    ovs_appctl revalidator/wait >/dev/null 2>&1
    sleep 0.2
    m=$("${OF[@]}" dump-flows "${P}br" table=1 | sed -n 's/.*n_packets=\([0-9]*\).*dl_vlan=200.*/\1/p')
    [ "$k" -gt 5 ] && [ "$m" = "$n" ] && break
    n=$m
  done
  echo "$m"
}

# hosts N from 10.37.1.1 behind outer VLAN $1 (inner 200) for $2 s, more options after
hosts_run() {
  "$SURGE" run --no-huge --stats-interval 0 --vdev "net_af_packet0,iface=${P}s" "$EXAMPLES/many-hosts.lua" \
    --count $N --ip 10.37.1.1 --mac 02:37:00:00:00:01 --vlan 200 --outer-vlan "$1" --seconds "$2" "${@:3}" \
    >"$TMP/s.out" 2>"$TMP/s.err" &
  SPID=$!
}
dumpcap -i "${P}a" -w "$TMP/s.pcapng" 2>"$TMP/dumpcap.err" &
CAP_PID=$!
on_exit "kill $CAP_PID"
wait_for_text "$TMP/dumpcap.err" "Capturing on" 5 || sleep 1

hosts_run 100 30
on_exit "kill $SPID"
up=no
for _ in $(seq 50); do
  in_ns ping -c1 -W1 -n -q 10.37.1.1 >/dev/null 2>&1 && { up=yes; break; }
  kill -0 $SPID 2>/dev/null || break
  sleep 0.1
done
check "host 0 answers the kernel's ping through OVS's QinQ flows" yes "$up"
# all at once (each ARP and echo crosses OVS's userspace datapath twice)
PIDS=()
for i in $(seq 0 $((N - 1))); do
  in_ns ping -c1 -W3 -n -q "10.37.1.$((1 + i))" >"$TMP/ping.$i" 2>&1 &
  PIDS+=($!)
done
OKS=0
for pid in "${PIDS[@]}"; do wait "$pid" && OKS=$((OKS + 1)); done
check "the kernel pings $N QinQ hosts through OVS: every one answers" $N "$OKS"
NEIGH=$(in_ns ip -4 neigh show dev "${P}k" | awk '$2 == "lladdr" && $1 ~ /^10\.37\.1\./ {
  split($1, a, "."); want = sprintf("02:37:00:00:00:%02x", a[4]); if ($3 == want) n++ } END { print n + 0 }')
check "ip neigh: each host's address with its MAC (ARP through the switch)" $N "$NEIGH"
kill -INT $SPID    # a stop: the summary and the pool check, exit 0 (docs/guarantees.md, Signals)
wait $SPID
RC=$?
OUT=$(cat "$TMP/s.out") ERR=$(cat "$TMP/s.err")
check "many-hosts exits 0 (stopped by SIGINT)" 0 "$RC"
val() { printf '%s\n' "$OUT" | awk -v k="$1" '$1 == k { print $2 }'; }
check "every ARP request answered" "$(val arp_request_rx)" "$(val arp_reply_tx)"
check_true "every echo request answered (>= $N)" "got $(val icmp_reply_tx)" [ "$(val icmp_reply_tx)" -ge $N ]
check_pools "qinq through OVS"
INNER=$(inner_flow_packets)
check_true "OVS: its inner-tag flow (outer 100 popped, then 200) matched >= $((2 * N)) frames" "got $INNER" \
  [ "${INNER:-0}" -ge $((2 * N)) ]

sleep 0.3
kill -TERM "$CAP_PID"
wait "$CAP_PID" 2>/dev/null
tshark_q -r "$TMP/s.pcapng" -Y 'eth.src[0:3] == 02:37:00' -T fields -e eth.type -e ieee8021ad.id -e vlan.id \
  -e vlan.etype >"$TMP/tags"
TOTAL=$(wc -l <"$TMP/tags")
BOTH=$(grep -cE $'^0x88a8\t100\t200\t0x0(800|806)$' "$TMP/tags")
check_true "the capture holds the hosts' ARP replies and echo replies" "got $TOTAL" [ "$TOTAL" -ge $((2 * N)) ]
check "tshark: every frame from a host carries both tags (0x88a8 id 100, 0x8100 id 200)" "$TOTAL" "$BOTH"

# the wrong outer VLAN: the hosts announce themselves (2 gratuitous ARPs
# each, tagged 101/200), the switch has no flow for them and drops them all
cap() {  # cap [ip netns exec NS] DEV FILE: a capture until kill_caps
  local file=${*: -1} dev=${*: -2:1} n=$#
  "${@:1:n-2}" dumpcap -i "$dev" -w "$file" 2>"$file.err" &
  CAPS+=($!)
  on_exit "kill $!"
}
CAPS=()
cap "${P}a" "$TMP/a101.pcapng"
cap ip netns exec "$NS" "${P}k" "$TMP/k101.pcapng"
wait_for_text "$TMP/a101.pcapng.err" "Capturing on" 5 || sleep 1
wait_for_text "$TMP/k101.pcapng.err" "Capturing on" 5 || sleep 1
hosts_run 101 4 --announce 2
wait $SPID
sleep 0.3
kill -TERM "${CAPS[@]}"
wait "${CAPS[@]}" 2>/dev/null
SENT=$(tshark_q -r "$TMP/a101.pcapng" -Y 'arp && eth.src[0:3] == 02:37:00' -T fields -e ieee8021ad.id -e vlan.id |
  grep -c $'^101\t200$')
PASSED=$(tshark_q -r "$TMP/k101.pcapng" -Y 'eth.src[0:3] == 02:37:00' | wc -l)
check "outer VLAN 101: the hosts' $((2 * N)) announcements reach the switch, tagged 101 then 200" $((2 * N)) "$SENT"
check "outer VLAN 101: the switch passes none of them to the kernel" 0 "$PASSED"
check "outer VLAN 101: the inner-tag flow matched nothing more" "$INNER" "$(inner_flow_packets)"
finish
