# hosts_lib.sh - the emulated hosts' DHCP peer (sourced after lib.sh and
# conn_lib.sh, once conn_pair made the namespaces):
#   dnsmasq_pool FIRST LAST  dnsmasq on $IF_K in $NS_K leasing FIRST..LAST
#                            (/24, 1 h, authoritative, no ping check) into
#                            $LEASES, logging to $TMP/dnsmasq.log; stopped on
#                            exit; the test is skipped when it cannot start
dnsmasq_pool() {
  need_cmd dnsmasq
  LEASES=$TMP/leases
  in_k true
  ip netns exec "$NS_K" dnsmasq --no-daemon --port=0 --interface="$IF_K" --bind-interfaces \
    --dhcp-range="$1,$2,255.255.255.0,1h" --dhcp-leasefile="$LEASES" --dhcp-authoritative \
    --no-ping --log-facility="$TMP/dnsmasq.log" 2>"$TMP/dnsmasq.err" &
  DPID=$!
  on_exit "kill $DPID"
  wait_for_text "$TMP/dnsmasq.log" "sockets bound" 5 ||
    { kill -0 $DPID 2>/dev/null || skip "dnsmasq did not start: $(cat "$TMP/dnsmasq.err")"; }
}
