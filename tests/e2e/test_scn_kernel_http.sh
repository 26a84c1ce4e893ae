#!/bin/bash
# test_scn_kernel_http.sh - issue 21 item 4 (2): the http scenario against a
# real server, nginx (nginx-light) and the Linux kernel in a network
# namespace (conn_lib.sh), surge on net_af_packet in another: three
# offered connection rates, two keep-alive GETs per connection. Every
# request gets a 200; nginx's access log has one line per response surge
# counted (completed connections x requests); each rate's row holds its
# CPS, requests/s and response-time percentiles; --output is valid against
# docs/results.schema.json.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
need_cmd python3
conn_pair r9h
start_nginx
surge_ns

run_surge 60 run --no-huge --stats-interval 0 --vdev "$VDEV" --output "$TMP/h.json" http --src 10.1.0.2 \
  --server 10.1.0.1 --rates 300,600,1200 --trial 1 --requests 2
check "http exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
check_match "the server's MAC resolved by ARP" "^http: client 10.1.0.2 on port 0 -> 10.1.0.1:80 via 10.1.0.1 \(" "$OUT"
for r in 300 600 1200; do
  check_match "$r/s: every connection completed, none failed" \
    "^http: +$r.0/s offered +$r connections +$r completed +0 failed" "$OUT"
done
LINES=$(wc -l <"$NGX/access.log")
check "nginx access log: 4200 lines (2100 connections x 2 GETs)" 4200 "$LINES"
check "nginx access log: every request answered 200" "$LINES" "$(grep -c '"GET / HTTP/1.1" 200 ' "$NGX/access.log")"
python3 - "$TMP/h.json" "$SURGE_SRC/docs/results.schema.json" "$LINES" <<'PY' || FAILS=$((FAILS + 1))
import json, sys
import jsonschema
r = json.load(open(sys.argv[1]))
jsonschema.validate(r, json.load(open(sys.argv[2])))
rows = r["scenarios"]["http"]["rows"]
assert [x["offered_cps"] for x in rows] == [300, 600, 1200], rows
assert sum(x["responses"] for x in rows) == int(sys.argv[3]), "nginx's count = surge's responses"
assert sum(x["completed"] for x in rows) * 2 == int(sys.argv[3]), "= surge's completed x 2 requests"
for x in rows:
    assert x["completed"] == x["connections"] and x["failed"] == 0, x
    # the achieved rate is the offered one (the opens are paced)
    assert abs(x["cps"] - x["offered_cps"]) <= x["offered_cps"] * 0.1, x
    assert abs(x["requests_per_s"] - 2 * x["cps"]) <= x["cps"] * 0.01, x
    assert 0 < x["response_p50_us"] <= x["response_p90_us"] <= x["response_p99_us"] <= x["response_max_us"], x
print("ok   --output valid against the schema; rows: nginx's %s lines = surge's responses; CPS, requests/s and "
      "percentiles per rate" % sys.argv[3])
PY
check_pools "http"
finish
