#!/bin/bash
# test_pcap_replay.sh - examples/replay.lua replays a capture made by
# text2pcap (ARP, IPv4 UDP/TCP/ICMP, IPv6 ICMPv6, a VLAN tag; 42..1514 bytes;
# gaps of 5..20 ms) into net_pcap, and tshark compares what came out:
#   - fast: the same frames, byte for byte, in the same order (pcap and pcapng input);
#   - --loop 3: three copies in order;
#   - original timing: the output's gaps (frame.time_delta) within 1 % of the
#     input's on average, and the median single gap too (the first packet of
#     a pass has no gap to keep);
#   - scale=2: the gaps half as long (2 %); --rate 200pps: 5 ms apart;
#   - tasks: a reader handed to a tx task replays twice into net_ring0, an rx
#     task writes what it receives to a writer it never closes: the same
#     bytes, stamped now in nanoseconds, flushed at the end of the run;
#   - a truncated capture (head -c) and a garbage file: one line on stderr
#     naming the file (and the record), exit status 1, no crash.
. "$(dirname "$0")/lib.sh"
need_cmd tshark
need_cmd text2pcap
REPLAY=$EXAMPLES/replay.lua

# frame_dump TIME HEXHEADER LENGTH SEED: one frame as text2pcap reads it (od
# style), the header then a payload pattern up to LENGTH bytes.
frame_dump() {
  echo "$1"
  awk -v h="$2" -v len="$3" -v seed="$4" 'BEGIN {
    n = 0
    for (i = 1; i < length(h); i += 2) b[n++] = substr(h, i, 2)
    for (; n < len; n++) b[n] = sprintf("%02x", (n * 7 + seed * 13) % 256)
    for (o = 0; o < len; o += 16) {
      line = sprintf("%06x", o)
      for (j = o; j < o + 16 && j < len; j++) line = line " " b[j]
      print line
    }
  }'
}
ETH=0200000000020200000000010800          # unicast, IPv4
{
  # ARP who-has 10.0.0.2 (broadcast)
  frame_dump 10:00:00.000000 ffffffffffff020000000001080600010800060400010200000000010a0000010000000000000a000002 42 1
  # IPv4/UDP to port 53
  frame_dump 10:00:00.005000 ${ETH}4500003c1c4600004011000a0a0000010a000002d43100350028000012340100000100000000000003777777 74 2
  # IPv4/TCP SYN to port 80
  frame_dump 10:00:00.017000 ${ETH}4500003c00004000400600000a0000010a000002c35000500000000100000000a002faf000000000020405b4 74 3
  # IPv6/ICMPv6 echo request, 118 bytes
  frame_dump 10:00:00.025000 33333333000102000000000186dd6000000000403a402001db8000000000000000000000000012001db800000000000000000000000000028000abcd00010001 118 4
  # 802.1Q VLAN 100, IPv4/UDP, 200 bytes
  frame_dump 10:00:00.045000 02000000000202000000000181000064080045000000b600004000401100000a0000010a000002138813890000a2000000 200 5
  # IPv4/UDP, full-size 1514 bytes
  frame_dump 10:00:00.051000 ${ETH}450005dc000040004011000a0a0000010a000002138813890005c80000 1514 6
  # IPv4/ICMP echo, 98 bytes
  frame_dump 10:00:00.066000 ${ETH}45000054abcd40004001000a0a0000010a0000020800f7ff00010001 98 7
} >"$TMP/in.txt"
# -F pcap: classic pcap (microseconds); the default is pcapng
text2pcap -F pcap -t "%H:%M:%S.%f" "$TMP/in.txt" "$TMP/in.pcap" >/dev/null 2>&1 || skip "text2pcap failed"
text2pcap -t "%H:%M:%S.%f" "$TMP/in.txt" "$TMP/in.pcapng" >/dev/null 2>&1 || skip "text2pcap failed"
NREC=7

# lens FILE: frame lengths, space separated; deltas FILE: frame.time_delta, one a line
lens() { tshark_q -r "$1" -T fields -e frame.len | tr '\n' ' ' | sed 's/ $//'; }
deltas() { tshark_q -r "$1" -T fields -e frame.time_delta; }
IN_HEX=$(pcap_hex "$TMP/in.pcap")
IN_LENS=$(lens "$TMP/in.pcap")
check "input: text2pcap made $NREC frames of varied sizes" "42 74 74 118 200 1514 98" "$IN_LENS"
check_match "input: varied protocols" 'arp.*udp.*tcp.*icmpv6.*vlan.*icmp' \
  "$(tshark_q -r "$TMP/in.pcap" -T fields -e frame.protocols | tr '\n' ' ')"

# replay NAME OUT ARGS...: replays into net_pcap writing OUT
replay() {
  local name=$1 out=$2
  shift 2
  rm -f "$out"
  run_surge 60 run --no-huge --stats-interval 0 --vdev "net_pcap0,tx_pcap=$out" "$REPLAY" --port net_pcap0 "$@"
  check "$name: exit 0" 0 "$RC"
  [ "$RC" = 0 ] || show_run
  check_no_crash "$name"
  check_pools "$name"
}

