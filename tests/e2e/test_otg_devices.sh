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
otg_netns otgd$$
A=otgd$$a K=otgd$$k B=otgd$$b C=otgd$$c
# the kernel speaks on K alone: surge's ports carry no address and no IPv6 of the kernel's
otg_veth "$A" "$K" kernel
otg_veth "$B" "$C"
"${IN[@]}" ip addr add 192.0.2.1/24 dev "$K"
"${IN[@]}" ip -6 addr add 2001:db8:1::1/64 dev "$K" nodad
sleep 0.3
otg_serve
otg_drive devices.py "$A" "$K" "$B" "$C" "$TMP/c.pcap"
otg_end
