#!/bin/bash
# test_otg_mesh.sh - OTG flows between several device endpoints
# (tx_rx.device mesh and one_to_one; tests/e2e/otg/mesh.py), driven by the
# real snappi: in a network namespace of this test's own, veth B-C (both
# surge's ports, two devices on each) and veths A-K, D-E (surge's A and D, the
# kernel's K 192.0.2.1/24 and E 10.9.0.1/24, forwarding between them: the
# gateway of the devices on A and D). tshark on captures of C and D counts
# each flow's frames per address pair; refusals by path; then SIGTERM:
# exit 0, every mbuf back.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/otg/netns.sh"
otg_netns otgm$$
A=otgm$$a K=otgm$$k D=otgm$$d E=otgm$$e B=otgm$$b C=otgm$$c
otg_veth "$A" "$K" kernel
otg_veth "$D" "$E" kernel
otg_veth "$B" "$C"
"${IN[@]}" ip addr add 192.0.2.1/24 dev "$K"
"${IN[@]}" ip addr add 10.9.0.1/24 dev "$E"
"${IN[@]}" sysctl -qw net.ipv4.ip_forward=1
sleep 0.3
otg_serve
otg_drive mesh.py "$A" "$D" "$B" "$C" "$TMP/d.pcap" "$TMP/c.pcap" "$E"
otg_end
