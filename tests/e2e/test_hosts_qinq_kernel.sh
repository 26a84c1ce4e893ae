#!/bin/bash
# test_hosts_qinq_kernel.sh - issue 33: emulated hosts behind two tags
# (QinQ: outer 802.1ad VLAN 100, inner 802.1Q VLAN 200).
# 1. tshark judges the bytes: a capture of QinQ ARP and echo requests to
#    50 hosts (net_pcap's rx_pcap) gets exactly 50 ARP replies and 50 echo
#    replies (tx_pcap), each with both tags (0x88a8 id 100, then 0x8100 id
#    200) and right checksums; the same requests with an outer TPID of
#    0x8100 get the same answers (the TPID is not compared on receipt:
#    DPDK's af_packet puts a tag the kernel stripped back as 0x8100), with
#    the inner tag alone or another outer VLAN nothing.
# 2. The kernel in a network namespace with a 802.1ad VLAN over its veth
#    and an 802.1Q VLAN on top (`ip link add link veth type vlan proto
#    802.1ad id 100`, then `vlan id 200`) pings 50 QinQ hosts and every one
#    answers; its `ip neigh` on the inner VLAN holds each host's MAC (ARP
#    resolved them); tshark sees both tags on every frame a host sent.
#    Skipped where the kernel has no VLAN support (no 8021q);
#    test_hosts_qinq_ovs.sh proves the same with Open vSwitch as the switch.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
need_cmd ping
need_cmd tshark
N=50

# --- 1. the bytes, judged by tshark ----------------------------------------
cat >"$TMP/gen.py" <<'EOF'
import struct, sys
sys.path.insert(0, sys.argv[3])
from raw_peer import csum   # RFC 1071, the TCP tests' raw peer's
peer, bc = bytes.fromhex("020000000099"), b"\xff" * 6
def ip4(a):
    return bytes([10, 37, a >> 8, a & 255])
# first frames nobody's: the first poll reads a burst before its hosts start
frames = [bytes.fromhex("020000000098") + peer + b"\x88\xb5" + b"\0" * 46] * 128
# both tags (the table's), an outer 0x8100, the inner one alone, another outer VLAN
for tags in (bytes.fromhex("88a80064810000c8"), bytes.fromhex("81000064810000c8"), bytes.fromhex("810000c8"),
             bytes.fromhex("88a80065810000c8")):
    for i in range(int(sys.argv[2])):
        host, mac = ip4(0x101 + i), bytes.fromhex("0237000000") + bytes([1 + i])
        arp = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + peer + ip4(1) + b"\0" * 6 + host
        frames.append(bc + peer + tags + b"\x08\x06" + arp)
        icmp = struct.pack("!BBHHH", 8, 0, 0, 0x77, i) + b"qinq-echo"
        icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
        ip = struct.pack("!BBHHHBBH", 0x45, 0, 20 + len(icmp), i, 0, 64, 1, 0) + ip4(1) + host
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        frames.append(mac + peer + tags + b"\x08\x00" + ip + icmp)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for k, fr in enumerate(frames):
        f.write(struct.pack("<IIII", 1, k, len(fr), len(fr)) + fr)
EOF
python3 "$TMP/gen.py" "$TMP/in.pcap" $N "$(dirname "$0")/conn"
"$SURGE" run --no-huge --stats-interval 0 --vdev "net_pcap0,rx_pcap=$TMP/in.pcap,tx_pcap=$TMP/out.pcap" \
  "$EXAMPLES/many-hosts.lua" --count $N --ip 10.37.1.1 --mac 02:37:00:00:00:01 --vlan 200 --outer-vlan 100 \
  --seconds 1 >"$TMP/p.out" 2>"$TMP/p.err"
RC=$?
check "pcap: many-hosts exits 0" 0 "$RC"
[ "$RC" = 0 ] || tail -5 "$TMP/p.err"
# the outer tag is tshark's ieee8021ad, the inner one its vlan
fields() { tshark_q -r "$1" -Y "$2" -T fields -e eth.type -e ieee8021ad.id -e vlan.id -e vlan.etype; }
ARP=$(fields "$TMP/out.pcap" 'arp.opcode == 2 && arp.src.proto_ipv4 >= 10.37.1.1' |
  grep -c $'^0x88a8\t100\t200\t0x0806$')
