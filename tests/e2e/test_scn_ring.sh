#!/bin/bash
# test_scn_ring.sh - every scenario by name on a net_ring loopback, a perfect
# DUT: rfc2544 passes at the offered maximum with no loss, load-latency,
# flood (IMIX shares), qos (per-class rates) and replay count every frame
# back; a user scenario runs from SURGE_PATH / --path; a script runs two
# scenarios from Lua; bad input fails in one line.
. "$(dirname "$0")/lib.sh"

RING=(--no-huge --stats-interval 0 --vdev net_ring0)
num() { printf '%s\n' "$OUT" | awk -v k="$1" -v c="$2" '$1 == k { v = $c } END { print v }'; }  # last row: the table

echo "# surge scenarios lists the built-in ones"
run_surge 20 scenarios
check "scenarios exits 0" 0 "$RC"
for s in rfc2544 load-latency flood qos replay; do check_match "lists $s" "^$s +[A-Za-z]" "$OUT"; done

echo "# surge run rfc2544 --help: its options, without starting DPDK"
run_surge 20 run rfc2544 --help
check "help exits 0" 0 "$RC"
check_match "help names --sizes and its default" "--sizes .*64,128,256,512,1024,1280,1518" "$OUT"
check_nomatch "no EAL start-up for --help" "EAL" "$ERR"

echo "# rfc2544 on the loopback: every test, two sizes"
run_surge 120 run "${RING[@]}" rfc2544 --sizes 64,1518 --max-rate 20kpps --trial 0.3 --settle 0.05 \
  --latency-trial 0.3 --loss-step 50 --b2b-max 3000 --b2b-trials 3
check "rfc2544 exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
for size in 64 1518; do
  check_match "$size B: the first trial, at the maximum, loses nothing" \
    "^ +$size B  throughput trial  1  offered 20 kpps .* loss 0.000 %" "$OUT"
  check_nomatch "$size B: no second throughput trial (nothing to search)" "^ +$size B  throughput trial  2" "$OUT"
  t=$(num "$size" 2)
  # T is what that trial really sent: near 20 kpps on an idle machine, less
  # when the sender was preempted (measured, so not checked tightly here)
  check_true "$size B: throughput $t pps was measured" "T = $t" lt 0 "${t:-0}"
  check_true "$size B: throughput $t pps is not above the offer" "T = $t" lt "${t:-1e9}" 20000.5
  check "$size B: frame loss at 100 % is 0" 0 "$(num "$size" 10)"
  check "$size B: back-to-back: the longest burst (3000) arrives whole" 3000 "$(num "$size" 11)"
  check_match "$size B: latency probes all back" "^ +$size B  latency at .* probes [0-9]+ lost 0 dup 0 reordered 0" "$OUT"
  check_match "$size B: frame loss trials at 100 and 50 %" "^ +$size B  frame loss at 10 kpps: 0.000 %" "$OUT"
done
check "port 0 summary: RX = TX" "$(summary_count "$OUT" 0 TX)" "$(summary_count "$OUT" 0 RX)"
check_pools "rfc2544"

echo "# load-latency: two rates, no loss, latency per rate"
run_surge 60 run "${RING[@]}" load-latency --rates 5kpps,10kpps --trial 0.3 --settle 0.05 --size 128
check "load-latency exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
for r in 5000 10000; do
  row=$(printf '%s\n' "$OUT" | awk -v r="$r" '$1 == r')
  check_true "$r pps: sent = received, loss 0, latency columns filled" "$row" \
    awk -v l="$row" 'BEGIN { split(l, a); exit !(a[3] > 0 && a[3] == a[4] && a[5] == 0 && a[7] > 0 && a[10] >= a[6]) }'
done
check_pools "load-latency"

echo "# VLAN-tagged and IPv6 test traffic: views find the headers behind the tag / IPv6"
run_surge 60 run "${RING[@]}" load-latency --vlan 100 --size 68 --rates 5kpps --trial 0.2 --settle 0.05
check "VLAN load-latency exits 0" 0 "$RC"
check_match "VLAN: every frame and probe back" "^  offered 5 kpps  sent ([0-9]+)  received \1  loss 0.000 %  probes [1-9][0-9]* lost 0" "$OUT"
run_surge 60 run "${RING[@]}" load-latency --src 2001:db8::2 --dst 2001:db8:1::2 --size 84 --rates 5kpps \
  --trial 0.2 --settle 0.05
