#!/bin/bash
# test_hosts_ping_kernel.sh - issue 33: emulated hosts that ping (t:ping,
# docs/hosts.md "Ping"), judged by the kernel in a network namespace behind
# a veth: 1000 hosts each ping the kernel 3 times over IPv4 and over IPv6
# (the next hop's MAC found by ARP, then ND); the kernel's own counters
# (IcmpInEchos, Icmp6InEchos) rise by exactly the requests surge counts as
# sent, and every one is answered. Pinging an address nobody has through
# the kernel as the gateway (it forwards nothing) ends in exactly that many
# timeouts; an on-link address nobody has is unresolved, nothing sent.
# tshark checks every IPv4, ICMP and ICMPv6 checksum of the capture.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/conn_lib.sh"
need_cmd tshark
conn_pair hpk 6
surge_ns
in_k ip addr add 10.36.0.1/16 dev "$IF_K"
in_k ip -6 addr add 2001:db8:36::1/64 dev "$IF_K" nodad
in_k sysctl -qw net.ipv4.ip_forward=0 "net.ipv6.conf.$IF_K.forwarding=0"
neigh_room 4
neigh_room 6
N=1000
cat >"$TMP/ping.lua" <<EOF
local surge = require "surge"
local hosts = require "surge.hosts"
function master()
  local port = surge.port(0, { rxq = 1, txq = 1 })
  local r = surge.wait(surge.launch("pinger", port:rxq(0), port:txq(0)))
  if r == nil then return 1 end
  print(r)
  return 0
