#!/bin/bash
# test_otg_pacing.sh - test_otg_rate.sh's rate checks (DPDK telemetry's
# frame count over wall time, the flow's and port's rates as the server
# reports them) in both CI passes: not labelled timing (its name has no
# "rate"), so the ASan/UBSan pass runs it too. At a tenth of the rates
# (5 Mbit/s, 0.05 % of the line rate: a few thousand frames a second, which
# an instrumented build paces as well as a release one) over 4 s instead of
# 2, within 5 % in a release build, 10 % in a sanitized one (libasan linked):
# the sanitizers slow the server's answers, not its pacer, and a rate that
# is off by the wrong pacing of a whole burst or a lost tick still fails.
# test_otg_rate.sh (timing, release pass) keeps the full rates at 5 %.
SURGE=${SURGE:-$(cd "$(dirname "$0")/../.." && pwd)/build/surge}
if ldd "$SURGE" 2>/dev/null | grep -q libasan; then TOL=0.10; else TOL=0.05; fi
OTG_RATE_SCALE=0.1 OTG_RATE_WINDOW=4 OTG_RATE_TOL=$TOL OTG_SECTIONS=rates exec bash "$(dirname "$0")/test_otg_flows.sh"
