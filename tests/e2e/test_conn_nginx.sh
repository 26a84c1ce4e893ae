#!/bin/bash
# test_conn_nginx.sh - issue 21 item 5a (test_conn_nginx6.sh: the same over IPv6): surge's TCP client against the
# Linux kernel and nginx (nginx-light) in a network namespace, surge on
# net_af_packet in another: 10 000 HTTP/1.1 GETs, each on a new connection,
# complete; nginx logs 10 000 lines with 200; the kernel's counters (nstat)
# agree with surge's; a capture on the kernel's side shows every handshake
# and close, no RST from the kernel, no bad checksum, no retransmission;
# then 200 connections with 5 keep-alive GETs each. surge's client opens from
# two source addresses (issue 21 item 1: --src A-B): the kernel resolves both
# through surge's ARP/NDP answers, and each address opens exactly half.
# 2000 connections/s: about 5 s of traffic, a low rate for the 2 shared CPUs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
need_cmd nstat
need_cmd tshark
# test_conn_nginx6.sh runs this over IPv6 (CONN_V6=1)
if [ "${CONN_V6:-}" = 1 ]; then
  conn_pair tcp6 6
  NGX_LISTEN6='listen [2001:db8:1::1]:80;'
  SRC=2001:db8:1::2 SRC2=2001:db8:1::3 SERVER=2001:db8:1::1 N=${CONN_N:-4000} IPSRC=ipv6.src
else
  conn_pair tcpn
  SRC=10.1.0.2 SRC2=10.1.0.3 SERVER=10.1.0.1 N=${CONN_N:-10000} IPSRC=ip.src
fi
start_nginx
surge_ns

in_k nstat -n >/dev/null          # the counters' history starts now
start_capture "$TMP/k.pcapng"
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" --output "$TMP/r.json" "$EXAMPLES/http-get.lua" \
  --src $SRC-$SRC2 --server $SERVER --connections $N --rate 2000 --concurrency 1000
stop_capture
check "surge exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_match "every connection completed" "client: $N attempted, $N established, $N completed, 0 failed" "$OUT"
check_match "surge: no retransmission" " 0 retransmits, " "$OUT"
check_pools "http-get $N"

# nginx: one line per request, each a 200
check "nginx access log: $N lines" "$N" "$(wc -l <"$NGX/access.log")"
check "nginx access log: $N with status 200" "$N" "$(grep -c '"GET / HTTP/1.1" 200 ' "$NGX/access.log")"

# the kernel's counters against surge's
ns() { in_k nstat -az "$1" | awk -v k="$1" '$1 == k { print $2 }'; }
check "kernel TcpPassiveOpens = surge's established" "$N" "$(ns TcpPassiveOpens)"
check "kernel TcpExtListenDrops 0" 0 "$(ns TcpExtListenDrops)"
check "kernel TcpOutRsts 0 (surge counted rst_rcvd 0)" 0 "$(ns TcpOutRsts)"
check "kernel TcpRetransSegs 0" 0 "$(ns TcpRetransSegs)"
check "kernel TcpEstabResets 0" 0 "$(ns TcpEstabResets)"

# --output: the counters and the client's summary, valid against the schema
python3 - "$TMP/r.json" "$SURGE_SRC/docs/results.schema.json" $N <<'PY' || FAILS=$((FAILS + 1))
import json, sys
import jsonschema
r = json.load(open(sys.argv[1]))
jsonschema.validate(r, json.load(open(sys.argv[2])))
n = int(sys.argv[3])
c = {x["name"]: x["value"] for x in r["counters"]}
t = r["scenarios"]["tcp_client"]
assert c["client.completed"] == n and c["client.attempted"] == n, c
assert t["completed"] == n and t["responses"] == n and t["failed"] == 0, t
assert 0 < t["response_us"]["p50"] <= t["response_us"]["p99"] <= t["response_us"]["max"], t["response_us"]
print("ok   --output: counters and scenarios.tcp_client (schema-valid)")
PY

# the capture on the kernel's side: flags, checksums, tshark's analysis
tshark_q -r "$TMP/k.pcapng" -o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE -o tcp.analyze_sequence_numbers:TRUE \
  -T fields -E separator=, -e $IPSRC -e tcp.flags -e tcp.checksum.status -e ip.checksum.status \
  -e tcp.analysis.retransmission -e tcp.analysis.fast_retransmission -Y tcp >"$TMP/k.txt"