echo "# fast, pcap input: the same bytes in the same order"
replay "fast" "$TMP/fast.pcap" --file "$TMP/in.pcap" --timing fast
check "fast: $NREC frames, same lengths" "$IN_LENS" "$(lens "$TMP/fast.pcap")"
check "fast: identical bytes, same order" "$IN_HEX" "$(pcap_hex "$TMP/fast.pcap")"
check_match "fast: replay says what it sent" "replay: sent $NREC packets" "$OUT"

echo "# fast, pcapng input"
replay "pcapng" "$TMP/ng.pcap" --file "$TMP/in.pcapng" --timing fast
check "pcapng: identical bytes, same order" "$IN_HEX" "$(pcap_hex "$TMP/ng.pcap")"

echo "# --loop 3"
replay "loop 3" "$TMP/loop.pcap" --file "$TMP/in.pcap" --timing fast --loop 3
check "loop 3: three copies, in order" "$(printf '%s\n%s\n%s' "$IN_HEX" "$IN_HEX" "$IN_HEX")" \
  "$(pcap_hex "$TMP/loop.pcap")"

# gap_stats IN OUT SCALE PASSES: "MEAN MEDIAN MAXERR" over the output's gaps
# that the input has (not the first packet of a pass: a pass starts right
# away), each output gap times SCALE against the input's: MEAN is the error of
# the mean gap, MEDIAN and MAXERR the median and largest error of single gaps.
gap_stats() {
  local p in
  in=$(deltas "$1")
  for ((p = 0; p < $4; p++)); do printf '%s\n' "$in"; done >"$TMP/in.deltas"
  paste "$TMP/in.deltas" <(deltas "$2") | awk -v s="$3" -v n="$NREC" '
    (NR - 1) % n != 0 && $1 > 0 {
      si += $1; so += $2 * s; d = $2 * s - $1; e[++k] = (d < 0 ? -d : d) / $1
      if (e[k] > mx) mx = e[k]
    }
    END {
      if (k == 0) { print "1 1 1"; exit }
      for (i = 2; i <= k; i++) for (j = i; j > 1 && e[j - 1] > e[j]; j--) { t = e[j]; e[j] = e[j - 1]; e[j - 1] = t }
      m = k % 2 ? e[(k + 1) / 2] : (e[k / 2] + e[k / 2 + 1]) / 2
      d = so / si - 1; printf "%.4f %.4f %.4f\n", (d < 0 ? -d : d), m, mx
    }'
}
# timed NAME OUT SCALE PASSES TOL ARGS...: replays with the file's timing and
# checks the mean gap and the median single gap are within TOL of the input's
# (scaled). A loaded host can preempt the sender for milliseconds, so up to
# three tries; the last one's figures are reported.
timed() {
  local name=$1 out=$2 scale=$3 passes=$4 tol=$5 try st
  shift 5
  for try in 1 2 3; do
    replay "$name (try $try)" "$out" --file "$TMP/in.pcap" --loop "$passes" "$@"
    st=$(gap_stats "$TMP/in.pcap" "$out" "$scale" "$passes")
    awk -v a="$(echo "$st" | cut -d' ' -f1)" -v m="$(echo "$st" | cut -d' ' -f2)" -v t="$tol" \
      'BEGIN { exit !(a < t && m < t) }' && break
    echo "     try $try: mean-gap error, median and largest gap error: $st (limit $tol)"
  done
  echo "     output gaps (s): $(deltas "$out" | head -$NREC | tail -n +2 | tr '\n' ' ')"
  check "$name: $passes copies, identical bytes" "$(for ((p = 0; p < passes; p++)); do printf '%s\n' "$IN_HEX"; done)" \
    "$(pcap_hex "$out")"
  check_true "$name: mean gap within $tol of the input's / $scale" "errors $st" \
    awk -v a="$(echo "$st" | cut -d' ' -f1)" -v t="$tol" 'BEGIN { exit !(a < t) }'
  check_true "$name: median single gap within $tol" "errors $st" \
    awk -v m="$(echo "$st" | cut -d' ' -f2)" -v t="$tol" 'BEGIN { exit !(m < t) }'
}
echo "# original timing, three passes"
echo "     input gaps (s): $(deltas "$TMP/in.pcap" | tail -n +2 | tr '\n' ' ')"
timed "original" "$TMP/orig.pcap" 1 3 0.01 --timing original
echo "# scale=2: the gaps half as long"
timed "scale=2" "$TMP/scaled.pcap" 2 2 0.02 --timing scale=2