end
function pinger(rxq, txq)
  local t = hosts.new{ count = $N, mac = "02:36:00:00:00:01", ip = "10.36.1.1", ip6 = "2001:db8:36::1:0",
    dad6 = 0, rs = 0, rate = 4000 }
  local pool = t:pool()
  local rx, tx = pool:burst(64), pool:burst(64)
  local hz = tonumber(surge.tsc_hz())
  local function settle(seconds)
    local stop = tonumber(surge.tsc()) + seconds * hz
    repeat
      if t:poll(rxq, txq, rx, tx) > 0 then rx:free() end
    until (t:settled() and t:stats().hosts6_static == $N) or tonumber(surge.tsc()) > stop
  end
  local out, prev = {}, {}
  local function phase(name)
    local st = t:stats()
    local line = name
    for _, k in ipairs{ "ping_tx", "ping_reply", "ping_timeout", "ping_skipped", "ping_stray", "ping_resolve_tx",
                        "ping_unresolved" } do
      line = line .. (" %s=%d"):format(k, st[k] - (prev[k] or 0))
      prev[k] = st[k]
    end
    out[#out + 1] = line .. (" rtt_min_us=%d rtt_max_us=%d"):format(st.ping_rtt_min_us, st.ping_rtt_max_us)
  end
  settle(10)
  local f = io.open("$TMP/ready", "w")
  f:write("ready\n")
  f:close()
  -- the test reads the kernel's counters, then says go (the hosts keep answering meanwhile)
  local stop = tonumber(surge.tsc()) + 30 * hz
  repeat
    if t:poll(rxq, txq, rx, tx) > 0 then rx:free() end
    local go = io.open("$TMP/go")
    if go then go:close() end
  until go or tonumber(surge.tsc()) > stop
  t:ping{ target = "10.36.0.1", count = 3, interval = 0.5, timeout = 2 }
  settle(30)
  phase("v4")
  t:ping{ target = "2001:db8:36::1", count = 3, interval = 0.5, timeout = 2 }
  settle(30)
  phase("v6")
  t:ping{ target = "10.36.0.99", via = "10.36.0.1", hosts = 100, count = 3, interval = 0.1, timeout = 0.5 }
  settle(30)
  phase("nobody")
  t:ping{ target = "10.36.0.98", hosts = 10, count = 2 }
  settle(30)
  phase("unresolved")
  local st = t:stats()
  out[#out + 1] = ("tx_nobufs=%d tx_full=%d settled=%s"):format(st.tx_nobufs, st.tx_full, tostring(t:settled()))
  rx:free()
  return table.concat(out, "\n")
end
EOF
snmp4() { in_k awk '/^Icmp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 } else print $c["InEchos"] }' /proc/net/snmp; }
snmp6() { in_k awk '$1 == "Icmp6InEchos" { print $2 }' /proc/net/snmp6; }
start_capture "$TMP/k.pcapng"
"$SURGE" run --no-huge --stats-interval 0 --vdev "$VDEV" "$TMP/ping.lua" >"$TMP/s.out" 2>"$TMP/s.err" &
SPID=$!
on_exit "kill $SPID"
wait_for_text "$TMP/ready" "^ready" 30 $SPID || { cat "$TMP/s.out" "$TMP/s.err" | tail; skip "surge did not start"; }
E4=$(snmp4) E6=$(snmp6)
touch "$TMP/go"
wait $SPID
RC=$?
stop_capture
A4=$(snmp4) A6=$(snmp6)
OUT=$(cat "$TMP/s.out") ERR=$(cat "$TMP/s.err")
check "surge exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
val() { printf '%s\n' "$OUT" | awk -v p="$1" -v k="$2" '$1 == p { for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == k) print a[2] } }'; }
check "v4: $N hosts x 3 requests sent" $((N * 3)) "$(val v4 ping_tx)"
check "v4: the kernel's IcmpInEchos rose by exactly what surge sent" "$(val v4 ping_tx)" $((A4 - E4))
check "v4: every request answered, none timed out, none stray" "$((N * 3)) 0 0" \
  "$(val v4 ping_reply) $(val v4 ping_timeout) $(val v4 ping_stray)"
check "v4: one ARP request for the kernel's MAC" 1 "$(val v4 ping_resolve_tx)"
check "v6: $N hosts x 3 requests sent" $((N * 3)) "$(val v6 ping_tx)"
check "v6: the kernel's Icmp6InEchos rose by exactly what surge sent" "$(val v6 ping_tx)" $((A6 - E6))
check "v6: every request answered, none timed out, none stray" "$((N * 3)) 0 0" \
  "$(val v6 ping_reply) $(val v6 ping_timeout) $(val v6 ping_stray)"
check "v6: one NS for the kernel's MAC" 1 "$(val v6 ping_resolve_tx)"
check "nobody (via the kernel): 300 sent, 300 timeouts, no reply" "300 300 0" \
  "$(val nobody ping_tx) $(val nobody ping_timeout) $(val nobody ping_reply)"
check "unresolved on-link: 3 ARP requests, nothing sent, the ping unresolved" "3 0 1" \
  "$(val unresolved ping_resolve_tx) $(val unresolved ping_tx) $(val unresolved ping_unresolved)"
check_match "no frame lost, settled at the end" "tx_nobufs=0 tx_full=0 settled=true" "$OUT"
printf '%s\n' "$OUT" | grep -E '^(v4|v6) ' | sed 's/^/     /'
check_pools "ping"
# the capture (the kernel's side): the hosts' requests, each checksum right
REQ4=$(tshark_q -r "$TMP/k.pcapng" -o ip.check_checksum:TRUE -Y 'icmp.type == 8 && ip.src >= 10.36.1.1' | wc -l)
REQ6=$(tshark_q -r "$TMP/k.pcapng" -o ip.check_checksum:TRUE -Y 'icmpv6.type == 128 && ipv6.src >= 2001:db8:36::1:0' | wc -l)
check "the capture: the hosts' requests, IPv4 and IPv6" "$((N * 3 + 300)) $((N * 3))" "$REQ4 $REQ6"
BAD=$(tshark_q -r "$TMP/k.pcapng" -o ip.check_checksum:TRUE \
  -Y 'ip.checksum.status == "Bad" || icmp.checksum.status == "Bad" || icmpv6.checksum.status == "Bad"' | wc -l)
check "tshark: no bad IPv4, ICMP or ICMPv6 checksum" 0 "$BAD"
finish
