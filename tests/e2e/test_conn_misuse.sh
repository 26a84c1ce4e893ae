#!/bin/bash
# test_conn_misuse.sh - issue 21 item 5c: the TCP engine against peers that
# misbehave, and bad input, each ending in a count and an exit status
# instead of a hang or a crash:
#   a port with no listener  -> every connection reset by the kernel (nstat
#                               TcpOutRsts agrees), failed_rst, exit 1, fast
#   a server that never answers (iptables DROP) -> SYN retransmissions on
#                               the fixed RTO, failed_timeout after the retries;
#                               with no count, the run still ends at --duration
#   a full server table      -> SYNs refused and counted; room again after
#   a response larger than the MSS and the window -> segmented, byte-exact;
#                               30 of them pipelined in one write: all, in order
#   a raw peer crafting any segment (conn/raw_peer.py on an AF_PACKET socket:
#   out-of-window SEQ, ACKs of unsent data, SYN in ESTABLISHED, a zero
#   window, RST in each state, lying lengths, garbage options) -> each
#                               answered as RFC 9293 says or dropped and
#                               counted, no hang or crash, counts adding up
#   an MSS the port's MTU cannot carry, bad options -> one line, non-zero exit
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
need_cmd nstat
need_cmd iptables
need_cmd curl
conn_pair tcpm
surge_ns
GET=("$EXAMPLES/http-get.lua" --src 10.1.0.2 --server 10.1.0.1)
field() { printf '%s\n' "$OUT" | sed -n "s/^client: .* \\([0-9]*\\) $1,.*/\\1/p"; }   # "N NAME," of the client line

echo "# no listener on port 81: the kernel resets each SYN"
in_k nstat -n >/dev/null
run_surge 30 run --no-huge --stats-interval 0 --vdev "$VDEV" "${GET[@]}" --port 81 --connections 50 --rate 1000
check "exit 1 (connections failed)" 1 "$RC"
check_match "50 attempted, none established, 50 failed as RST" \
  "client: 50 attempted, 0 established, 0 completed, 50 failed \(timeout 0, rst 50, bad 0\)" "$OUT"
check "kernel TcpOutRsts = surge's failed_rst" 50 "$(in_k nstat -az TcpOutRsts | awk '$1 == "TcpOutRsts" { print $2 }')"
# ~1 s on a quiet machine (EAL, ARP, 50 ms of SYNs); what this guards
# against is a run that waits for retransmissions or never ends (the
# 30 s kill, or retries until --duration): 15 s leaves room for a loaded machine
check_true "ends in under 15 s ($SECS s)" "too slow" lt "$SECS" 15
check_no_crash "no listener"
check_pools "no listener"

echo "# a server that never answers (DROP): SYN timeouts"
in_k iptables -A INPUT -p tcp --dport 82 -j DROP || skip "iptables does not work in a namespace here"
run_surge 30 run --no-huge --stats-interval 0 --vdev "$VDEV" "${GET[@]}" --port 82 --connections 20 --rate 200 \
  --rto 0.05 --retries 2
check "exit 1" 1 "$RC"
check_match "20 attempted, 20 failed as timeouts" \
  "client: 20 attempted, 0 established, 0 completed, 20 failed \(timeout 20, rst 0, bad 0\)" "$OUT"
check "each SYN sent again twice: 40 retransmits" 40 "$(field retransmits)"
check_pools "never answers"
run_surge 30 run --no-huge --stats-interval 0 --duration 1 --vdev "$VDEV" "${GET[@]}" --port 82 --connections 0 \
  --rate 100 --rto 0.1 --retries 2
check_true "no count: the run ends at --duration 1 ($SECS s)" "took $SECS s" lt "$SECS" 6
check_match "the summary comes, with timeouts counted" "client: [0-9]+ attempted, 0 established, 0 completed, [0-9]+ failed \(timeout [1-9]" "$OUT"
# those still in SYN_SENT at the cut are counted aborted (issue 31 item 4):
# every attempted connection once
SUM=$(printf '%s\n' "$OUT" | sed -n 's/^client: \([0-9]*\) attempted, [0-9]* established, \([0-9]*\) completed, \([0-9]*\) failed (.*, \([0-9]*\) aborted, \([0-9]*\) closed other.*/\1 \2 \3 \4 \5/p')
read -r A CO F AB OT <<<"$SUM"
check_true "attempted $A = completed $CO + failed $F + aborted $AB + closed other $OT" "$SUM" \
  test -n "$SUM" -a "${A:-x}" = "$((CO + F + AB + OT))"
check_true "the cut's connections aborted ($AB)" "$SUM" test "${AB:-0}" -gt 0
check_no_crash "never answers, --duration"
check_pools "never answers, --duration"

echo "# the server's table full: capacity 2, three kernel connections"
"$SURGE" run --no-huge --stats-interval 0 --duration 20 --vdev "$VDEV" "$EXAMPLES/http-server.lua" \
  --addr 10.1.0.2 --capacity 2 --body 200000 --mss 536 >"$TMP/s.out" 2>"$TMP/s.err" &
