# hosts_lib.sh - the emulated hosts' DHCP peer (sourced after lib.sh and
# conn_lib.sh, once conn_pair made the namespaces):
#   dnsmasq_pool FIRST LAST [MASK [ARG...]]
#                            dnsmasq on $IF_K in $NS_K leasing FIRST..LAST
#                            (MASK, default /24; 1 h, authoritative, no ping
#                            check; ARGs: more of dnsmasq's options) into
#                            $LEASES (default $TMP/leases), logging to
#                            $TMP/dnsmasq.log; stopped on exit; the test is
#                            skipped when it cannot start
#   check_lease_neigh DESC   the kernel's neighbours on $IF_K in $NS_K hold
#                            each address of $LEASES at its lease's MAC
dnsmasq_pool() {
  need_cmd dnsmasq
  LEASES=${LEASES:-$TMP/leases}
  in_k true
  ip netns exec "$NS_K" dnsmasq --no-daemon --port=0 --interface="$IF_K" --bind-interfaces \
    --dhcp-range="$1,$2,${3:-255.255.255.0},1h" --dhcp-leasefile="$LEASES" --dhcp-authoritative \
    --no-ping --log-facility="$TMP/dnsmasq.log" "${@:4}" 2>"$TMP/dnsmasq.err" &
  DPID=$!
  on_exit "kill $DPID"
  wait_for_text "$TMP/dnsmasq.log" "sockets bound" 5 ||
    { kill -0 $DPID 2>/dev/null || skip "dnsmasq did not start: $(cat "$TMP/dnsmasq.err")"; }
}
check_lease_neigh() {
  in_k ip -4 neigh show dev "$IF_K" | awk '$2 == "lladdr" { print $3, $1 }' | sort >"$TMP/neigh"
  awk '{ print $2, $3 }' "$LEASES" | sort >"$TMP/leases.pairs"
  check_true "$1" "$(comm -23 "$TMP/leases.pairs" "$TMP/neigh" | head -3)" \
    test -z "$(comm -23 "$TMP/leases.pairs" "$TMP/neigh")"
}
