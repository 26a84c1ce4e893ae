#!/bin/bash
# test_otg_snappi.sh - `surge otg` driven by the real snappi (OTG 1.3.0's
# Python client, ../shared/peers/otg) over HTTPS as a lab drives Ixia-c:
# tests/e2e/otg/basic.py sets a config of two flows on two net_ring ports
# (each a loopback), starts them, waits for transmit stopped and checks the
# flow and port metrics exact, then the refusals (each a model Error naming
# its JSON path, the server serving after each). Around it: bad options
# exit 2 before EAL with one line naming the option; the self-signed
# certificate is made once (0600 in a 0700 folder) and reused; SIGTERM
# stops the server with exit 0 (traffic stopped, pools full).
source "$(dirname "$0")/lib.sh"
PEERS="$SURGE_SRC/../shared/peers/otg"
[ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
/usr/bin/python3 -c 'import requests, yaml, semantic_version, grpc, google.protobuf' 2>/dev/null \
  || skip "snappi's modules (scripts/setup: python3-requests python3-yaml ...) not installed"
export XDG_STATE_HOME="$TMP/state"

echo "# bad options: one line naming the option, exit 2, before EAL"
for args in "--listen 127.0.0.1:99999" "--listen localhost:8443" "--listen 1.2.3.4.5:80" "--cert x.pem" \
            "--http --cert a --key b" "--listen"; do
  # shellcheck disable=SC2086
  out=$("$SURGE" otg $args 2>&1); rc=$?
  check "surge otg $args: exit 2" 2 "$rc"
  check "surge otg $args: one line" 1 "$(printf '%s\n' "$out" | wc -l)"
  check_match "surge otg $args: names the option" "option --(listen|cert|key)" "$out"
done
out=$("$SURGE" otg extra 2>&1); rc=$?
check "surge otg extra: exit 2" 2 "$rc"
check_match "--help lists otg and its options" "otg .*Open Traffic Generator" "$("$SURGE" --help)"

PORT=$((20000 + RANDOM % 20000))
start() {
  "$SURGE" otg --no-huge --stats-interval 0 --listen "127.0.0.1:$PORT" --vdev net_ring0 --vdev net_ring1 "$@" \
    > "$TMP/srv.log" 2>&1 &
  SRV=$!
  for _ in $(seq 100); do
    grep -q "serving the OTG API" "$TMP/srv.log" && return 0
    kill -0 "$SRV" 2>/dev/null || break
    sleep 0.2
  done
  echo "server did not start:"; cat "$TMP/srv.log"; return 1
}
stop() {
  kill -TERM "$SRV"; wait "$SRV"; RC=$?
}

echo "# HTTPS by default, a self-signed certificate made at the first start"
start || { FAILS=$((FAILS + 1)); finish; }
check "a port in use: exit 2 naming --listen" "2 1" \
  "$("$SURGE" otg --no-huge --listen "127.0.0.1:$PORT" >"$TMP/busy.log" 2>&1; echo $? "$(grep -c -- '--listen' "$TMP/busy.log")")"
check "certificate made in XDG_STATE_HOME, mode 600" "600 600 700" \
  "$(stat -c %a "$XDG_STATE_HOME/surge/otg/cert.pem" "$XDG_STATE_HOME/surge/otg/key.pem" \
     "$XDG_STATE_HOME/surge/otg" | tr '\n' ' ' | sed 's/ $//')"
check_match "the certificate is for localhost and 127.0.0.1" "DNS:localhost, IP Address:127.0.0.1" \
  "$(openssl x509 -in "$XDG_STATE_HOME/surge/otg/cert.pem" -noout -text 2>/dev/null || echo no-openssl)"
SUM=$(md5sum < "$XDG_STATE_HOME/surge/otg/cert.pem")
PYTHONPATH="$PEERS" /usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/basic.py" "https://127.0.0.1:$PORT" \
  > "$TMP/py.log" 2>&1
PYRC=$?
grep -v WARNING "$TMP/py.log" | sed 's/^/  /'
check "snappi driver: every check passed" 0 "$PYRC"
stop
check "SIGTERM: exit 0 (traffic stopped, pools full)" 0 "$RC"
check_match "the pools checked: every mbuf back" "mbufs back, no leak" "$(cat "$TMP/srv.log")"
check "no leak or task failure reported" 0 "$(grep -i 'leak\|failed' "$TMP/srv.log" | grep -vc 'no leak')"

echo "# a second start reuses the certificate; --http serves plain HTTP"
start || { FAILS=$((FAILS + 1)); finish; }
check "the same certificate" "$SUM" "$(md5sum < "$XDG_STATE_HOME/surge/otg/cert.pem")"
check_match "it says which certificate" "HTTPS with the certificate .*cert.pem" "$(cat "$TMP/srv.log")"
stop
start --http || { FAILS=$((FAILS + 1)); finish; }
check_match "--http: plain HTTP answers" '"api_spec_version":"1.3.0"' \
  "$(curl -s "http://127.0.0.1:$PORT/capabilities/version")"
check "a body over 64 MiB: 413" 413 "$(head -c 70000000 /dev/zero | curl -s -o /dev/null -w '%{http_code}' \
  -H 'Content-Type: application/json' --data-binary @- "http://127.0.0.1:$PORT/config")"
# six 60 MB bodies at once: the server holds at most 256 MiB of bodies, the rest wait for none (503)
CODES=$(/usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/bigbodies.py" 127.0.0.1 "$PORT" 2>&1)
check_match "six 60 MB bodies at once: some read whole (400: not JSON), the others 503, every one answered" \
  "^400:[1-4] 503:[2-5]$" "$CODES"
check "an unknown path: 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/nope")"
/usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/trickle.py" 127.0.0.1 "$PORT" > "$TMP/trickle.log" 2>&1
check "3 clients trickling their bodies and 8 idle ones: every other request answered within 0.5 s" 0 "$?"
cat "$TMP/trickle.log"
PYTHONPATH="$PEERS" /usr/bin/python3 "$SURGE_SRC/tests/e2e/otg/restart.py" "http://127.0.0.1:$PORT" \
  > "$TMP/restart.log" 2>&1
check "40 configs and starts on one server, then six ports: counts exact each time" 0 "$?"
grep -v WARNING "$TMP/restart.log" | tail -3
check "still serving" 200 "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/capabilities/version")"
stop
check "SIGTERM after --http: exit 0" 0 "$RC"

echo "# docs/otg.md's snappi example, as written (https://localhost:8443)"
awk '/^## A snappi example/ { on = 1 } on && /^```python/ { grab = 1; next } grab && /^```/ { exit } grab' \
  "$SURGE_SRC/docs/otg.md" > "$TMP/example.py"
check_match "the example is there" "snappi.api\\(location=\"https://localhost:8443\"" "$(cat "$TMP/example.py")"
if /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 8443))' 2>/dev/null; then
  PORT=8443
  start || { FAILS=$((FAILS + 1)); finish; }
  OUT=$(cd "$TMP" && PYTHONPATH="$PEERS" timeout 60 /usr/bin/python3 example.py 2>&1 | grep -v WARNING)
  check "the example prints what docs/otg.md says" "f1: sent 1000 received 1000 loss 0.0 %" "$OUT"
  stop
  check "SIGTERM: exit 0" 0 "$RC"
else
  echo "skip: port 8443 is in use here, the example (which names it) not run"
fi
finish
