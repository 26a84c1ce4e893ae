#!/bin/bash
# test_otg_hosts.sh - one `surge otg` driving ports on two hosts: the
# second host is an OpenSSH server on 127.0.0.1 with its own host key,
# config and client key (as tests/python/test_fleet.py makes it); port p2's
# location root@127.0.0.1:PORT/net_ring0 makes the server start a surge otg
# there over SSH (tests/e2e/otg/hosts.py): flows on both hosts started
# together, metrics merged, p2's capture (judged by tshark) read through
# the first server, refusals by path; flows across the hosts over a veth
# pair, one end each (tests/e2e/otg/cross.py); at the end the remote server
# ends with it.
source "$(dirname "$0")/lib.sh"
need_root
need_cmd tshark
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$SSHD" ] && command -v ssh > /dev/null && command -v ssh-keygen > /dev/null \
  || skip "OpenSSH (openssh-server, openssh-client) is not installed"
command -v curl > /dev/null || skip "curl is not installed"
PEERS="$SURGE_SRC/../shared/peers/otg"
[ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
/usr/bin/python3 -c 'import requests, yaml, semantic_version' 2>/dev/null || skip "snappi's modules not installed"
D="$TMP/ssh"
mkdir -m 700 "$D"
for k in host client; do ssh-keygen -q -t ed25519 -N "" -f "$D/$k"; done
cp "$D/client.pub" "$D/authorized_keys"
mkdir -p /run/sshd
SPORT=$((20000 + RANDOM % 20000))
cat > "$D/sshd_config" <<CFG
ListenAddress 127.0.0.1
Port $SPORT
HostKey $D/host
AuthorizedKeysFile $D/authorized_keys
PidFile $D/sshd.pid
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowStreamLocalForwarding yes
AllowTcpForwarding yes
StrictModes no
UsePAM no
CFG
"$SSHD" -D -e -f "$D/sshd_config" 2> "$TMP/sshd.log" &
SSHD_PID=$!
on_exit "kill $SSHD_PID"
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$SPORT") 2>/dev/null && break; sleep 0.05; done
kill -0 "$SSHD_PID" 2>/dev/null || skip "sshd cannot run here: $(cat "$TMP/sshd.log")"
RPFX=otgh$$r
export SURGE_OTG_SSH="-i $D/client -o StrictHostKeyChecking=no -o UserKnownHostsFile=$D/known_hosts"
export SURGE_OTG_REMOTE="$SURGE otg --no-huge --file-prefix $RPFX"
PORT=$((20000 + RANDOM % 20000))
"$SURGE" otg --no-huge --stats-interval 0 --http --listen "127.0.0.1:$PORT" > "$TMP/srv.log" 2>&1 &
SRV=$!
on_exit "kill -KILL $SRV"      # a test cut short leaves no server
for _ in $(seq 100); do grep -q "serving the OTG API" "$TMP/srv.log" && break; sleep 0.2; done
PYTHONPATH="$PEERS:$SURGE_SRC/tests/e2e/otg" /usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/hosts.py" \
  "http://127.0.0.1:$PORT" "root@127.0.0.1:$SPORT" "$TMP/p2.pcap" > "$TMP/py.log" 2>&1
check "hosts.py: every check passed" 0 "$?"
grep -v WARNING "$TMP/py.log" | sed 's/^/  /'
check "p2's capture (taken on the other host): 200 frames of 252 bytes, source ports 3000.. (tshark)" \
  "$(for k in $(seq 0 99); do echo "252 $((3000 + k))"; done; for k in $(seq 0 99); do echo "252 $((3000 + k))"; done)" \
  "$(tshark_q -r "$TMP/p2.pcap" -T fields -E separator=' ' -e frame.len -e udp.srcport)"
# the other host's server killed (its id, found by its file prefix): the next config starts another
RPID=$(pgrep -f "surge otg --no-huge --file-prefix $RPFX --http")
[ -n "$RPID" ] && kill -KILL $RPID
PYTHONPATH="$PEERS:$SURGE_SRC/tests/e2e/otg" /usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/hosts.py" \
  "http://127.0.0.1:$PORT" "root@127.0.0.1:$SPORT" "$TMP/p2b.pcap" again > "$TMP/py2.log" 2>&1
check "hosts.py again (the remote server killed, then started again): every check passed" 0 "$?"
grep -v WARNING "$TMP/py2.log" | sed 's/^/  /'
# flows across the hosts: the two ends of a veth pair of this test's own (IPv6 off: the kernel
# sends nothing of its own), end A this server's port, end B the other host's
VA=otgx$$a
VB=otgx$$b
if command -v ip > /dev/null && ip link add "$VA" type veth peer name "$VB" 2>/dev/null; then
  on_exit "ip link del $VA"
  for i in "$VA" "$VB"; do
    sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
    ip link set "$i" up
  done
  PYTHONPATH="$PEERS:$SURGE_SRC/tests/e2e/otg" /usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/cross.py" \
    "http://127.0.0.1:$PORT" "root@127.0.0.1:$SPORT" "$VA" "$VB" > "$TMP/py3.log" 2>&1
  check "cross.py (flows across the hosts over a veth pair): every check passed" 0 "$?"
  grep -v WARNING "$TMP/py3.log" | sed 's/^/  /'
else
  check "a veth pair for the flows across hosts" "made" "not made (no ip, or no veth here)"
fi
kill -TERM "$SRV"; wait "$SRV"
check "SIGTERM: exit 0" 0 "$?"
check_match "pools full at exit" "mbufs back, no leak" "$(cat "$TMP/srv.log")"
for _ in $(seq 50); do pgrep -f "file-prefix $RPFX" > /dev/null || break; sleep 0.1; done
check "the other host's surge otg ended with this one" "" "$(pgrep -f "file-prefix $RPFX")"
finish
