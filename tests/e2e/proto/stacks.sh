# stacks.sh - the tshark tests' harness (sourced after lib.sh, EMIT set to
# the Lua script that writes a stack's first N frames): emit a stack into a
# pcap, read fields back with tshark, compare each frame with an expectation.

N=4
TS=(-o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE
    -o tcp.analyze_sequence_numbers:FALSE -d "udp.port==4789,vxlan")
# ICMP and ICMPv6 checksums are always verified (tshark 4.0 has no preference
# for them); UDP over IPv6 follows udp.check_checksum.
GOOD=()   # the captures that decoded as expected, for one malformed check

# emit STACK PCAP [--corrupt]: surge sends N frames of STACK into PCAP.
emit() {
  local out rc
  out=$(timeout -k 5 30 "$SURGE" run --no-huge -q --vdev "net_pcap0,tx_pcap=$2" "$EMIT" --stack "$1" \
    --count "$N" "${@:3}" 2>&1)
  rc=$?
  check "$1${3:+ $3}: surge exits 0" 0 "$rc"
  [ "$rc" = 0 ] || printf '%s\n' "$out" | tail -5
}

# fields PCAP -e F1 -e F2 ...: one line per frame, fields separated by |
fields() { tshark_q -r "$1" "${TS[@]}" -T fields -E separator='|' "${@:2}"; }

# stack NAME EXPECT_FN FIELD...: emit, decode, compare each frame with
# "EXPECT_FN i" (i = 0..N-1); the capture joins GOOD.
stack() {
  local name=$1 fn=$2 pcap lines i f=()
  shift 2
  for i in "$@"; do f+=(-e "$i"); done
  pcap=$TMP/$(printf '%s' "$name" | tr / _).pcap
  echo "# $name"
  emit "$name" "$pcap"
  lines=$(fields "$pcap" "${f[@]}")
  check "$name: $N frames" "$N" "$(printf '%s\n' "$lines" | grep -c .)"
  for ((i = 0; i < N; i++)); do
    check "$name: frame $i ($*)" "$($fn "$i")" "$(printf '%s\n' "$lines" | sed -n "$((i + 1))p")"
  done
  GOOD+=("$pcap")
}
