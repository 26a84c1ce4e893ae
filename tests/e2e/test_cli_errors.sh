#!/bin/bash
# test_cli_errors.sh - user mistakes on the command line end the run with a
# status 1..123, a clear line on stderr that names the culprit, and no crash;
# --help, --version and SCRIPT --help answer and exit 0.
. "$(dirname "$0")/lib.sh"
FLOOD=$EXAMPLES/udp-flood.lua

# refused NAME REGEX [one-line] -- SURGE ARGS...: the run fails cleanly and
# the first stderr line matches REGEX; with one-line, stderr is only that line
refused() {
  local name=$1 re=$2 one=
  shift 2
  [ "$1" = one-line ] && { one=1; shift; }
  [ "$1" = -- ] && shift
  run_surge 60 "$@"
  check_user_error "$name"
  check_match "$name: stderr line 1 names it" "$re" "$(printf '%s\n' "$ERR" | grep . | head -1)"
  if [ -n "$one" ]; then
    check "$name: exactly one line on stderr" 1 "$(printf '%s\n' "$ERR" | grep -c .)"
  fi
  check_nomatch "$name: no summary after a start-up error" '^surge: summary' "$OUT"
}

echo "# surge's own options"
refused "unknown surge option" "unknown option '--bogus'" one-line -- run --bogus "$FLOOD"
refused "--duration abc" "--duration.*'abc'" one-line -- run --no-huge --duration abc "$FLOOD"
refused "--stats-interval -1" "--stats-interval.*'-1'" one-line -- run --stats-interval -1 "$FLOOD"
refused "--vdev without a value" "--vdev needs a value" one-line -- run --vdev
refused "unknown command" "unknown command 'frobnicate'" one-line -- frobnicate
refused "run without a script" "missing SCRIPT" one-line -- run --no-huge
refused "script not found" "cannot read script '$TMP/nope\\.lua'.*No such file" one-line -- run --no-huge "$TMP/nope.lua"
refused "bad --vdev" "net_bogus0" one-line -- run --no-huge --vdev net_bogus0 "$FLOOD"
refused "bad --lcores" "--lcores" one-line -- run --no-huge --lcores zz "$FLOOD"
# a long path: the reason comes before the path (a message cut at its end lost it)
LONG=/tmp/$(printf 'd%.0s' $(seq 300))/s.sock
refused "--control with a 312-byte path" "^surge: --control: path longer than 107 bytes \\(312\\): /tmp/ddd" one-line -- \
  run --no-huge --control "$LONG" "$FLOOD"
# commands that take no argument, and plot's own arguments: exit 2 (the CLI)
refused "devices with an argument" "devices: unexpected argument 'extra'" one-line -- devices extra
refused "scenarios with an argument" "scenarios: unexpected argument 'extra'" one-line -- scenarios extra
refused "--version with an argument" "--version: unexpected argument 'extra'" one-line -- --version extra
refused "plot without a file" "^surge plot: missing FILE\.json \(usage: surge plot FILE\.json" one-line -- plot
refused "plot --bogus" "^surge plot: unknown argument '--bogus'" one-line -- plot "$TMP/r.json" --bogus
refused "plot -o without a name" "^surge plot: missing a file name after '-o'" one-line -- plot "$TMP/r.json" -o
for a in devices scenarios --version plot; do
  check "$a: a command-line error is exit 2" 2 "$("$SURGE" $a extra extra2 >/dev/null 2>&1; echo $?)"
done

echo "# EAL's notices of a healthy run are not shown, without --quiet too"
run_surge 60 run --vdev net_null0,no-rx=1 "$FLOOD" --count 1000
check "a run with hugepages: exit 0" 0 "$RC"
check_nomatch "a run without -q: no 'EAL: No free/available ... hugepages' notice" 'EAL: No (free|available) ' "$ERR"

echo "# surge show: what show(args) returned, refused at the script's line"
printf '\nfunction show(args)\n  return {}\nend\n' >"$TMP/show_empty.lua"
refused "show() returning an empty list" \
  "^$TMP/show_empty\\.lua:2: show\\(args\\) returned an empty list \\(no packets to show\\)" one-line -- show "$TMP/show_empty.lua"
