# dut_lib.sh - the kernel as a routing DUT between two surge ports (sourced
# after lib.sh; needs root, ip, ethtool):
#   dut_router P  namespaces ${P}d (the DUT) and ${P}s (surge's), veths
#                 ${P}a0-${P}a1 and ${P}b0-${P}b1 (the *0 ends surge's), IPv6
#                 off, transmit checksum offload off (docs/connections.md,
#                 "How it is proven"), the DUT at 10.0.0.1/24 on ${P}a1 and
#                 10.1.0.1/24 on ${P}b1, forwarding; sets NSD, NSS, in_d
#                 (a command in the DUT's namespace), SURGE (surge in
#                 surge's namespace) and DEVS (its two ports); removed on
#                 exit; the test is skipped when they cannot be made
dut_router() {
  local p=$1 ns i
  NSD=${p}d NSS=${p}s
  ip netns add "$NSD" 2>/dev/null || skip "cannot create a network namespace"
  on_exit "ip netns del $NSD"
  ip netns add "$NSS" || skip "cannot create a network namespace"
  on_exit "ip netns del $NSS"
  ip link add "${p}a0" netns "$NSS" type veth peer name "${p}a1" netns "$NSD" || skip "cannot create a veth pair"
  ip link add "${p}b0" netns "$NSS" type veth peer name "${p}b1" netns "$NSD"
  for ns in "$NSD" "$NSS"; do
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip netns exec "$ns" ip link set lo up
  done
  for i in a0 b0; do
    ip netns exec "$NSS" ip link set "$p$i" up
    ip netns exec "$NSS" ethtool -K "$p$i" tx off >/dev/null
  done
  for i in a1 b1; do
    in_d ip link set "$p$i" up
    in_d ethtool -K "$p$i" tx off >/dev/null
  done
  in_d ip addr add 10.0.0.1/24 dev "${p}a1"
  in_d ip addr add 10.1.0.1/24 dev "${p}b1"
  in_d sysctl -qw net.ipv4.ip_forward=1
  printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "$NSS" "$SURGE" >"$TMP/surge-ns"
  chmod +x "$TMP/surge-ns"
  SURGE=$TMP/surge-ns
  DEVS=(--vdev "net_af_packet0,iface=${p}a0" --vdev "net_af_packet1,iface=${p}b0")
}
in_d() { ip netns exec "$NSD" "$@"; }
