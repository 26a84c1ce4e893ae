#!/bin/bash
# test_otg_rate.sh - `surge otg`'s rates measured from outside: a rate in
# Mbit/s and a percentage of the line rate, DPDK telemetry's frame count
# over wall time within 5 %, and the flow's and port's rates as the server
# reports them (tests/e2e/otg/flowmetrics.py's rates; test_otg_flows.sh
# runs the rest). Labelled timing (its name): a rate means nothing under a
# sanitizer or on a starved host. test_otg_pacing.sh runs the same checks at
# a tenth of the rates in both CI passes.
OTG_SECTIONS=rates exec bash "$(dirname "$0")/test_otg_flows.sh"
