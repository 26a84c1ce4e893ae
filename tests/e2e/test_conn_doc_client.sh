#!/bin/bash
# test_conn_doc_client.sh - issue 31 item 16: docs/connections.md alone is
# enough to write a keep-alive client of one's own. The client the page
# shows ("Your own client, step by step") is extracted from the page and
# run as written against nginx in a network namespace (surge on
# net_af_packet in another): the port's MAC, the pool, ARP for the server,
# the engine and its poll loop. 10 connections with 5 GETs each complete;
# nginx logs the 50 requests, 5 from each of the 10 client ports (the GETs
# of a connection went on one connection: keep-alive); the page's text is
# examples/conn-client.lua byte for byte (test_examples.sh runs that too).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
DOC=$SURGE_SRC/docs/connections.md
awk '/<!-- conn-client.lua begin -->/ { on = 1; next } /<!-- conn-client.lua end -->/ { on = 0 } on && !/^```/' \
  "$DOC" >"$TMP/client.lua"
check "docs/connections.md shows examples/conn-client.lua as it is" "$(cat "$SURGE_SRC/examples/conn-client.lua")" \
  "$(cat "$TMP/client.lua")"
check_true "the page's client is not empty" "$(wc -l <"$TMP/client.lua") lines" [ "$(wc -l <"$TMP/client.lua")" -gt 20 ]
# the command line the page and the example's header give, on the test's veth
grep -qF -- '--src 10.1.0.2 --server 10.1.0.1 --connections 10 --requests 5' "$DOC" \
  || { echo "FAIL: the page no longer shows the command line this test runs"; FAILS=$((FAILS + 1)); }

conn_pair tcd
start_nginx
surge_ns
run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" "$TMP/client.lua" \
  --src 10.1.0.2 --server 10.1.0.1 --connections 10 --requests 5
check "the page's client exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_match "10 connections completed, none failed" "^client: 10 attempted, 10 established, 10 completed, 0 failed" "$OUT"
check_match "50 requests, 50 responses" " 50 requests, 50 responses," "$OUT"
check_pools "the page's client"
check_no_crash "the page's client"
check "nginx: 50 GETs, each a 200" 50 "$(grep -c '"GET / HTTP/1.1" 200 ' "$NGX/access.log")"
PORTS=$(sed -n 's/.*port=\([0-9]*\)$/\1/p' "$NGX/access.log" | sort | uniq -c | awk '{ print $1 }' | sort | uniq -c |
  awk '{ print $1 " ports x " $2 " GETs" }')
check "nginx: 5 GETs from each of 10 client ports (one connection each)" "10 ports x 5 GETs" "$PORTS"
finish