check "IPv6 load-latency exits 0" 0 "$RC"
check_match "IPv6: every frame and probe back" "^  offered 5 kpps  sent ([0-9]+)  received \1  loss 0.000 %  probes [1-9][0-9]* lost 0" "$OUT"

echo "# flood: IMIX, 64 flows per size, as fast as surge can"
run_surge 60 run "${RING[@]}" flood --sizes imix --flows 64 --trial 0.3 --settle 0.05
check "flood exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
s64=$(num 64 2) s570=$(num 570 2) s1518=$(num 1518 2)
check "flood: every frame back" "$(num all 2)" "$(num all 3)"
check "flood: no reordering on a ring" 0 "$(num all 5)"
check_true "IMIX shares 7:4:1 (sent $s64 : $s570 : $s1518)" "shares" awk -v a="${s64:-0}" -v b="${s570:-0}" \
  -v c="${s1518:-1}" 'BEGIN { exit !(a / c > 6.5 && a / c < 7.5 && b / c > 3.5 && b / c < 4.5) }'
check "flood summary: RX = TX" "$(summary_count "$OUT" 0 TX)" "$(summary_count "$OUT" 0 RX)"
check_pools "flood"
run_surge 60 run -q "${RING[@]}" flood --sizes 64 --trial 0.2 --settle 0.05
check "flood -q: exits 0" 0 "$RC"
check_nomatch "flood -q: no progress or per-trial lines" '^(progress:|  sent |flood: tx port)' "$OUT$ERR"
check_match "flood -q: the result table stays" '^ +all +[0-9]+ +[0-9]+ ' "$OUT"

echo "# qos: two classes with their own rates and marks"
run_surge 60 run "${RING[@]}" qos --classes ef:46:5kpps,be:0:15kpps --trial 0.4 --settle 0.05
check "qos exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
ef=$(num ef 5) be=$(num be 5)
check_true "qos: class rates 1:3 (sent $ef : $be)" "ratio" awk -v a="${ef:-0}" -v b="${be:-0}" \
  'BEGIN { exit !(a > 0 && b / a > 2.8 && b / a < 3.2) }'
check "qos: ef all back" "$ef" "$(num ef 6)"
check "qos: be all back" "$be" "$(num be 6)"
check_match "qos: per-class latency" "^ +ef +dscp 46 .* probes [1-9][0-9]* lost 0" "$OUT"
check_pools "qos"

