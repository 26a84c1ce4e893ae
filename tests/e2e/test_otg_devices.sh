#!/bin/bash
# test_otg_devices.sh - OTG devices (tests/e2e/otg/devices.py): in a network
# namespace of this test's own, veth A (surge's port) to K (the kernel's,
# 192.0.2.1/24 and 2001:db8:1::1/64) and veth B to C (both surge's ports).
# The device on A resolves the kernel's addresses and the kernel learns the
# device's (ARP, ND, surge.dut.neigh answering); the devices on B and C
# resolve each other and flows between them carry their MACs and
# addresses (tshark on a capture of C); refusals by path.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/otg/netns.sh"
otg_netns otgd$$a otgd$$k
B=otgd$$b C=otgd$$c
"${IN[@]}" ip link add "$B" type veth peer name "$C" || skip "cannot create a veth pair"
# the kernel speaks on K alone: surge's ports carry no address and no IPv6 of the kernel's
for i in "$B" "$C"; do "${IN[@]}" sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"; "${IN[@]}" ip link set "$i" up; done
sleep 0.3
otg_serve
otg_driver devices "$A" "$K" "$B" "$C" "$TMP/c.pcap"
otg_end
finish