printf 'function show(args) return { x = 1 } end\n' >"$TMP/show_tab.lua"
refused "show() returning a table that is no list" \
  "^$TMP/show_tab\\.lua:1: show\\(args\\) returned a table that is no frame, template, flow or list" one-line -- \
  show "$TMP/show_tab.lua"

echo "# the script's options"
refused "unknown script option" "udp-flood\\.lua: unknown option '--frob'" one-line -- \
  run --no-huge --vdev net_null0,no-rx=1 "$FLOOD" --frob 1
refused "--size abc" "option --size: expected an integer in 14\.\.9600, got 'abc'" one-line -- \
  run --no-huge --vdev net_null0,no-rx=1 "$FLOOD" --size abc
refused "--count=1.5" "option --count: expected an integer >= 0, got '1\\.5'" one-line -- \
  run --no-huge --vdev net_null0,no-rx=1 "$FLOOD" --count=1.5
refused "script option without its value" "option --count needs a value" one-line -- \
  run --no-huge --vdev net_null0,no-rx=1 "$FLOOD" --count
refused "--count not a multiple of --clones" "--count 1001 is not a multiple of --clones 4" one-line -- \
  run --no-huge --vdev net_null0,no-rx=1 "$FLOOD" --count 1001 --clones 4
# --rate is read on the port (a % needs its link speed): the one error line
# names the option, after EAL started (so a summary follows)
run_surge 60 run --no-huge -q --vdev net_null0,no-rx=1 "$FLOOD" --rate 3frob
check_user_error "--rate 3frob"
check_match "--rate 3frob: the error line names the option" "^--rate 3frob: rate '3frob': unknown unit 'frob'" "$ERR"
check "--rate 3frob: one error line" 1 "$(printf '%s\n' "$ERR" | grep -c .)"

