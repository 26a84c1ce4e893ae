#!/bin/bash
# test_scn_options_before_eal.sh - every option of every built-in scenario,
# given a bad value, is refused before EAL starts (issue 31 item 12: y1564
# --size 10, --interval 1e-6, --services a:cir=1e400mbit, mlrsearch
# --initial-trial abc were refused only after EAL and the port started).
# The options are read from each scenario's --help, so a new one is swept
# too. Each run names a device that cannot start (net_nosuchdriver0): a value
# the pre-EAL check lets through reaches EAL, which fails at once with its
# own lines, so the sweep needs no traffic. Refused before EAL: exit 2, one
# line naming the scenario and the option, no EAL line.
#
# Values: text, a negative, an overflow (1e400: inf), nan and a tiny time
# (1e-6) for every option that takes text; the parser's numeric kinds for
# the rest. Exempt below: values that are fine for an option (a port number
# that exists on a real host, a tiny settle time), with why.
. "$(dirname "$0")/lib.sh"

BAD=(abc -1 1e400)
# a pcap replay can read (one 60-byte frame), for replay's base options
python3 -c "import struct, sys
f = open(sys.argv[1], 'wb')
f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
f.write(struct.pack('<IIII', 0, 0, 60, 60) + bytes(60))" "$TMP/one.pcap"
# what a scenario needs beyond its defaults to run at all
base() {
  case "$1" in
    replay) echo "--file $TMP/one.pcap" ;;
    rfc9693) echo "--rx 1" ;;
  esac
}

# one run: refused before EAL, by a line naming the option? Prints "ok" or
# what happened; run three at a time (xargs), each in files of its own
one() {
  local scn=$1 opt=$2 v=$3 d rc eal first
  d=$(mktemp -d "$TMP/run.XXXXXX")
  # shellcheck disable=SC2046
  timeout -k 5 20 "$SURGE" run --no-huge --vdev net_nosuchdriver0 "$scn" $(base "$scn") "$opt" "$v" >"$d/out" 2>"$d/err"
  rc=$?
  eal=$(cat "$d/err" "$d/out" | grep -c '^EAL: \|net_nosuchdriver0\|^surge: telemetry')
  first=$(grep . "$d/err" | head -1)
  if printf '%s\n' "$(cat "$d/err")" | grep -Eq -- "$CRASH_RE"; then
    echo "FAIL $scn $opt '$v': crash text: $(grep -E -- "$CRASH_RE" "$d/err" | head -1)"
  elif [ "$rc" != 2 ] || [ "$eal" != 0 ] || ! printf '%s' "$first" | grep -q -- "^$scn: .*$opt"; then
    echo "FAIL $scn $opt '$v': not refused before EAL naming the option (rc $rc, $eal EAL line(s)): $first"
  else
    echo "ok   $scn $opt '$v': $first"
  fi
  rm -rf "$d"
}
export -f one base
export SURGE TMP CRASH_RE

JOBS=$TMP/jobs
: >"$JOBS"
# job SCN OPTION VALUE: one line of the sweep (values without spaces or quotes)
job() { printf '%s %s %s\n' "$1" "$2" "$3" >>"$JOBS"; }
for scn in rfc2544 load-latency flood qos replay mlrsearch y1564 rfc2889 rfc3918 rfc9693 http; do
  run_surge 20 run "$scn" --help
  opts=$(printf '%s\n' "$OUT" | awk '/^  --/ && $1 != "--help" && $2 != "" && $2 !~ /^[a-z]/ { print $1 "=" $2 }')
  [ -n "$opts" ] || { echo "FAIL $scn: no options read from --help"; FAILS=$((FAILS + 1)); continue; }
  # the control: with its base options the scenario does reach EAL (so a
  # value let through would be seen there)
  # shellcheck disable=SC2046
  run_surge 20 run --no-huge --vdev net_nosuchdriver0 "$scn" $(base "$scn")
  check "$scn: with good options the run reaches EAL (the control; rc $RC: $(printf '%s' "$ERR" | head -1))" 1 \
    "$(printf '%s\n' "$ERR" | grep -c 'net_nosuchdriver0' | sed 's/^[1-9][0-9]*$/1/')"
  for ok in $opts; do
    opt=${ok%%=*} kind=${ok#*=}
    if [ "$kind" = STRING ]; then
      for v in "${BAD[@]}"; do job "$scn" "$opt" "$v"; done
    else
      job "$scn" "$opt" nan     # the parser's numeric kinds: one path, nan outside every range
    fi
  done
done
# the reports of issue 31 item 12, by value
job y1564 --size 10
job y1564 --interval 1e-6
job y1564 --services a:cir=1e400mbit
job mlrsearch --initial-trial abc
job mlrsearch --initial-trial -1
job load-latency --rates 10kpps,1e400
job y1564 --step 1e-6
job replay --timing scale=0
xargs -P 3 -L 1 bash -c 'one "$@"' _ <"$JOBS" >"$TMP/results"
n=$(wc -l <"$JOBS")
late=$(grep -c '^FAIL' "$TMP/results")
grep '^FAIL' "$TMP/results"
echo "# $n bad values swept, $late not refused before EAL"
check "every bad value refused before EAL, naming the option" 0 "$late"
check "every job reported" "$n" "$(wc -l <"$TMP/results")"
finish
