#!/bin/bash
# test_examples.sh - every examples/*.lua (found by a glob, so new examples
# are covered) answers --help and survives two short runs, each ending with
# exit 0, every pool full again, no leak and no crash:
#   1. a short complete run with the example's own options (table below);
#   2. the same set-up cut short by --duration 0.5 (surge's documented way to
#      end a run early, like Ctrl-C), with any packet count left unlimited.
# Examples not in the table get --duration 1 and four lcores on the default
# device.
. "$(dirname "$0")/lib.sh"

# the default device is the virtual sink unless a NIC is bound to DPDK
read -r -a DEV <<<"$(default_dev)"

# setup NAME: SURGE_OPTS (devices, lcores) the example needs, RUN_OPTS (surge
# options of the complete run, before the script), SCRIPT_OPTS (its script
# options) and CUT_OPTS (script options for the run cut short)
setup() {
  SURGE_OPTS=("${DEV[@]}" --lcores '(0-3)@(0-1)') RUN_OPTS=() SCRIPT_OPTS=() CUT_OPTS=()
  case $1 in
    udp-flood.lua) SURGE_OPTS=("${DEV[@]}") RUN_OPTS=(--duration 1) ;;
    loopback.lua) SURGE_OPTS=(--vdev net_ring0 --lcores '(0-2)@(0-1)') SCRIPT_OPTS=(--count 10000) CUT_OPTS=(--count 0) ;;
    rate.lua) SCRIPT_OPTS=(--seconds 0.1) ;;
    latency.lua) SURGE_OPTS=("${DEV[@]}") SCRIPT_OPTS=(--seconds 0.5 --rate 100kpps) CUT_OPTS=(--rate 100kpps) ;;
    *) RUN_OPTS=(--duration 1) ;;
  esac
}

short_run() {  # short_run LABEL SURGE ARGS...
  local label=$1
  shift
  run_surge 60 run --no-huge --stats-interval 0 "$@"
  check "$label: exit 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run
  check_true "$label: ran for under 20 s" "took $SECS s" lt "$SECS" 20
  check_match "$label: summary printed" '^surge: summary over' "$OUT"
  check_pools "$label"
  check_no_crash "$label"
}

n=0
for ex in "$EXAMPLES"/*.lua; do
  [ -e "$ex" ] || continue
  name=$(basename "$ex")
  n=$((n + 1))
  echo "# $name"
  run_surge 30 run "$ex" --help
  check "$name --help: exit 0" 0 "$RC"
  check_match "$name --help: usage line" "^usage: surge run .*$name" "$OUT"
  setup "$name"
  short_run "$name ${RUN_OPTS[*]} ${SCRIPT_OPTS[*]}" "${RUN_OPTS[@]}" "${SURGE_OPTS[@]}" "$ex" "${SCRIPT_OPTS[@]}"
  short_run "$name cut short by --duration 0.5 ${CUT_OPTS[*]}" --duration 0.5 "${SURGE_OPTS[@]}" "$ex" "${CUT_OPTS[@]}"
  check_true "$name cut short: ends soon after 0.5 s" "took $SECS s" lt "$SECS" 10
done
check_true "found the examples" "only $n example(s) in $EXAMPLES" [ "$n" -ge 2 ]
finish