echo "# scenario options the scenario reads itself: exit 2, the exact line, no traffic"
# list options split in one place (an empty item or a repeat is refused;
# load-latency's rates may repeat), and a trial must send a frame
NULL=(--no-huge -q --vdev "net_null0,no-rx=1")
TAIL="a trial must send 1 or more (give a higher rate or a longer trial)"
while IFS='|' read -r opts msg; do
  msg=${msg//TAIL/$TAIL}
  # shellcheck disable=SC2086  # opts: several words
  run_surge 30 run "${NULL[@]}" $opts
  check "$opts: exit 2 and the line" "2 $msg" "$RC $(printf '%s\n' "$ERR" | head -1)"
  check "$opts: one line on stderr" 1 "$(printf '%s\n' "$ERR" | grep -c .)"
  check "$opts: no traffic, no output" "" "$OUT"
done <<'EOF'
rfc2544 --tests throughput,,latency|rfc2544: --tests: empty item in 'throughput,,latency'
rfc2544 --tests throughput,|rfc2544: --tests: empty item in 'throughput,'
rfc2544 --sizes 64,,128|rfc2544: --sizes: empty item in '64,,128'
rfc2544 --tests throughput,latency,throughput|rfc2544: --tests: test 'throughput' given twice in 'throughput,latency,throughput'
rfc2544 --sizes 64,128,64|rfc2544: --sizes: size 64 given twice in '64,128,64'
flood --sizes 64,64|flood: --sizes: size 64 given twice in '64,64'
load-latency --rates 10kpps,,20kpps|load-latency: --rates: empty item in '10kpps,,20kpps'
qos --classes ef:46:1kpps,be:0:1kpps,ef:10:1kpps|qos: --classes: class 'ef' given twice in 'ef:46:1kpps,be:0:1kpps,ef:10:1kpps'
flood --rate 0.5pps --trial 0.1|flood: 0.5 pps (--rate) for 0.1 s (--trial) is 0.05 frames: TAIL
flood --sizes imix --rate 10pps --trial 0.5|flood: 0.8333 pps (the 1518-byte frames' share of --rate) for 0.5 s (--trial) is 0.417 frames: TAIL
load-latency --rates 10kpps,0.5pps|load-latency: 0.5 pps (--rates) for 1 s (--trial) is 0.5 frames: TAIL
qos --classes ef:46:1pps,be:0:1kpps --trial 0.5|qos: 1 pps (class 'ef' of --classes) for 0.5 s (--trial) is 0.5 frames: TAIL
rfc2544 --sizes 64 --max-rate 1kpps --trial 0.1|rfc2544: 7.813 pps (64 bytes, the lowest rate the throughput search can try from --max-rate, --min-rate, --resolution and --max-trials) for 0.1 s (--trial) is 0.781 frames: TAIL
EOF

echo "# plot given a directory (io.open opens one, its read fails): one line, exit 2 like a missing file"
mkdir "$TMP/results.d"
run_surge 10 plot "$TMP/results.d"
check "plot DIR: exit 2, one line saying it is a directory" \
  "2 surge plot: cannot read '$TMP/results.d': Is a directory" "$RC $ERR"

echo "# more tasks than worker lcores (loopback.lua needs 2 workers, --lcores 0-1 has 1)"
run_surge 60 run --no-huge --stats-interval 0 --lcores 0-1 --vdev net_null0,no-rx=1 "$EXAMPLES/loopback.lua" --count 1000
check_user_error "too few lcores"
check_match "too few lcores: stderr line 1 says so and how to fix it" \
  "^.*loopback\\.lua:[0-9]+: no free lcore for task 'tx'.*--lcores" "$(printf '%s\n' "$ERR" | head -1)"
check_pools "too few lcores"

echo "# a port that cannot start (memif client, no server)"
run_surge 60 run --no-huge --stats-interval 0 --vdev "net_memif0,role=client,socket=$TMP/none.sock,socket-abstract=no" \
  "$FLOOD" --count 10
check_user_error "port start fails"
check_match "port start fails: the error says the port did not start" "udp-flood\\.lua:[0-9]+: port 0.*(start failed|link)" "$ERR"
check_no_leak "port start fails"

echo "# help and version"
run_surge 30 --help
check "--help exits 0" 0 "$RC"
check_match "--help: usage line" '^usage: surge COMMAND' "$OUT"
for o in "run SCRIPT" --vdev --pci --lcores --no-huge --eal --duration --stats-interval --quiet --version; do
  check_match "--help lists $o" "^  ${o}[ ,]" "$OUT"
done
check "--help: nothing on stderr" "" "$ERR"
run_surge 30 --version
check "--version exits 0" 0 "$RC"
VERSION=$(sed -n 's/^project(surge VERSION \([0-9.]*\).*/\1/p' "$SURGE_SRC/CMakeLists.txt")
check "--version prints the project's version" "surge $VERSION" "$OUT"
run_surge 30 run "$FLOOD" --help
check "SCRIPT --help exits 0" 0 "$RC"
check_match "SCRIPT --help: usage line with the script" "^usage: surge run .*udp-flood\\.lua" "$OUT"
for o in --port --size --flows --clones --burst --count --src --dst --sport --dport; do
  check_match "SCRIPT --help lists $o" "^  $o " "$OUT"
done
check_match "SCRIPT --help shows defaults" '--size INTEGER.*\(default 60\)' "$OUT"
check_nomatch "SCRIPT --help starts no DPDK (no EAL or summary lines)" '^EAL:|summary|virtual sink' "$OUT
$ERR"

run_surge 30 show "$FLOOD" --help
check "show SCRIPT --help exits 0" 0 "$RC"
check_match "show SCRIPT --help: the usage line says show, not run" "^usage: surge show .*udp-flood\\.lua" "$OUT"

echo "# SCENARIO --help: an option with no default (\"\") shows no (default ...) part"
run_surge 30 run flood --help
check "SCENARIO --help exits 0" 0 "$RC"
check "SCENARIO --help: --rate, no default: the exact line" \
  "  --rate STRING            total offered rate (empty: as fast as surge can)" \
  "$(printf '%s\n' "$OUT" | grep -- '^  --rate ')"
check "SCENARIO --help: --trial, a default: the exact line" \
  "  --trial NUMBER           seconds of flooding (default 2)" \
  "$(printf '%s\n' "$OUT" | grep -- '^  --trial ')"
check "SCENARIO --help: no empty (default ) anywhere" "" "$(printf '%s\n' "$OUT" | grep -F '(default )')"
finish
