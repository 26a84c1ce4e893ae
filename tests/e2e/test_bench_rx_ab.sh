#!/bin/bash
# test_bench_rx_ab.sh - scripts/bench-rx-ab (issue 20, fifth round), the
# in-process A/B of two builds' measuring receiver, and the mode of
# bench/rx-loop.lua it runs (--cpu-windows):
#  1. bad arguments are one line naming what is wrong and exit 1;
#  2. a short run of one build against itself: a line per pair with both
#     figures and their ratio, and the median line; every figure a
#     plausible number of cycles a frame;
#  3. rx-loop.lua stopped before its first window ends says so at its
#     line and exits non-zero, rather than printing no figure.
. "$(dirname "$0")/lib.sh"
AB=$SURGE_SRC/scripts/bench-rx-ab

# 1. bad arguments
for args in "--pairs 0 $SURGE $SURGE" "--frames 10 $SURGE $SURGE" "$SURGE" "$TMP/none $SURGE" "--bogus $SURGE $SURGE"; do
  # shellcheck disable=SC2086
  ERR=$(timeout -k 5 30 bash "$AB" $args 2>&1 >/dev/null); RC=$?
  check "bench-rx-ab $args: exit status" 1 "$RC"
  check "bench-rx-ab $args: one line" 1 "$(printf '%s\n' "$ERR" | wc -l)"
  check_match "bench-rx-ab $args: the line says it" "^bench-rx-ab: (--pairs: want|--frames: want|want two surge|no surge binary at $TMP/none|unknown option '--bogus')" "$ERR"
done

# 2. one build against itself, two short pairs
OUT=$(timeout -k 5 240 bash "$AB" --pairs 2 --windows 2 --frames 200000 "$SURGE" "$SURGE" 2>&1); RC=$?
check "bench-rx-ab: exit status" 0 "$RC"
[ "$RC" = 0 ] || printf '%s\n' "$OUT" | tail -5
check "two pair lines" 2 "$(grep -Ec '^[12]  [0-9.]+  [0-9.]+  [0-9.]+$' <<<"$OUT")"
GOT=$(awk '/^[12]  / { ok = $2 > 1 && $2 < 100000 && $3 > 1 && $3 < 100000 && ($4 - $3 / $2) ^ 2 < 1e-5
                       print (ok ? "sane" : "insane"), $0 }' <<<"$OUT")
check "each pair: cycles a frame in range, B/A their ratio" "sane sane" "$(awk '{ print $1 }' <<<"$GOT" | xargs)"
check_match "the median line" "^median B/A [0-9.]+ over 2 pairs \(range [0-9.]+-[0-9.]+\)" "$OUT"

# 3. stopped before the first window: an error at the script's line
PCAP=$TMP/frames.pcap
run_surge 60 run -q --no-huge --file-prefix "rxabt$$" --vdev "net_pcap0,tx_pcap=$PCAP" \
  "$SURGE_SRC/bench/rx-loop.lua" --mode capture
check "capture exits 0" 0 "$RC"
run_surge 60 run -q --no-huge --file-prefix "rxabt$$" --duration 0.5 --vdev "net_pcap0,rx_pcap=$PCAP,infinite_rx=1" \
  "$SURGE_SRC/bench/rx-loop.lua" --mode measure --cpu-windows 2 --window-frames 1000000000
check "a run stopped before its first window: non-zero exit" 1 "$([ "$RC" != 0 ] && echo 1 || echo 0)"
check_match "...with the line that says why" "rx-loop\.lua:[0-9]+: rx-loop: stopped before the first window ended" "$ERR"
rm -rf /var/run/dpdk/"rxabt$$"
finish