echo "# --rate 200pps: even 5 ms gaps, whatever the file says"
replay "rate" "$TMP/rate.pcap" --file "$TMP/in.pcap" --rate 200pps --loop 2
check "rate: two copies" "$(printf '%s\n%s' "$IN_HEX" "$IN_HEX")" "$(pcap_hex "$TMP/rate.pcap")"
MEAN=$(deltas "$TMP/rate.pcap" | awk 'NR > 1 { s += $1; k++ } END { printf "%.6f\n", s / k }')
check_true "rate 200pps: mean gap 5 ms (within 2 %)" "mean gap $MEAN s" \
  awk -v m="$MEAN" 'BEGIN { exit !(m > 0.0049 && m < 0.0051) }'

echo "# tasks: one replays into net_ring0 (its own loopback), one writes what it receives"
cat >"$TMP/record.lua" <<'EOF'
local surge = require "surge"
local pcap = require "surge.pcap"
function configure(p) p:option("--in", "", "") p:option("--out", "", "") end
function master(args)
  local port = surge.port("net_ring0", { rxq = 1, txq = 1 })
  local r = pcap.reader(args["in"], { loop = 2, timing = "fast" })
  local w = pcap.writer(args.out, { nano = true })     -- handed to the task, never closed
  surge.launch("rx", port:rxq(0), w, 2 * r:count())
  surge.launch("tx", port:txq(0), r)
  local res = surge.wait()
  print(("record: rx wrote %d, tx sent %d"):format(res[1], res[2]))
end
function tx(q, r)
  local b = surge.pool{ size = 255, shared = true }:burst(4)
  local sent = 0
  while r:fill(b) > 0 do sent = sent + q:send(b) end
  return sent
end
function rx(q, w, want)
  local b = surge.pool{ size = 255, shared = true }:burst(32)
  local got = 0
  while got < want and surge.running() do
    if q:recv(b) > 0 then got = got + w:write(b) end
  end
  b:free()
  return got
end
EOF
run_surge 60 run --no-huge --stats-interval 0 --vdev net_ring0 --lcores '(0-2)@(0-1)' "$TMP/record.lua" \
  --in "$TMP/in.pcap" --out "$TMP/rec.pcap"
check "record: exit 0" 0 "$RC"
[ "$RC" = 0 ] || show_run
check_match "record: both tasks moved $((2 * NREC)) packets" "rx wrote $((2 * NREC)), tx sent $((2 * NREC))" "$OUT"
check_match "record: the writer left open is closed at the end" \
  "pcap file '$TMP/rec\\.pcap': $((2 * NREC)) packets written \\(closed at the end of the run\\)" "$OUT"
check_pools "record"
check "record: what came back, byte for byte" "$(printf '%s\n%s' "$IN_HEX" "$IN_HEX")" "$(pcap_hex "$TMP/rec.pcap")"
SEC=$(tshark_q -r "$TMP/rec.pcap" -T fields -e frame.time_epoch -c 1 | cut -d. -f1)
check_true "record: stamped with the receive time (now)" "first frame at $SEC, now $(date +%s)" \
  awk -v t="${SEC:-0}" -v now="$(date +%s)" 'BEGIN { exit !(t > now - 120 && t <= now + 1) }'
check "record: nanosecond file" "9" \
  "$(tshark_q -r "$TMP/rec.pcap" -T fields -e frame.time_epoch -c 1 | cut -d. -f2 | tr -d '\n' | wc -c)"

echo "# a truncated capture: one line naming the file and the record"
SIZE=$(stat -c %s "$TMP/in.pcap")
head -c $((SIZE - 50)) "$TMP/in.pcap" >"$TMP/cut.pcap"
run_surge 60 run --no-huge --stats-interval 0 --vdev "net_pcap0,tx_pcap=$TMP/none.pcap" "$REPLAY" \
  --port net_pcap0 --file "$TMP/cut.pcap"
check_user_error "truncated"
check "truncated: exactly one line on stderr" 1 "$(printf '%s\n' "$ERR" | grep -c .)"
check_match "truncated: names the file, the record and the problem" \
  "pcap file '$TMP/cut\\.pcap': record $NREC: .*truncated" "$ERR"
check_nomatch "truncated: no script position or traceback" 'replay\.lua:[0-9]+|traceback' "$ERR"
head -c $((24 + 16 + 20)) "$TMP/in.pcap" >"$TMP/cut1.pcap"
run_surge 60 run --no-huge --stats-interval 0 "$REPLAY" --file "$TMP/cut1.pcap"
check_user_error "cut in record 1"
check_match "cut in record 1: names it" "cut1\\.pcap': record 1: .*truncated" "$ERR"

echo "# a garbage file"
head -c 4000 /dev/urandom >"$TMP/junk.pcap"
run_surge 60 run --no-huge --stats-interval 0 "$REPLAY" --file "$TMP/junk.pcap"
check_user_error "garbage"
check "garbage: exactly one line on stderr" 1 "$(printf '%s\n' "$ERR" | grep -c .)"
check_match "garbage: names the file" "pcap file '$TMP/junk\\.pcap': " "$ERR"
finish
