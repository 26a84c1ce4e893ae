# otg/netns.sh - what the OTG tests run in a network namespace of their own
# share (sourced after lib.sh; the drivers beside it are snappi's):
#   otg_netns PREFIX      root, ip, tshark, dumpcap, ping and snappi's modules (else skip);
#                         the namespace PREFIXn (deleted on exit), its lo up; IN=(ip netns exec NS)
#   otg_veth X Y [kernel] the veth pair X-Y in it, up; no IPv6 on X (surge's port), nor on Y
#                         unless it is the kernel's
#   otg_serve             `surge otg` in it on a random port: SRV (its pid), URL
#   otg_drive FILE ARGS   the driver tests/e2e/otg/FILE in it (URL first): its lines shown, its exit checked
#   otg_end               SIGTERM: exit 0, no mbuf leaked; finish
PEERS="$SURGE_SRC/../shared/peers/otg"

otg_netns() {
  need_root
  need_cmd ip
  need_cmd tshark
  need_cmd dumpcap
  need_cmd ping
  [ -d "$PEERS/snappi" ] || skip "snappi not found at $PEERS"
  /usr/bin/python3 -c 'import requests, yaml, semantic_version' 2>/dev/null || skip "snappi's modules not installed"
  NS=${1}n
  ip netns add "$NS" 2>/dev/null || skip "cannot create a network namespace"
  on_exit "ip netns del $NS"
  IN=(ip netns exec "$NS")
  "${IN[@]}" ip link set lo up
}

otg_veth() {
  "${IN[@]}" ip link add "$1" type veth peer name "$2" || skip "cannot create a veth pair"
  "${IN[@]}" sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1"
  [ "${3:-}" = kernel ] || "${IN[@]}" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=1"
  "${IN[@]}" ip link set "$1" up
  "${IN[@]}" ip link set "$2" up
}

otg_serve() {
  local port=$((20000 + RANDOM % 20000))
  "${IN[@]}" "$SURGE" otg --no-huge --stats-interval 0 --http --listen "127.0.0.1:$port" > "$TMP/srv.log" 2>&1 &
  SRV=$!
  URL="http://127.0.0.1:$port"
  for _ in $(seq 100); do grep -q "serving the OTG API" "$TMP/srv.log" && break; sleep 0.2; done
}

otg_drive() {
  local file=$1
  shift
  "${IN[@]}" env PYTHONPATH="$PEERS:$SURGE_SRC/tests/e2e/otg" timeout 120 /usr/bin/python3 \
    "$SURGE_SRC/tests/e2e/otg/$file" "$URL" "$@" > "$TMP/py.log" 2>&1
  check "$file: every check passed" 0 "$?"
  grep -v WARNING "$TMP/py.log" | sed 's/^/  /'
}

otg_end() {
  kill -TERM "$SRV"; wait "$SRV"
  check "SIGTERM: exit 0 (pools full)" 0 "$?"
  check_match "no mbuf leaked" "mbufs back, no leak" "$(cat "$TMP/srv.log")"
  finish
}
