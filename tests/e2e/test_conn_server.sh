#!/bin/bash
# test_conn_server.sh - issue 21 item 5b: surge's TCP server (http-server.lua
# on net_af_packet) against kernel clients in a network namespace: curl's
# download is byte-exact (a 3000-byte body: three segments of the 1460-byte
# MSS), ab with and without keep-alive and wrk finish with 0 failed
# requests, and surge's counters agree with what the clients sent
# (test_conn_server6.sh: the same over IPv6). Over IPv4 the server runs
# with --routes (an on_request hook choosing each response by its path):
# /a and /b get their own status and body, byte-exact, and every other
# path (all of ab's and wrk's) the --body 200 through the same hook.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
need_cmd curl
need_cmd ab
need_cmd wrk
# test_conn_server6.sh runs this over IPv6 (CONN_V6=1)
if [ "${CONN_V6:-}" = 1 ]; then
  conn_pair tcp7 6
  ADDR=2001:db8:1::2 URL='http://[2001:db8:1::2]/'
else
  conn_pair tcps
  ADDR=10.1.0.2 URL=http://10.1.0.2/
  ROUTES="/a=200:100,/b=404:0"
fi
surge_ns
BODY=3000

"$SURGE" run --no-huge --stats-interval 0 --duration 25 --vdev "$VDEV" "$EXAMPLES/http-server.lua" \
  --addr $ADDR --body $BODY ${ROUTES:+--routes $ROUTES} >"$TMP/s.out" 2>"$TMP/s.err" &
SPID=$!
on_exit "kill $SPID"
check_answers "surge's server answers curl" $SPID curl -g -s -m 0.5 -o /dev/null "$URL"

# the body as surge.conn.http.body(n) makes it
http_body $BODY >"$TMP/expected"
in_k curl -g -s -D "$TMP/h1" -o "$TMP/got1" -o "$TMP/got2" "$URL" "$URL"   # two GETs on one connection
check_true "curl: the body is byte-exact" "cmp says: $(cmp "$TMP/expected" "$TMP/got1" 2>&1)" cmp -s "$TMP/expected" "$TMP/got1"
check_true "curl: the second (keep-alive) body too" "differs" cmp -s "$TMP/expected" "$TMP/got2"
check_match "curl: HTTP/1.1 200 with Content-Length $BODY" "Content-Length: $BODY" "$(cat "$TMP/h1")"

if [ -n "${ROUTES:-}" ]; then
  # /a, /b and /x on one connection: each its route's response, in order
  python3 -c 'import sys; sys.stdout.write(open(sys.argv[1]).read()[:100])' "$TMP/expected" >"$TMP/expected_a"
  CODES=$(in_k curl -g -s -o "$TMP/ga" -o "$TMP/gb" -o "$TMP/gx" -w '%{http_code} %{size_download}\n' \
    "${URL}a" "${URL}b" "${URL}x?q=1")
  check "curl /a /b /x: statuses and body sizes by route" "200 100 404 0 200 $BODY" "$(echo $CODES)"
  check_true "curl /a: its 100-byte body, byte-exact" "differs" cmp -s "$TMP/expected_a" "$TMP/ga"
  check_true "curl /x?q=1 (no route): the --body response" "differs" cmp -s "$TMP/expected" "$TMP/gx"
fi

AB=$(in_k ab -n 2000 -c 8 "$URL" 2>&1)
check_match "ab -n 2000 -c 8: 2000 complete" "Complete requests: +2000" "$AB"
check_match "ab: 0 failed" "Failed requests: +0" "$AB"
check_match "ab: document length $BODY" "Document Length: +$BODY bytes" "$AB"
check_nomatch "ab: no non-2xx" "Non-2xx" "$AB"
ABK=$(in_k ab -k -n 2000 -c 8 "$URL" 2>&1)
check_match "ab -k (keep-alive): 2000 complete" "Complete requests: +2000" "$ABK"
check_match "ab -k: 0 failed" "Failed requests: +0" "$ABK"
check_match "ab -k: 2000 keep-alive requests" "Keep-Alive requests: +2000" "$ABK"
WRK=$(in_k wrk -t 1 -c 8 -d 1s "$URL" 2>&1)
check_match "wrk: requests done" "[1-9][0-9]* requests in" "$WRK"
check_nomatch "wrk: no socket errors, no non-2xx" "Socket errors|Non-2xx" "$WRK"
WN=$(printf '%s\n' "$WRK" | awk '/requests in/ { print $1 }')

stop_surge $SPID
check "surge exits 0" 0 "$RC"
check_pools "http-server"
# every request the clients made reached surge (wrk's last ones may be cut
# by its stop: at least as many as it counted)
REQ=$(printf '%s\n' "$OUT" | sed -n 's/^server: .* \([0-9]*\) requests, .*/\1/p')
NR=0; [ -n "${ROUTES:-}" ] && NR=3
check_true "surge counted every request (2 + $NR + 2000 + 2000 + wrk's $WN + the probes): $REQ" "too few" \
  test "${REQ:-0}" -ge $((4002 + NR + WN))
check_match "surge: no timeout, no bad request, no bad segment" "failed \(timeout 0, rst [0-9]+, bad 0\).*rx bad 0" "$OUT"
finish