echo "# replay: a pcap of 200 frames, 1 ms apart, twice, at its own timing"
python3 - "$TMP/in.pcap" <<'EOF'
import struct, sys
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(200):
        size = 60 + (i % 5) * 100
        frame = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + bytes(size - 14)
        t = i * 1000
        f.write(struct.pack("<IIII", t // 1000000, t % 1000000, size, size) + frame)
EOF
run_surge 60 run "${RING[@]}" replay --file "$TMP/in.pcap" --loop 2 --settle 0.05
check "replay exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
row=$(printf '%s\n' "$OUT" | grep -E "in.pcap +2 +")
read -r _ _ sent recv _ sbytes rbytes secs <<<"$row"
check "replay: sent 400" 400 "$sent"
check "replay: 400 came back" 400 "$recv"
check "replay: bytes back = bytes sent" "$sbytes" "$rbytes"
check_true "replay: original timing, 2 x 0.2 s (took $secs s)" "$row" awk -v s="${secs:-0}" 'BEGIN { exit !(s > 0.3 && s < 1.5) }'
check_pools "replay"
# the other timings, one pass each: every frame back, the pass as long as
# the timing says (0.2 s of file time; loose bounds, the machine is shared)
for t in "--timing scale=0.5:0.3:1.2" "--timing scale=2:0.05:0.6" "--timing fast:0:0.1" "--rate 1kpps:0.15:0.8"; do
  IFS=: read -r opt lo hi <<<"$t"
  run_surge 60 run "${RING[@]}" replay --file "$TMP/in.pcap" --settle 0.05 $opt
  row=$(printf '%s\n' "$OUT" | grep -E "in.pcap +1 +")
  read -r _ _ sent recv _ sbytes rbytes secs <<<"$row"
  check "replay $opt: exit 0, 200 sent, 200 back" "0 200 200" "$RC ${sent:-?} ${recv:-?}"
  check_true "replay $opt: the pass took $lo..$hi s ($secs s)" "$row" \
    awk -v s="${secs:-x}" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(s != "x" && s + 0 >= lo && s + 0 < hi) }'
done

echo "# a user scenario from SURGE_PATH and from --path"
doc=$(awk '/<!-- sweep.lua begin -->/ { on = 1; next } /<!-- sweep.lua end -->/ { on = 0 } on && !/^```/' \
  "$SURGE_SRC/docs/scenarios.md")
check "docs/scenarios.md shows examples/scenarios/sweep.lua as it is" "$(cat "$SURGE_SRC/examples/scenarios/sweep.lua")" "$doc"
SURGE_PATH=$SURGE_SRC/examples/scenarios run_surge 20 scenarios
check_match "SURGE_PATH: sweep listed with its folder" "^sweep +one trial per frame size.*examples/scenarios" "$OUT"
SURGE_PATH=$SURGE_SRC/examples/scenarios run_surge 60 run "${RING[@]}" sweep --sizes 64,256 --rate 5kpps --trial 0.2
check "sweep by name from SURGE_PATH exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
check_match "sweep: 256 B row, nothing lost" "^ +256 +([0-9]+) +\1 +0$" "$OUT"
run_surge 60 run --path "$SURGE_SRC/examples/scenarios" "${RING[@]}" sweep --sizes 128 --rate 5kpps --trial 0.2
check "sweep by name from --path exits 0" 0 "$RC"
check_match "sweep: 128 B row" "^ +128 +([0-9]+) +\1 +0$" "$OUT"

echo "# modules next to a script, and from SURGE_PATH, for master and its tasks"
mkdir -p "$TMP/lib" "$TMP/proj"
cat >"$TMP/proj/nearby.lua" <<'LUA'
return { word = function() return "nearby" end }
LUA
cat >"$TMP/lib/faraway.lua" <<'LUA'
return { word = function() return "faraway" end }
LUA
cat >"$TMP/proj/main.lua" <<'LUA'
local surge = require "surge"
local nearby, faraway = require "nearby", require "faraway"
function words() return require("nearby").word() .. "+" .. require("faraway").word() end
function master()
  local id = surge.launch("words")
  print("master: " .. nearby.word() .. "+" .. faraway.word() .. ", task: " .. surge.wait(id))
end
LUA
cd /
SURGE_PATH=$TMP/lib run_surge 30 run --no-huge --lcores '(0-1)@(0-1)' "$TMP/proj/main.lua"
cd - >/dev/null || exit 1
check "modules: exit 0 (run from another folder)" 0 "$RC"
check_match "modules: the script's neighbour and SURGE_PATH's, in master and in a task" \
  '^master: nearby\+faraway, task: nearby\+faraway$' "$OUT"

echo "# a script runs two scenarios from Lua and compares them"
run_surge 60 run "${RING[@]}" "$SURGE_SRC/examples/scenarios/compare.lua" --max-rate 20kpps
check "compare.lua exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
check_match "compare: both results in one line" "^compare: throughput 64 B [0-9]+ pps, 1518 B [0-9]+ pps; at [0-9]+ pps: loss 0.000 %" "$OUT"
check_pools "compare.lua"

echo "# results from Lua are plain data, for JSON/CSV writers"
run_surge 60 run "${RING[@]}" "$E2E_DIR/scripts/scn_results.lua"
check "scn_results.lua exits 0" 0 "$RC"
[ "$RC" = 0 ] || show_run 30
for s in rfc2544 load_latency flood qos; do check_match "$s: plain data" "^results: $s plain data" "$OUT"; done
check_pools "four scenarios in one run (pools reused)"

echo "# bad input"
run_surge 20 run "${RING[@]}" rfc2544x
check "unknown scenario: exit 2" 2 "$RC"
check_match "unknown scenario: one line naming the known ones" \
  "^surge: no script or scenario named 'rfc2544x' \(scenarios: rfc2544, load-latency, flood, qos, replay" "$ERR"
check_nomatch "unknown scenario: fails before EAL starts" "EAL" "$ERR"
run_surge 20 run "${RING[@]}" rfc2544 --tx 5
check_user_error "nonexistent port"
check_match "nonexistent port: named with its option" "^rfc2544: --tx: port 5 does not exist \(1 port" "$ERR"
run_surge 20 run "${RING[@]}" rfc2544 --sizes 64,9000
check_user_error "frame size above the MTU"
check_match "above the MTU: names the size and the limit" "^rfc2544: --sizes: 9000 is above the MTU: port 0 takes frames up to 1518 bytes" "$ERR"
run_surge 20 run "${RING[@]}" rfc2544 --sizes 40
check_user_error "frame size below the headers"
check_match "below the headers: named" "^rfc2544: --sizes: 40 is below 64" "$ERR"
run_surge 20 run "${RING[@]}" rfc2544 --bogus 1
check_user_error "unknown option"
check_match "unknown option: named" "rfc2544: unknown option '--bogus'" "$ERR"
run_surge 20 run "${RING[@]}" qos --classes ef:99:1kpps,be:0:1kpps
check_user_error "bad qos class"
check_match "bad qos class: named" "qos: --classes: 'ef:99:1kpps' is not NAME:DSCP:RATE" "$ERR"
run_surge 20 run "${RING[@]}" rfc2544 --src 10.0.0.300
check_user_error "bad address"
check_match "bad address: one line naming the option" "^rfc2544: --src: '10.0.0.300' is not an IPv4 address$" "$ERR"
run_surge 20 run "${RING[@]}" replay
check_user_error "replay without a file"

echo "# every scenario option has a kind and a range, checked when parsed: exit 2, one line, no traffic"
while IFS='|' read -r scn opts msg; do
  # shellcheck disable=SC2086  # opts: several words
  run_surge 20 run -q "${RING[@]}" "$scn" $opts
  check "$scn $opts: exit 2, one line naming the option" "2 $msg" "$RC $ERR"
  check "$scn $opts: no traffic, no output" "" "$OUT"
done <<'EOF'
flood|--flows 0|flood: --flows: expected an integer in 1..60000, got '0'
flood|--flows -5|flood: --flows: expected an integer in 1..60000, got '-5'
flood|--flows 1e8|flood: --flows: expected an integer in 1..60000, got '1e8'
flood|--flows 1.5|flood: --flows: expected an integer in 1..60000, got '1.5'
flood|--vlan 5000 --sizes 128|flood: --vlan: expected an integer in 0..4095, got '5000'
flood|--vlan 5000|flood: --vlan: expected an integer in 0..4095, got '5000'
flood|--trial -1|flood: --trial: expected a number > 0, got '-1'
flood|--trial 0|flood: --trial: expected a number > 0, got '0'
flood|--trial inf|flood: --trial: expected a number > 0, got 'inf'
flood|--settle -1|flood: --settle: expected a number in 0..3600, got '-1'
flood|--resolve-timeout -1|flood: --resolve-timeout: expected a number in 0..3600, got '-1'
flood|--link-timeout 1e9|flood: --link-timeout: expected a number in 0..3600, got '1e9'
flood|--link-timeout nan|flood: --link-timeout: expected a number in 0..3600, got 'nan'
flood|--trial|flood: --trial needs a value
rfc2544|--trial 0|rfc2544: --trial: expected a number > 0, got '0'
rfc2544|--settle=-0.5|rfc2544: --settle: expected a number in 0..3600, got '-0.5'
rfc2544|--tolerance 101|rfc2544: --tolerance: expected a number in 0..100, got '101'
rfc2544|--resolution -1|rfc2544: --resolution: expected a number in 0..100, got '-1'
rfc2544|--max-trials 0|rfc2544: --max-trials: expected an integer in 1..1000, got '0'
rfc2544|--flows 60001|rfc2544: --flows: expected an integer in 1..60000, got '60001'
rfc2544|--latency-trial 0|rfc2544: --latency-trial: expected a number > 0, got '0'
rfc2544|--probes 0|rfc2544: --probes: expected a number > 0, got '0'
rfc2544|--loss-step 0|rfc2544: --loss-step: expected a number in 1..100, got '0'
rfc2544|--b2b-max 0|rfc2544: --b2b-max: expected an integer in 1..1000000000, got '0'
rfc2544|--b2b-trials -3|rfc2544: --b2b-trials: expected an integer in 1..1000, got '-3'
rfc2544|--vlan -1|rfc2544: --vlan: expected an integer in 0..4095, got '-1'
load-latency|--size -5|load-latency: --size: expected an integer in 1..65535, got '-5'
load-latency|--trial -1|load-latency: --trial: expected a number > 0, got '-1'
load-latency|--settle -1|load-latency: --settle: expected a number in 0..3600, got '-1'
load-latency|--probes 0|load-latency: --probes: expected a number > 0, got '0'
load-latency|--flows 0|load-latency: --flows: expected an integer in 1..60000, got '0'
qos|--size 0|qos: --size: expected an integer in 1..65535, got '0'
qos|--flows 0|qos: --flows: expected an integer in 1..60000, got '0'
qos|--trial 0|qos: --trial: expected a number > 0, got '0'
qos|--settle -1|qos: --settle: expected a number in 0..3600, got '-1'
qos|--probes -1|qos: --probes: expected a number > 0, got '-1'
replay|--loop 0|replay: --loop: expected an integer in 1..4294967295, got '0'
replay|--settle -1|replay: --settle: expected a number in 0..3600, got '-1'
rfc2544|--sizes 64 --max-rate 200% --tests throughput --trial 0.1|rfc2544: --max-rate: '200%' is more than 100 % of line rate (14880952 pps for 64-byte frames)
rfc2544|--sizes 64 --max-rate 11gbit|rfc2544: --max-rate: '11gbit' is more than 100 % of line rate (14880952 pps for 64-byte frames)
rfc2544|--sizes 64 --trial 0.1 --max-rate 0|rfc2544: --max-rate: '0' is not a load: give a rate above 0
rfc2544|--sizes 64 --max-rate 10kpps --min-rate 20kpps|rfc2544: --min-rate: 20kpps (20000 pps at 64 bytes) is not below --max-rate 10kpps (10000 pps)
rfc2544|--sizes 64 --max-rate 10kpps --min-rate 10kpps|rfc2544: --min-rate: 10kpps (10000 pps at 64 bytes) is not below --max-rate 10kpps (10000 pps)
rfc2544|--max-rate fast|rfc2544: --max-rate: 'fast' is not a rate (1mpps, 250kpps, 1gbit, 50%)
rfc2544|--min-rate -1|rfc2544: --min-rate: '-1' is not a rate (1mpps, 250kpps, 1gbit, 50%)
rfc2544|--tests=|rfc2544: --tests: no test given (throughput, latency, loss, b2b)
rfc2544|--tests ,|rfc2544: --tests: no test given (throughput, latency, loss, b2b)
rfc2544|--tests speed|rfc2544: --tests: unknown test 'speed' (throughput, latency, loss, b2b)
rfc2544|--sizes 64,x|rfc2544: --sizes: 'x' is not a frame size in bytes
rfc2544|--sizes 64.5|rfc2544: --sizes: 64.5 is not a frame size in bytes
rfc2544|--sizes=|rfc2544: --sizes: no frame sizes given
rfc2544|--rx x|rfc2544: --rx: expected a port number, got 'x'
rfc2544|--tx 5|rfc2544: --tx: port 5 does not exist (1 port: give devices with --vdev or --pci)
load-latency|--rates 200% --trial 0.2|load-latency: --rates: '200%' is more than 100 % of line rate (14880952 pps for 64-byte frames)
load-latency|--rates 10kpps,20mpps|load-latency: --rates: '20mpps' is more than 100 % of line rate (14880952 pps for 64-byte frames)
load-latency|--rates 0 --trial 0.2|load-latency: --rates: '0' is not a load: give a rate above 0
load-latency|--rates=|load-latency: --rates: no rate given
load-latency|--size 9000|load-latency: --size: 9000 is above the MTU: port 0 takes frames up to 1518 bytes (MTU 1500)
flood|--sizes imix --rate 500% --trial 0.3|flood: --rate: '500%' is more than 100 % of line rate (3343736 pps for 353.833-byte frames)
flood|--rate 0|flood: --rate: '0' is not a load: give a rate above 0
flood|--rate 1.2.3|flood: --rate: '1.2.3' is not a rate (1mpps, 250kpps, 1gbit, 50%)
flood|--sizes 40|flood: --sizes: 40 is below 64, the smallest frame that holds the headers, a sequence number and a latency probe
qos|--classes ef:46:10mpps,be:0:10mpps|qos: --classes: '10mpps' is more than 100 % of line rate (8445946 pps for 128-byte frames)
qos|--classes ef:46:5mpps,be:0:5mpps|qos: --classes: the classes add up to 10000000 pps, more than line rate (8445946 pps for 128-byte frames)
qos|--classes ef:46:0,be:0:1kpps|qos: --classes: '0' is not a load: give a rate above 0
qos|--classes ef:99:1kpps,be:0:1kpps|qos: --classes: 'ef:99:1kpps' is not NAME:DSCP:RATE with DSCP 0..63
qos|--classes ef:46:1kpps|qos: --classes: give two or more classes (NAME:DSCP:RATE,...)
replay|--file x.pcap --rate 0|replay: --rate: '0' is not a load: give a rate above 0
replay|--file x.pcap --rate 50%|replay: --rate: '50%': the port reports no link speed; give pps (e.g. 1mpps)
replay||replay: --file: give a pcap file to replay
flood|--flows 30000 --sizes imix|flood: --flows: 30000 flows x 3 sizes is 90000 flows, more than the 60000 a trial counts
EOF
# (flows add up over sizes and classes: a trial counts 60000, the last case)
SURGE_PATH=$SURGE_SRC/examples/scenarios run_surge 20 run -q "${RING[@]}" sweep --trial 0
check "sweep --trial 0: exit 2, one line" "2 sweep: --trial: expected a number > 0, got '0'" "$RC $ERR"
SURGE_PATH=$SURGE_SRC/examples/scenarios run_surge 20 run -q "${RING[@]}" sweep --rate 101%
check "sweep --rate 101%: exit 2, one line (a user scenario refuses like a built-in one)" \
  "2 sweep: --rate: '101%' is more than 100 % of line rate (14880952 pps for 64-byte frames)" "$RC $ERR"
check "sweep --rate 101%: no traffic, no output" "" "$OUT"
echo "# scenarios run from Lua check the same kinds, at the caller's line"
run_surge 20 run -q "${RING[@]}" "$E2E_DIR/scripts/scn_bad_opts.lua"
check "run{...} with bad options: exit 1" 1 "$RC"
while IFS= read -r msg; do
  check_match "from Lua: $msg" "^bad: ([0-9]+) .*scn_bad_opts\.lua:\1: $msg\$" "$OUT"
done <<'EOF'
rfc2544: --trial: expected a number > 0, got -1
rfc2544: --tolerance: expected a number in 0\.\.100, got 101
rfc2544: --confirm: expected a boolean, got "yes"
rfc2544: unknown option 'bogus' \(tx, rx, .*\)
flood: --flows: expected an integer in 1\.\.60000, got 0
flood: --vlan: expected an integer in 0\.\.4095, got 5000
flood: --link-timeout: expected a number in 0\.\.3600, got 1000000000
flood: --flows: 30000 flows x 3 sizes is 90000 flows, more than the 60000 a trial counts
load-latency: --probes: expected a number > 0, got 0
qos: --settle: expected a number in 0\.\.3600, got -1
replay: --loop: expected an integer in 1\.\.4294967295, got 0
load-latency: run\(opts\): expected a table of options \(or nil\), got "x"
rfc2544: --max-rate: '200%' is more than 100 % of line rate \(14880952 pps for 64-byte frames\)
rfc2544: --max-rate: 0 is not a load: give a rate above 0
rfc2544: --min-rate: 20kpps \(20000 pps at 64 bytes\) is not below --max-rate 10kpps \(10000 pps\)
rfc2544: --tests: no test given \(throughput, latency, loss, b2b\)
rfc2544: --sizes: 'x' is not a frame size in bytes
rfc2544: --tx: port 5 does not exist \(1 port: give devices with --vdev or --pci\)
load-latency: --rates: '0' is not a load: give a rate above 0
load-latency: --rates: '200%' is more than 100 % of line rate \(14880952 pps for 64-byte frames\)
flood: --rate: '500%' is more than 100 % of line rate \(3343736 pps for 353\.833-byte frames\)
flood: --sizes: 9000 is above the MTU: port 0 takes frames up to 1518 bytes \(MTU 1500\)
qos: --classes: '10mpps' is more than 100 % of line rate \(8445946 pps for 128-byte frames\)
EOF
check_nomatch "from Lua: nothing accepted" "^bad: accepted" "$OUT"
check_match "from Lua, uncaught: one first line at the call" \
  "^[^ ]*scn_bad_opts\.lua:37: flood: --trial: expected a number > 0, got 0$" "$(printf '%s\n' "$ERR" | head -1)"
# a memif server nobody connects to stays link-down: the wait for link up
# ends at --link-timeout with one line naming the port
run_surge 20 run --no-huge --stats-interval 0 --vdev "net_memif0,role=server,socket=$TMP/nobody.sock,socket-abstract=no" \
  flood --sizes 64 --trial 0.2 --link-timeout 0.5
check_user_error "a port whose link never comes up"
check_match "link down: one line naming the port and the wait" '^port 0: link still down after 500 ms$' "$ERR"
check_true "link down: ends soon after the timeout ($SECS s)" "took $SECS s" lt "$SECS" 5
run_surge 30 run "${RING[@]}" --duration 1 rfc2544 --sizes 64 --max-rate 5kpps --trial 2
# a stop is no failure (a script cut by --duration exits 0 too): the scenario
# reports what it measured so far, marked partial
check "a run cut by --duration ends the scenario: exit 0" 0 "$RC"
check_match "cut run: says so, and that its results are partial" \
  "^rfc2544: the run was stopped during throughput trial 1 at 64 bytes: the results so far are partial$" "$ERR"
check_pools "cut run"
# cut in the learning trial (0.2 s + 0.2 s settle), before any measurement
run_surge 30 run "${RING[@]}" --duration 0.3 rfc2544 --sizes 64 --max-rate 5kpps --trial 2
check "cut before measuring: exit 0" 0 "$RC"
check_match "cut before measuring: says nothing was measured" \
  "^rfc2544: the run was stopped during the learning trial: nothing was measured yet$" "$ERR"
check_pools "cut before measuring"
# issue 31 item 9: a cut mlrsearch's --output is valid against the published
# schema (its rows a list, empty, not {}); a scenario a script calls from Lua
# and --duration cuts ends the run as the same cut on the command line does:
# exit 0, its results so far recorded, marked partial
schema_check() {  # schema_check DESCRIPTION FILE
  if ! python3 -c 'import jsonschema' 2>/dev/null; then echo "skip $1: python3-jsonschema not installed"; return; fi
  check "$1" "" "$(python3 -c "import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))" "$2" \
    "$SURGE_SRC/docs/results.schema.json" 2>&1 | tail -3)"
}
run_surge 30 run "${RING[@]}" --duration 1 --output "$TMP/cut-mlr.json" mlrsearch --max-rate 5kpps
check "cut mlrsearch: exit 0" 0 "$RC"
check_match "cut mlrsearch: says its results are partial" \
  "^mlrsearch: the run was stopped during MLRsearch trial 1 at 64 bytes: the results so far are partial$" "$ERR"
