#!/usr/bin/env bash
# Live re-rating from the prompt and from `surge attach -e`, measured from
# outside through DPDK telemetry (timing label: the name has "rate").
. "$(dirname "$0")/lib.sh"
need_cmd python3
timeout -k 5 120 python3 "$E2E_DIR/repl/test_rate.py"
