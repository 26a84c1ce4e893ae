#!/bin/bash
# test_rate_pktgen_row.sh - scripts/bench's Pktgen-DPDK row (issue 20):
#  1. a wrong PKTGEN (no file, a folder), or --rows pktgen without one, is
#     one line naming it and exit 1, before anything is built or run;
#  2. bench/telemetry-rate.py --from-traffic times its warm-up from the
#     port's first packet, not from the socket's first answer (Pktgen sends
#     only ~1.5 s after its socket answers): a sender that starts 2 s late
#     (scripts/late_flood.lua, paced at 1 Mpps) is measured at its rate,
#     where the same window timed from the socket sees nothing; and STEPS 1
#     prints its interval line (the per-second samples of --duration 1);
#     --cpu-of PID gives the TX lcore's CPU share over that same window;
#  3. only with PKTGEN set to a Pktgen-DPDK binary (not packaged:
#     docs/performance.md, "Pktgen-DPDK", says how to build it): the row
#     itself (--rows pktgen: with its two surge rows), one repetition of
#     1 s (about 30 s; CI has no Pktgen).
. "$(dirname "$0")/lib.sh"
need_cmd python3
BENCH=$SURGE_SRC/scripts/bench
TELE=$SURGE_SRC/bench/telemetry-rate.py

# 1. bad PKTGEN: one line, exit 1, at once
for bad in "$TMP/no-such-pktgen" "$TMP"; do
  ERR=$(PKTGEN=$bad timeout -k 5 30 bash "$BENCH" --quick 2>&1 >/dev/null); RC=$?
  check "PKTGEN=$bad: exit status" 1 "$RC"
  check "PKTGEN=$bad: one line" 1 "$(printf '%s\n' "$ERR" | wc -l)"
  check_match "PKTGEN=$bad: the line names it" "^bench: PKTGEN=$bad: no executable there" "$ERR"
done
ERR=$(env -u PKTGEN timeout -k 5 30 bash "$BENCH" --rows pktgen 2>&1 >/dev/null); RC=$?
check "--rows pktgen without PKTGEN: exit status" 1 "$RC"
check "--rows pktgen without PKTGEN: one line" 1 "$(printf '%s\n' "$ERR" | wc -l)"
check_match "--rows pktgen without PKTGEN: the line names both" '^bench: --rows pktgen needs PKTGEN=' "$ERR"
check "nothing was built" no "$([ -e "$SURGE_SRC/build-bench/CMakeCache.txt" ] && [ "$SURGE_SRC/build-bench/CMakeCache.txt" -nt "$TMP" ] && echo yes || echo no)"

# 2. a late sender, measured from its first packet
PREFIX=surge-pktgenrow-$$
timeout -k 5 30 "$SURGE" run -q --no-huge --file-prefix "$PREFIX" --vdev net_null0,no-rx=1 --duration 8 \
  "$E2E_DIR/scripts/late_flood.lua" --delay 2 --rate 1Mpps >"$TMP/late.out" 2>&1 &
SPID=$!
on_exit "kill -KILL $SPID; rm -rf /var/run/dpdk/$PREFIX"
python3 "$TELE" "$PREFIX" 0 0.3 1 opackets 1 >"$TMP/socket.out" 2>&1 &
CPID=$!
for _ in $(seq 100); do DPID=$(pgrep -P "$SPID") && break; sleep 0.05; done   # surge, timeout's child
python3 "$TELE" --from-traffic --cpu-of "${DPID:-0}" "$PREFIX" 0 0.3 1 opackets 1 >"$TMP/traffic.out" 2>&1
check "--from-traffic: exit status" 0 "$?"
wait "$CPID"; check "timed from the socket: exit status" 0 "$?"
wait "$SPID"; RC=$?
check "the late sender's exit status" 0 "$RC"
[ "$RC" = 0 ] || tail -n 8 "$TMP/late.out"
FROM_TRAFFIC=$(awk -F= '/^interval pps_raw=/ { print $2 }' "$TMP/traffic.out")
FROM_SOCKET=$(awk -F= '/^interval pps_raw=/ { print $2 }' "$TMP/socket.out")
check_match "STEPS 1 prints its interval (from traffic)" '^[0-9.]+$' "$FROM_TRAFFIC"
check_true "--from-traffic measures the flood's 1 Mpps (+-20 %)" "$(cat "$TMP/traffic.out")" \
  awk -v r="$FROM_TRAFFIC" 'BEGIN { exit !(r > 0.8e6 && r < 1.2e6) }'
check "timed from the socket's answer, the window saw no packet" 0.000 "$FROM_SOCKET"
# --cpu-of: the TX lcore's CPU share over the same window (scripts/bench
# --cpu-time): a fraction of one CPU (the paced sender sleeps between bursts)
SHARE=$(awk -F= '/^cpu_share=/ { print $2 }' "$TMP/traffic.out")
check_true "--cpu-of: a CPU share in [0, 1] over the window ('$SHARE')" "$(cat "$TMP/traffic.out")" \
  awk -v s="$SHARE" 'BEGIN { exit !(s != "" && s >= 0 && s <= 1.02) }'

# 3. the row, where a Pktgen-DPDK binary was given
if [ -n "${PKTGEN:-}" ]; then
  ROW=$(PKTGEN=$PKTGEN SURGE=$SURGE timeout -k 5 600 bash "$BENCH" --duration 1 --reps 1 --rows pktgen 2>&1)
  check "the bench with PKTGEN: exit status" 0 "$?"
  check_match "the Pktgen-DPDK row" '^Pktgen-DPDK 64 B constant frame .* +[1-9][0-9]*\.[0-9] +[0-9.]+ +- ' "$ROW"
  check_match "the template row against it" '^surge template path \(udp-flood.lua\) +[0-9.]+ +[0-9.]+ +[0-9.]+ ' "$ROW"
  check_match "the one-field row against it" \
    '^surge one varied field, checksum kept \(--flows 1024\) +[0-9.]+ +[0-9.]+ +[0-9.]+ .*>= 1\.0 \((not )?reached\)' "$ROW"
else
  echo "note: PKTGEN not set: the row itself is not run (docs/performance.md, \"Pktgen-DPDK\")"
fi
finish