ECHO=$(fields "$TMP/out.pcap" 'icmp.type == 0 && data.data == 71:69:6e:71:2d:65:63:68:6f' |
  grep -c $'^0x88a8\t100\t200\t0x0800$')
ALL=$(tshark_q -r "$TMP/out.pcap" | wc -l)
check "pcap: 2 x $N ARP replies and echo replies, each with both tags (0x88a8 id 100, 0x8100 id 200)" \
  "$((2 * N)) $((2 * N))" "$ARP $ECHO"
check "pcap: nothing else sent (no answer to the inner tag alone or to another outer VLAN)" $((4 * N)) "$ALL"
BAD=$(tshark_q -r "$TMP/out.pcap" -o ip.check_checksum:TRUE \
  -Y 'ip.checksum.status == "Bad" || icmp.checksum.status == "Bad"' | wc -l)
check "pcap: tshark finds no bad IPv4 or ICMP checksum" 0 "$BAD"

# --- 2. the kernel ------------------------------------------------------------
conn_pair hqq
surge_ns
if ! in_k ip link add link "$IF_K" name sv100 type vlan proto 802.1ad id 100 2>/dev/null; then
  echo "     (the kernel makes no 802.1ad VLAN here: its part skipped)"
  finish
fi
in_k ip link add link sv100 name cv200 type vlan id 200
in_k ip link set sv100 up
in_k ip link set cv200 up
in_k ip addr add 10.37.0.1/16 dev cv200
start_capture "$TMP/k.pcapng"
"$SURGE" run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/many-hosts.lua" --count $N \
  --ip 10.37.1.1 --mac 02:37:00:00:00:01 --vlan 200 --outer-vlan 100 --seconds 8 >"$TMP/s.out" 2>"$TMP/s.err" &
SPID=$!
on_exit "kill $SPID"
up=no
for _ in $(seq 50); do
  in_k ping -c1 -W1 -n -q 10.37.1.1 >/dev/null 2>&1 && { up=yes; break; }
  kill -0 $SPID 2>/dev/null || break
  sleep 0.1
done
check "host 0 answers the kernel's ping over QinQ" yes "$up"
OKS=0
for i in $(seq 0 $((N - 1))); do
  in_k ping -c1 -W1 -n -q "10.37.1.$((1 + i))" >/dev/null 2>&1 && OKS=$((OKS + 1))
done
check "the kernel pings $N QinQ hosts: every one answers" $N "$OKS"
NEIGH=$(in_k ip -4 neigh show dev cv200 | awk '$2 == "lladdr" && $1 ~ /^10\.37\.1\./ {
  split($1, a, "."); want = sprintf("02:37:00:00:00:%02x", a[4]); if ($3 == want) n++ } END { print n + 0 }')
check "ip neigh on the inner VLAN: each host's address with its MAC (ARP over QinQ)" $N "$NEIGH"
wait $SPID
RC=$?
stop_capture
OUT=$(cat "$TMP/s.out") ERR=$(cat "$TMP/s.err")
check "many-hosts exits 0" 0 "$RC"
val() { printf '%s\n' "$OUT" | awk -v k="$1" '$1 == k { print $2 }'; }
check "every ARP request answered" "$(val arp_request_rx)" "$(val arp_reply_tx)"
check_true "every echo request answered (>= $N)" "got $(val icmp_reply_tx)" [ "$(val icmp_reply_tx)" -ge $N ]
check_pools "qinq"
fields "$TMP/k.pcapng" 'eth.src[0:3] == 02:37:00' >"$TMP/tags"
TOTAL=$(wc -l <"$TMP/tags")
BOTH=$(grep -cE $'^0x88a8\t100\t200\t0x0(800|806)$' "$TMP/tags")
check_true "the capture holds the hosts' ARP replies and echo replies" "got $TOTAL" [ "$TOTAL" -ge $((2 * N)) ]
check "tshark: every frame from a host carries both tags (0x88a8 id 100, 0x8100 id 200)" "$TOTAL" "$BOTH"
finish