cnt() { awk -F, "$1" "$TMP/k.txt" | wc -l; }
check "capture: $N SYNs from surge" "$N" "$(cnt '($1 == "'$SRC'" || $1 == "'$SRC2'") && $2 == "0x0002"')"
check "capture: $((N / 2)) SYNs from $SRC" $((N / 2)) "$(cnt '$1 == "'$SRC'" && $2 == "0x0002"')"
check "capture: $((N / 2)) SYNs from $SRC2" $((N / 2)) "$(cnt '$1 == "'$SRC2'" && $2 == "0x0002"')"
check "capture: $N SYN-ACKs from the kernel" "$N" "$(cnt '$1 == "'$SERVER'" && $2 == "0x0012"')"
check "capture: $N FINs from surge" "$N" "$(cnt '($1 == "'$SRC'" || $1 == "'$SRC2'") && $2 == "0x0011"')"
check "capture: $N FINs from the kernel" "$N" "$(cnt '$1 == "'$SERVER'" && $2 == "0x0011"')"
check "capture: no RST from either side" 0 "$(cnt '$2 == "0x0004" || $2 == "0x0014"')"
# (tshark's checksum status: 1 good, 0 bad, 2 not verified)
check "capture: every TCP checksum of surge's verified good" 0 "$(cnt '($1 == "'$SRC'" || $1 == "'$SRC2'") && $3 != "1"')"
[ "${CONN_V6:-}" = 1 ] || check "capture: every IP checksum verified good" 0 "$(cnt '$4 != "1"')"
# the kernel's segments: surge checks each one's checksum in software as it
# takes it (net_af_packet gives no verdict) and counted none bad. (The
# capture is no judge of those: the tap sees a few of the kernel's own
# packets, ACKs, before their checksum is filled in.)
check_match "surge: every segment from the kernel had a right checksum (rx bad 0)" "rx bad 0(,|$)" \
  "$(printf '%s\n' "$OUT" | grep '^client:')"
check "capture: no retransmission" 0 "$(cnt '$5 != "" || $6 != ""')"

echo "# keep-alive: 200 connections, 5 GETs on each, 10 ms apart"
L0=$(wc -l <"$NGX/access.log")
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/http-get.lua" \
  --src $SRC --server $SERVER --connections 200 --requests 5 --think 0.01 --rate 1000
check "keep-alive: exit 0" 0 "$RC"
check_match "keep-alive: 200 connections completed, 1000 responses" \
  "client: 200 attempted, 200 established, 200 completed, 0 failed .* 1000 requests, 1000 responses" "$OUT"
check "keep-alive: nginx logged 1000 more GETs" 1000 "$(( $(wc -l <"$NGX/access.log") - L0 ))"

echo "# per-connection hooks (http-get.lua --mix): 200 connections, / or /missing first (even, odd),"
echo "# then /b after a 200, /c after the 404, on the same connection"
L0=$(wc -l <"$NGX/access.log")
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$EXAMPLES/http-get.lua" \
  --src $SRC --server $SERVER --connections 200 --rate 1000 --path /,/missing --mix /b,/c --status 0
check "mix: exit 0" 0 "$RC"
check_match "mix: 200 connections completed, 400 responses" \
  "client: 200 attempted, 200 established, 200 completed, 0 failed .* 400 requests, 400 responses" "$OUT"
check_match "mix: the hook counted 100 of each" "mix: 100 GETs of /b \(after a 200\), 100 of /c" "$OUT"
tail -n +$((L0 + 1)) "$NGX/access.log" >"$TMP/mix.log"
for want in '"GET / HTTP/1.1" 200 :100' '"GET /missing HTTP/1.1" 404 :100' '"GET /b HTTP/1.1" 200 :100' \
            '"GET /c HTTP/1.1" 200 :100'; do
  check "mix: nginx logged ${want%:*}" "${want##*:}" "$(grep -c "${want%:*}" "$TMP/mix.log")"
done
# each connection's client port (the log's port=) carries its two GETs in
# the hooks' order: / then /b, /missing then /c
python3 - "$TMP/mix.log" <<'PY' || FAILS=$((FAILS + 1))
import re, sys
by_port: dict[str, list[str]] = {}
for line in open(sys.argv[1]):
    m = re.search(r'"GET (\S+) HTTP/1.1" (\d+) .* port=(\d+)$', line.strip())
    assert m, line
    by_port.setdefault(m.group(3), []).append(m.group(1))
pairs = sorted(set(tuple(v) for v in by_port.values()))
assert len(by_port) == 200 and pairs == [("/", "/b"), ("/missing", "/c")], (len(by_port), pairs)
print("ok   mix: on each of the 200 connections, / then /b or /missing then /c")
PY
check_no_crash "mix"
finish
