#!/bin/bash
# test_hosts_conn_server.sh - issue 33 item 4, hosts as the TCP server's
# addresses: 50 static hosts (examples/many-hosts.lua --serve on
# net_af_packet) and one surge.conn server listening on all their
# addresses; the kernel in a network namespace fetches once from each
# host's address with curl (resolving each by ARP, answered by the host
# table). Each fetch is the response's bytes, from the address asked
# (the kernel's TCP takes no SYN-ACK from another); surge's server counts
# 50 connections, each completed (nothing failed, aborted or closed
# otherwise); the kernel's `ip neigh` holds each address at its host's MAC.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
need_cmd curl
need_cmd xargs
conn_pair hsv
surge_ns
neigh_room 4   # the neighbour table is the machine's: room beside other tests' hosts
N=50 BODY=3000
"$SURGE" run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/many-hosts.lua" --count $N \
  --ip 10.1.0.100 --mac 02:35:00:00:00:01 --serve 80 --body $BODY --seconds 30 >"$TMP/s.out" 2>"$TMP/s.err" &
SPID=$!
on_exit "kill $SPID"
# host i: 10.1.0.100 + i at 02:35:00:00:00:01 + i
for i in $(seq 0 $((N - 1))); do printf '10.1.0.%d 02:35:00:00:00:%02x\n' $((100 + i)) $((1 + i)); done \
  >"$TMP/expected"
# the table answers ping as soon as it runs (no TCP: the server's count stays the fetches')
check_answers "host 0 answers the kernel's ping" $SPID ping -c1 -W1 -n -q 10.1.0.100
http_body $BODY >"$TMP/body"
# one GET to each address, 8 at a time: "ADDR CODE BYTES REMOTE_IP" and the body into got.ADDR
cut -d' ' -f1 "$TMP/expected" | in_k xargs -P 8 -I{} curl -s -m 10 -o "$TMP/got.{}" \
  -w '{} %{http_code} %{size_download} %{remote_ip}\n' http://{}/ >"$TMP/fetched"
OKS=$(awk -v n=$BODY '$2 == 200 && $3 == n && $1 == $4' "$TMP/fetched" | wc -l)
check "curl: $N fetches, each a 200 of $BODY bytes from the address asked" $N "$OKS"
SAME=0
for a in $(cut -d' ' -f1 "$TMP/expected"); do cmp -s "$TMP/body" "$TMP/got.$a" && SAME=$((SAME + 1)); done
check "curl: each body byte-exact" $N "$SAME"
check_neigh "ip neigh: each host's address at its MAC (base + i), none missing" 4
sleep 0.3   # the last connections' closing segments
stop_surge $SPID
check "many-hosts --serve exits 0" 0 "$RC"
check_match "all $N hosts bound" "^hosts: bound $N$" "$OUT"
check_match "server: $N connections, each completed, none failed" \
  "^server: $N attempted, $N established, $N completed, 0 failed \(timeout 0, rst 0, bad 0\)" "$OUT"
check_match "server: $N requests, $N responses" " $N requests, $N responses" "$OUT"
check_match "server: none aborted or closed otherwise (each counted once)" ", 0 aborted, 0 closed other" "$OUT"
check_pools "many-hosts --serve"
finish
