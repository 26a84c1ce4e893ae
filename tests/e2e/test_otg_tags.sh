#!/bin/bash
# test_otg_tags.sh - OTG metric tags and tagged metrics (tests/e2e/otg/tags.py),
# driven by the real snappi: in a network namespace of this test's own, the
# veth pair B-C (both surge's ports); a flow from B to C whose IPv4 source
# and UDP source port carry metric tags, its tagged metrics' counts as the
# pattern gives and as tshark counts them in a capture of C; the request's
# options and the refusals by path; then SIGTERM: exit 0, every mbuf back.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/otg/netns.sh"
otg_netns otgt$$
B=otgt$$b C=otgt$$c
otg_veth "$B" "$C"
otg_serve
otg_drive tags.py "$B" "$C" "$TMP/c.pcap"
otg_end