SPID=$!
on_exit "kill $SPID"
for _ in $(seq 100); do in_k curl -s -m 0.5 -o /dev/null http://10.1.0.2/ && break; sleep 0.1; done
HELD=$(in_k python3 - <<'PY'
import select, socket, time
socks = []
for _ in range(3):
    s = socket.socket(); s.setblocking(False)
    s.connect_ex(("10.1.0.2", 80)); socks.append(s)
time.sleep(0.6)
_, w, _ = select.select([], socks, [], 0)
print(sum(1 for s in w if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0))
for s in socks: s.close()
PY
)
check "two of three connections taken, the third's SYN refused" 2 "$HELD"
sleep 0.3
echo "# a response of 200000 bytes: past the MSS (536) and the window"
in_k curl -s -m 5 -o "$TMP/got" http://10.1.0.2/
http_body 200000 >"$TMP/expected"
check_true "room again, and the 200000-byte body byte-exact" "$(cmp "$TMP/expected" "$TMP/got" 2>&1)" \
  cmp -s "$TMP/expected" "$TMP/got"
echo "# 30 GETs pipelined in one write (issue 31): every response comes back, byte-exact, in order"
PIPE=$(in_k timeout 60 python3 - <<'PY'
import socket
def fetch(n):
    s = socket.create_connection(("10.1.0.2", 80), timeout=10)
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * n)
    got = b""
    while True:
        # one response's length from its header, then n of them
        if b"\r\n\r\n" in got:
            head = got[:got.index(b"\r\n\r\n") + 4]
            clen = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0].split(b":")[1])
            if len(got) >= n * (len(head) + clen):
                break
        b = s.recv(1 << 20)
        if not b:
            break
        got += b
    s.close()
    return got
one = fetch(1)
many = fetch(30)
print("same" if many == one * 30 else "differs: %d bytes, %d expected" % (len(many), 30 * len(one)))
PY
)
check "30 pipelined responses: the one response 30 times over" same "$PIPE"
stop_surge $SPID
check "server exits 0" 0 "$RC"
check_match "server: the refused SYNs counted" "server: .* [1-9][0-9]* refused" "$OUT"
check_no_crash "table full"
check_pools "table full"

echo "# a raw peer crafting every segment (tests/e2e/conn/raw_peer.py): out of the window, bad ACKs,"
echo "# SYN when established, a zero window, RST in each state, lying lengths, garbage options"
"$SURGE" run --no-huge --stats-interval 0 --duration 60 --vdev "$VDEV" "$EXAMPLES/http-server.lua" \
  --addr 10.1.0.2 --capacity 64 --body 3000 >"$TMP/r.out" 2>"$TMP/r.err" &
SPID=$!
on_exit "kill $SPID"
for _ in $(seq 100); do in_k curl -s -m 0.5 -o /dev/null http://10.1.0.2/ && break; sleep 0.1; done
SMAC=$(in_k ip neigh show 10.1.0.2 | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }')
check_true "the kernel resolved surge's address ($SMAC)" "no neighbour entry" test -n "$SMAC"
RAW=$(in_k timeout 60 python3 "$SURGE_SRC/tests/e2e/conn/raw_peer.py" "$IF_K" 10.1.0.2 "$SMAC" 2>&1)
RAW_RC=$?
printf '%s\n' "$RAW" | grep -v '^SENT'
check "raw peer: every check passed (exit status: failures)" 0 "$RAW_RC"
kill -INT $SPID
wait $SPID
RC=$?
OUT=$(cat "$TMP/r.out") ERR=$(cat "$TMP/r.err")
check "server exits 0 after the raw peer" 0 "$RC"
MAL=$(printf '%s\n' "$RAW" | sed -n 's/^SENT MALFORMED //p')
check "every malformed segment counted in rx_bad" "${MAL:-none}" "$(printf '%s\n' "$OUT" | sed -n 's/^server: .*, rx bad \([0-9]*\),.*/\1/p')"
SUM=$(printf '%s\n' "$OUT" | sed -n 's/^server: \([0-9]*\) attempted, [0-9]* established, \([0-9]*\) completed, \([0-9]*\) failed (.*, \([0-9]*\) aborted, \([0-9]*\) closed other.*/\1 \2 \3 \4 \5/p')
read -r A CO F AB OT <<<"$SUM"
check_true "server: attempted $A = completed $CO + failed $F + aborted $AB + closed other $OT" "$OUT" \
  test -n "$SUM" -a "${A:-x}" = "$((CO + F + AB + OT))"
check_no_crash "raw peer"
check_pools "raw peer"

echo "# an MSS the port cannot carry: one line before traffic"
run_surge 30 run --no-huge --stats-interval 0 --vdev "$VDEV" "${GET[@]}" --connections 1 --mss 9000
check_user_error "--mss 9000 on a 1500-byte MTU"
check_match "the error names the MSS and the MTU" "mss 9000 makes frames of 9054 bytes, port 0's MTU" "$ERR"
check_pools "--mss 9000"

echo "# bad options: refused before EAL (exit 2)"
for bad in "--close maybe" "--src 10.1.0" "--gateway x" "--pattern ramp" "--concurrency 70000"; do
  # shellcheck disable=SC2086
  run_surge 30 run --no-huge --vdev "$VDEV" "${GET[@]}" $bad
  check "$bad: exit 2" 2 "$RC"
  check_match "$bad: one line naming the option" "${bad%% *}" "$ERR"
  check_no_crash "$bad"
done
finish