check "cut mlrsearch: rows and trials are lists, partial" "list list True" "$(python3 -c "import json, sys
m = json.load(open(sys.argv[1]))['scenarios']['mlrsearch']
print(type(m['rows']).__name__, type(m['trials']).__name__, m['partial'])" "$TMP/cut-mlr.json")"
schema_check "cut mlrsearch: --output valid against the schema" "$TMP/cut-mlr.json"
cat >"$TMP/cut_from_lua.lua" <<'LUA'
function master()
  local r = require("surge.scenario.rfc2544").run{ tx = 0, sizes = "64", max_rate = "5kpps", trial = 2 }
  print("not reached", r)
end
LUA
run_surge 30 run "${RING[@]}" --duration 1 --output "$TMP/cut-lua.json" "$TMP/cut_from_lua.lua"
check "cut from Lua: exit 0, as on the command line" 0 "$RC"
check_match "cut from Lua: says its results are partial" \
  "^rfc2544: the run was stopped during throughput trial 1 at 64 bytes: the results so far are partial$" "$ERR"
check_nomatch "cut from Lua: the script's next line did not run" "not reached" "$OUT"
check "cut from Lua: recorded, partial, status ok" "ok 0 True" "$(python3 -c "import json, sys
r = json.load(open(sys.argv[1]))
print(r['status'], r['exit_code'], r['scenarios']['rfc2544']['partial'])" "$TMP/cut-lua.json")"
schema_check "cut from Lua: --output valid against the schema" "$TMP/cut-lua.json"
finish
