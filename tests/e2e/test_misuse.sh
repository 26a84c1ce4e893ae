#!/bin/bash
# test_misuse.sh - API misuse, table-driven: every case is a tiny script (or
# script options) that must end with the expected exit status, never by a
# signal or a timeout, and whose first stderr line names the user's file:line
# (or the option) and says what was wrong. Points 1, 2, 12, 13 and 15 of
# issue 7; docs/guarantees.md states what these cases prove.
. "$(dirname "$0")/lib.sh"

CASE=$TMP/case.lua
PCAP=$TMP/case.pcap
N=0
# case LINE RC REGEX MASTER_CODE TX_CODE: MASTER_CODE runs on line 8 of the
# script, TX_CODE on line 5 inside task tx(q) (launched by MASTER_CODE).
case_() {
  local line=$1 rc=$2 re=$3 mcode=$4 tcode=${5:-"return 0"} first
  N=$((N + 1))
  cat >"$CASE" <<EOF
local surge = require "surge"; local ffi = require "ffi"; local pcap = surge.pcap; local P = "$PCAP"
local function port() return surge.port(0, { txq = 1, rxq = 1 }) end
local function burst(n) return surge.pool{ size = 63, template = surge.proto.udp{} }:burst(n or 4) end
function tx(q)
$tcode
end
function master(args)
$mcode
end
EOF
  run_surge 30 run -q --no-huge --vdev net_null0,no-rx=1 "$CASE"
  first=$(printf '%s\n' "$ERR" | grep -v '^EAL: ' | grep . | head -1)
  if [ "$RC" = "$rc" ] && printf '%s' "$first" | grep -Eq -- "case\\.lua:$line: .*$re"; then
    echo "ok   $N: ${tcode:0:0}${mcode:0:70} ${5:+/ ${tcode:0:60}}"
  else
    echo "FAIL $N: ${mcode} / ${tcode}: expected rc $rc and /case.lua:$line: .*$re/, got rc $RC:"
    printf '%s\n' "$ERR" | head -5
    FAILS=$((FAILS + 1))
  fi
  [ "$RC" -lt 124 ] || { echo "FAIL $N: died by signal or timeout (rc $RC)"; FAILS=$((FAILS + 1)); }
  check_nomatch "$N: no crash text" "$CRASH_RE" "$ERR" >/dev/null || true
}
M() { case_ 8 1 "$1" "$2"; }                                                  # master code
T() { case_ 5 1 "$1" 'surge.launch("tx", port():txq(0)); surge.wait()' "$2"; } # task code

WRITE='local w = pcap.writer(P); local b = burst(); b:alloc(); w:write(b); w:close()'

echo "# 1. every cdata handed to C is checked first"
M 'txq:send: expected a burst, got nil' 'port():txq(0):send(nil)'
M 'txq:send: expected a burst, got a table' 'port():txq(0):send({})'
M 'txq:send: expected a burst, got "x"' 'port():txq(0):send("x")'
M 'txq:send: expected a burst, got a NULL' 'port():txq(0):send(ffi.cast("struct surge_burst *", nil))'
M 'txq:send: expected a burst, got cdata<int' 'port():txq(0):send(ffi.new("int[4]"))'
M 'rxq:recv: expected a burst, got nil' 'port():rxq(0):recv(nil)'
M 'rxq:recv: expected a burst, got 42' 'port():rxq(0):recv(42)'
M 'writer:write: expected a burst, got nil' 'pcap.writer(P):write(nil)'
M 'reader:fill: expected a burst, got nil' "$WRITE; pcap.reader(P):fill(nil)"
M 'reader:fill: max .*expected an integer in 0..4, got 5' "$WRITE; pcap.reader(P):fill(burst(4), 5)"
M 'receiver:scan: expected a burst, got nil' 'surge.latency.receiver{ offset = 42 }:scan(nil)'
M 'marker:mark: expected a burst, got nil' 'surge.latency.marker{ offset = 42 }:mark(nil)'
M 'burst:alloc: expected a burst, got nil' 'local b = burst(); b.alloc()'
M 'burst:free: expected a burst, got nil' 'local b = burst(); b.free()'
M 'txq:send: expected txq as self' 'local q = port():txq(0); q.send(burst())'
M 'rxq:recv: expected rxq as self' 'local q = port():rxq(0); q.recv(burst())'
M 'writer:write: expected writer as self' 'local w = pcap.writer(P); w.write(burst())'
M 'flow:apply: expected a burst, got nil' 'surge.flow{ template = surge.proto.udp{}, fields = { ["udp.sport"] = { range = { 1, 9 } } } }:apply(nil)'
M 'size:apply: expected a burst, got nil' 'surge.size("imix"):apply(nil)'
M 'corrupt burst' 'port():txq(0):send(ffi.new("struct surge_burst"))'

echo "# 2. burst fields C relies on are read-only"
M 'burst.n is read-only' 'local b = burst(); b:alloc(); b.n = 200'
M 'burst.cap is read-only' 'local b = burst(); b.cap = 1000'
M 'burst.pool is read-only' 'local b = burst(); b.pool = 3'
M 'burst.mbuf is read-only' 'local b = burst(); b.mbuf = nil'
M 'constant' 'local b = burst(); b:alloc(); b.mbuf[0] = nil'
M 'burst.data is read-only' 'local b = burst(); b.data = nil'
M 'constant' 'local b = burst(); b:alloc(); b.data[0] = b.data[0] + 2^31'
M 'packet 1 of the burst has length 65535, outside 14\.\.' 'local b = burst(); b:alloc(); b.len[1] = 65535; b:bytes(1)'
M 'packet 0 of the burst has length 60000' 'local b = burst(); b:alloc(); b.len[0] = 60000; pcap.writer(P):write(b)'
M 'packet 2 of the burst has length 3, outside 14' 'local b = burst(); b:alloc(); b.len[2] = 3; pcap.writer(P):write(b)'
M "burst has no field 'colour'" 'local b = burst(); b.colour = 1'
M "burst:alloc: n .*expected an integer in 0..4, got 5" 'burst(4):alloc(5)'
M "burst:alloc: n .*got -1" 'burst(4):alloc(-1)'
M "burst:alloc: n .*got nan" 'burst(4):alloc(0/0)'
M "burst:bytes: i .*got 7" 'local b = burst(4); b:alloc(); b:bytes(7)'
M 'pool:burst: n: expected an integer in 1..256, got 0' 'surge.pool{}:burst(0)'
M 'pool:burst: n: expected an integer in 1..256, got 257' 'surge.pool{}:burst(257)'
M 'pool:burst: n: expected an integer in 1..256, got "x"' 'surge.pool{}:burst("x")'
M 'pool:burst: n: .*got 1099511627776' 'surge.pool{}:burst(2^40)'

echo "# issue 23.1: a field a handle does not have, read or written, names itself and its type"
FLOW='surge.flow{ template = surge.proto.udp{}, fields = { ["udp.sport"] = { range = { 1, 5 } } } }'
for h in "port|port()" "txq|port():txq(0)" "rxq|port():rxq(0)" "pool|surge.pool{}" "burst|burst()" \
         "writer|pcap.writer(P)" "reader|(function() $WRITE end)() or pcap.reader(P)" "flow|$FLOW" "size|surge.size('imix')" \
         "marker|surge.latency.marker{ offset = 42 }" "receiver|surge.latency.receiver{ offset = 42 }" \
         "counter|surge.counter('c')" "gauge|surge.gauge('g')" \
         "dut tagger|require('surge.dut.counters').tagger{ l4 = 34 }"; do
  M "${h%%|*} has no field 'lenght'" "local h = ${h#*|}; local x = h.lenght"
  M "${h%%|*} has no field 'colour'" "local h = ${h#*|}; h.colour = 1"
done
T "burst has no field 'lenght'" 'local b = burst(); b:alloc(); for i = 0, b.n - 1 do b.lenght[i] = 60 end'
T "txq has no field 'sned'" 'q:sned(burst())'
M "dut session has no field 'nosuch'" 'local s = require("surge.dut").session{ tx = 0, resolve_timeout = 0 }; local x = s.nosuch'

echo "# 12. wrong types and out-of-range numbers name the parameter"
M 'surge.pool: opts: expected a table, got 42' 'surge.pool(42)'
M 'surge.pool: size: expected an integer in 0..16777216, got -1' 'surge.pool{ size = -1 }'
M 'surge.pool: size: .*got 1099511627776' 'surge.pool{ size = 2^40 }'
M 'surge.pool: socket: .*got 1099511627776' 'surge.pool{ socket = 2^40 }'
M 'surge.pool: data_room: .*got nan' 'surge.pool{ data_room = 0/0 }'
M 'surge.pool: template: expected a string or a table or a function, got 42' 'surge.pool{ template = 42 }'
M "surge.pool: unknown option 'colour'" 'surge.pool{ colour = 1 }'
M 'surge.port: opts: expected a table, got "fast"' 'surge.port(0, "fast")'
M 'surge.port: id .*got a table' 'surge.port({})'
M 'surge.port: id .*got 1099511627776' 'surge.port(2^40)'
M 'surge.port: mtu: .*got 1099511627776' 'surge.port(0, { mtu = 2^40 })'
M 'surge.port: rxq: .*got -1' 'surge.port(0, { rxq = -1 })'
M 'surge.port: link_timeout: .*got nan' 'surge.port(0, { link_timeout = 0/0 })'
M 'surge.port: promisc: expected a boolean, got "yes"' 'surge.port(0, { promisc = "yes" })'
M 'port:txq: i: .*got 1099511627776' 'port():txq(2^40)'
M 'port:rxq: i: .*got -1' 'port():rxq(-1)'
M 'surge.idle: policy: expected a string or a table, got 5' 'surge.idle(5)'
M 'surge.idle: mode: expected busy, pause or sleep, got "nap"' 'surge.idle{ mode = "nap" }'
M 'surge.idle: max_sleep_us: .*got -5' 'surge.idle{ max_sleep_us = -5 }'
M 'surge.idle: step_us: .*got 1099511627776' 'surge.idle{ step_us = 2^40 }'
M 'surge.wait: timeout .*got "soon"' 'surge.wait(1, "soon")'
M 'surge.wait: timeout .*got nan' 'surge.wait(1, 0/0)'
M 'surge.wait: id: .*got "x"' 'surge.wait("x")'
M 'surge.sleep: seconds: .*got -1' 'surge.sleep(-1)'
M 'surge.sleep: seconds: .*got nan' 'surge.sleep(0/0)'
M 'surge.sleep: seconds: .*got "1"' 'surge.sleep("1")'
M 'surge.launch: fn .*got 42' 'surge.launch(42)'
M "no global function 'nope'" 'surge.launch("nope")'
M 'surge.vdev: spec .*got 42' 'surge.vdev(42)'
M 'surge.lcore_stats: lcore: .*got -1' 'surge.lcore_stats(-1)'
M 'surge.tsc_ns: tsc .*got nan' 'surge.tsc_ns(0/0)'
M 'surge.proto.udp.set_sport: p: expected a pointer, got cdata<int64_t>' 'surge.proto.udp.set_sport(42LL, 5)'
M 'surge.proto.tcp.set_ack: p: expected a pointer, got cdata<int \[16\]>' 'surge.proto.tcp.set_ack(ffi.new("int[16]"), 5)'
M 'flow:next: p: expected a pointer, got cdata<double>' 'surge.flow{ template = surge.proto.udp{}, fields = { ["udp.sport"] = { range = { 1, 5 } } } }:next(ffi.new("double", 7))'
M 'surge.tsc_ns: tsc .*got -1' 'surge.tsc_ns(-1)'
# a scenario called from Lua: its session's errors are at the caller's line
M 'port 0 is already open' 'surge.port(0); require("surge.scenario.flood").run{ tx = 0, trial = 0.1 }'
M 'flood: --sizes: 10 is below 64' 'require("surge.scenario.flood").run{ tx = 0, sizes = "10" }'
M 'surge.dut.session: src 10.0.0.1 and dst ::1 are not of one family' 'require("surge.scenario.flood").run{ tx = 0, src = "10.0.0.1", dst = "::1" }'
M 'surge.tsc_ns: tsc .*got "x"' 'surge.tsc_ns("x")'
M 'surge.stop_task: id: .*got nan' 'surge.stop_task(0/0)'
M 'surge.collect: t .*got nil' 'surge.collect(nil)'
M 'surge.collect: t.id: .*got nil' 'surge.collect({})'
M "surge.launch: module 'tx' has no function 'nope' to run as a task: module 'tx' not found$" 'surge.launch("tx:nope")'
M 'os.exit: status: .*got 300' 'os.exit(300)'
M 'os.exit: status: .*got 1.5' 'os.exit(1.5)'
M 'rate: on .*got 1099511627776' 'port():txq(0):set_rate{ pattern = "onoff", on = 2^40, off = 0 }'
M 'rate: off .*got nan' 'port():txq(0):set_rate{ pattern = "onoff", on = 10, off = 0/0 }'
M 'rate: off .*got -1' 'port():txq(0):set_rate{ pattern = "onoff", on = 10, off = -1 }'
M "rate: catchup 'later' unknown" 'port():txq(0):set_rate{ rate = "1mpps", catchup = "later" }'
M 'rate: max_late_us = -5' 'port():txq(0):set_rate{ rate = "1mpps", max_late_us = -5 }'
M 'rate: seed: .*got -1' 'port():txq(0):set_rate{ rate = "1mpps", pattern = "poisson", seed = -1 }'
M 'rate: over .*got nan' 'port():txq(0):set_rate{ rate = "1mpps", pattern = "ramp", to = "2mpps", over = 0/0 }'
M 'rate: rate: expected a number >= 0, got -5' 'port():txq(0):set_rate(-5)'
M 'rate: gap .*expected a function, got 5' 'port():txq(0):set_rate{ gap = 5 }'
M 'rate: hw: expected a boolean, got "yes"' 'port():txq(0):set_rate{ rate = "1mpps", hw = "yes" }'
M "rate: unknown option 'speed'" 'port():txq(0):set_rate{ speed = 1 }'
M 'txq:send: clones: .*got 1099511627776' 'local b = burst(); b:alloc(); port():txq(0):send(b, 2^40)'
M 'txq:send: clones: .*got -1' 'local b = burst(); b:alloc(); port():txq(0):send(b, { clones = -1 })'
M 'surge.pcap.writer: path: expected a string, got 42' 'pcap.writer(42)'
M 'surge.pcap.writer: snaplen: .*got 1099511627776' 'pcap.writer(P, { snaplen = 2^40 })'
M 'surge.pcap.writer: snaplen: .*got -1' 'pcap.writer(P, { snaplen = -1 })'
M 'surge.pcap.writer: opts: expected a table, got "x"' 'pcap.writer(P, "x")'
M 'surge.pcap.reader: path: expected a string, got nil' 'pcap.reader()'
M 'surge.pcap: loop .*got -1' "$WRITE; pcap.reader(P, { loop = -1 })"
M 'surge.pcap: timing: .*got nan' "$WRITE; pcap.reader(P, { timing = 0/0 })"
M 'surge.latency.marker: offset .*got 1099511627776' 'surge.latency.marker{ offset = 2^40 }'
M 'surge.latency.marker: every: .*got 0' 'surge.latency.marker{ offset = 42, every = 0 }'
M 'surge.latency.receiver: offset .*got -1' 'surge.latency.receiver{ offset = -1 }'
M 'surge.counter: name has space must be 1..63' 'surge.counter("has space")'
M 'surge.results.add: the results must be a table' 'surge.results.add("x", 42)'
M 'surge.progress.watch: fn: expected a function, got 42' 'surge.progress.watch("x", 10, 42)'
M 'surge.progress: total: expected a number in 0..9007199254740992, got inf' 'surge.progress(5, math.huge)'
M 'surge.proto.udp.set_sport: p: expected a pointer, got 42' 'surge.proto.udp.set_sport(42, 5)'
M 'flow:next: p: expected a pointer, got 42' 'surge.flow{ template = surge.proto.udp{}, fields = { ["udp.sport"] = { range = { 1, 5 } } } }:next(42)'
M 'size:next: p: expected a pointer, got 42' 'local sz = surge.size.new({ uniform = { 60, 1514 } }) sz:template(surge.proto.udp{}) sz:next(42)'
M 'counter:add: n: expected an integer in 0..9007199254740992, got -1' 'surge.counter("x"):add(-1)'
M 'each\(fn\) takes a function' 'surge.latency.receiver{ offset = 42 }:each(42)'
M 'receiver:save: expected a file name' 'surge.latency.receiver{ offset = 42 }:save("")'
M 'receiver:add: ns: .*got nan' 'surge.latency.receiver{ offset = 42 }:add(0/0, 1)'
M 'receiver:percentile: q: .*got nan' 'surge.latency.receiver{ offset = 42 }:percentile(0/0)'
T "txq:send: the gap function's result .*got nil" 'q:set_rate{ gap = function() return nil end }; local b = burst(); b:alloc(); q:send(b)'
T "txq:send: the gap function's result .*got -5" 'q:set_rate{ gap = function() return -5 end }; local b = burst(); b:alloc(); q:send(b)'
T 'txq:send: expected a burst, got nil' 'q:send(nil)'
# issue 20: the fused send + alloc and the paced queues' send of what is due
M 'txq:send_alloc: expected a burst, got nil' 'port():txq(0):send_alloc(nil, 1, 4)'
T 'txq:send_alloc: n .*expected an integer in 0..4, got 5' 'local b = burst(); b:alloc(); q:send_alloc(b, 1, 5)'
T 'txq:send_alloc: n .*got nil' 'local b = burst(); b:alloc(); q:send_alloc(b)'
T 'txq:send_alloc: clones: .*got -1' 'local b = burst(); b:alloc(); q:send_alloc(b, -1, 4)'
M 'txq:send_due: expected a burst, got nil' 'port():txq(0):send_due(nil)'
T 'txq:send_due: the queue paces by a gap function' 'q:set_rate{ gap = function() return 10 end }; local b = burst(); b:alloc(); q:send_due(b)'

echo "# issue 31.10: surge.conn's functions and methods check their arguments as the rest of the API"
# (the engine made after the call's text, so that the ok line shows the call)
CN='(require("surge.conn").client{ src = "10.0.0.2", server = "10.0.0.1", connections = 1 })'
M 'engine:poll: rxq: expected an rx queue \(port:rxq\(i\)\), got nil' "local f = function(e) e:poll(nil, port():txq(0), burst(), burst()) end; f($CN)"
M 'engine:poll: rx: expected a burst, got "x"' "local f = function(e) local p = port(); e:poll(p:rxq(0), p:txq(0), \"x\", burst()) end; f($CN)"
M "engine:poll: expected engine as self, got rxq\\(0,0\\) \\(call it with ':'\\)" "local f = function(e) local p = port(); e.poll(p:rxq(0), p:txq(0), burst(), burst()) end; f($CN)"
M 'engine:abort: txq: expected a tx queue \(port:txq\(i\)\), got nil' "local f = function(e) e:abort(nil) end; f($CN)"
M 'engine:run: rxq: expected an rx queue \(port:rxq\(i\)\), got nil' "local f = function(e) e:run{} end; f($CN)"
M 'engine:run: pool: expected a pool \(surge.pool\{...\}\), got "x"' "local f = function(e) local p = port(); e:run{ rxq = p:rxq(0), txq = p:txq(0), pool = \"x\" } end; f($CN)"
M 'engine:run: seconds: expected a number >= 0, got -1' "local f = function(e) local p = port(); e:run{ rxq = p:rxq(0), txq = p:txq(0), pool = surge.pool{}, seconds = -1 } end; f($CN)"
M 'engine:summary: seconds: expected a number >= 0, got "x"' "local f = function(e) e:summary(\"x\") end; f($CN)"
M 'surge.conn.format: t .*expected a table, got nil' 'require("surge.conn").format(nil)'
M 'surge.conn.data_room: mss: expected an integer in 0..9000, got "x"' 'require("surge.conn").data_room("x")'
M 'surge.conn.data_room: mss: expected an integer in 0..9000, got -5' 'require("surge.conn").data_room(-5)'
M 'surge.conn.client: prefix: expected a string, got a table' 'require("surge.conn").client{ src = "10.0.0.2", server = "10.0.0.1", prefix = {} }'
M "surge.conn.server: addr: '10.0.0' is not an IPv4 address" 'require("surge.conn").server{ addr = "10.0.0" }'
M "surge.conn.client: server: '10.0.0' is not an IPv4 address" 'require("surge.conn").client{ src = "10.0.0.2", server = "10.0.0" }'
M "surge.conn.client: rate 'x' does not start with a number" 'require("surge.conn").client{ src = "10.0.0.2", server = "10.0.0.1", rate = "x" }'
M "surge.conn.client: rate: unknown pattern 'zz'" 'require("surge.conn").client{ src = "10.0.0.2", server = "10.0.0.1", rate = { rate = 5, pattern = "zz" } }'
M 'surge.conn.http.body: n: expected an integer in 0..1000000, got "x"' 'require("surge.conn.http").body("x")'
M 'connection:status: expected connection as self, got nil' 'require("surge.conn").Hook.status(nil)'

echo "# 15. what cannot cross between VMs, and errors that are not strings"
M 'surge.launch\("tx"\): cannot pass argument 1 .*function' 'surge.launch("tx", function() end)'
M 'surge.launch\("tx"\): cannot pass argument 1 .*cdata' 'surge.launch("tx", ffi.new("int[1]"))'
M 'surge.launch\("tx"\): cannot pass argument 2.t: it contains a cycle' 'local t = {}; t.t = t; surge.launch("tx", 1, t)'
M 'surge.launch\("tx"\): cannot pass argument 1: tables nested more than 100 deep' 'local t = {}; for i = 1, 300 do t = { t } end; surge.launch("tx", t)'
case_ 4 1 "cannot pass result 1 .*function.*\\(task 'tx', lcore" 'surge.launch("tx"); surge.wait()' 'return function() end'
case_ 4 1 "cannot pass result 2 .*cdata.*\\(task 'tx', lcore" 'surge.launch("tx"); surge.wait()' 'return 1, ffi.new("int[1]")'
T "error raised with a table: \\{ code = 7 \\} \\(task 'tx'" 'error({ code = 7 })'
T "error raised with no message \\(nil\\) \\(task 'tx'" 'error()'
M 'error raised with a table: \{ code = 7 \}' 'error({ code = 7 })'
M 'error raised with no message \(nil\)' 'error(nil)'
M 'error raised with true' 'error(true)'
M 'error raised with a table \(its __tostring gave 42\): \{ a = 1 \}' 'error(setmetatable({ a = 1 }, { __tostring = function() return 42 end }))'
M 'error raised with a table \(its __tostring failed: .*boom\)' 'error(setmetatable({}, { __tostring = function() error("boom") end }))'
T "error raised with a table \(its __tostring gave 42\).*\(task 'tx'" 'error(setmetatable({}, { __tostring = function() return 42 end }))'
# the traceback keeps the frame that raised (a helper of the script)
case_ 5 1 "attempt to index" 'local x = tx(nil)' 'local function deep(t) return t.a.b end; local v = deep({}); return v'
check_match "traceback keeps the raising frame" "case\\.lua:5: in function 'deep'" "$ERR"

echo "# os.exit and master's return value: the exit status, after a normal end"
# os.exit anywhere ends the run as surge.stop() does: summary, pool check
# and cleanup still happen, the process exits with the status given
EXIT=$TMP/exit.lua
exit_case() {  # exit_case NAME RC MASTER_CODE [TX_CODE]
  N=$((N + 1))
  cat >"$EXIT" <<EOF
local surge = require "surge"
function tx()
  local b = surge.pool{}:burst(8); b:alloc()
  ${4:-return}
end
function master()
  $3
end
EOF
  run_surge 30 run --no-huge --stats-interval 0 --vdev net_null0,no-rx=1 "$EXIT"
  check "$N: $1: exit $2" "$2" "$RC"
  if [ "$2" != 1 ]; then
    check_match "$N: $1: summary and pools checked" "pool 0: 8191 of 8191 mbufs back, no leak" "$ERR$OUT"
  fi
}
exit_case "os.exit(5) in master" 5 'surge.launch("tx"); surge.wait(); os.exit(5)'
exit_case "os.exit(4) in a task holding mbufs" 4 'surge.launch("tx"); surge.wait(); print("master goes on")' 'os.exit(4)'
check_match "$N: master's wait returned normally" "master goes on" "$OUT"
exit_case "os.exit() in master" 0 'surge.launch("tx"); surge.wait(); os.exit()'
exit_case "os.exit(false) in master" 1 'os.exit(false)'
exit_case "os.exit(8) wins over master's return 2" 8 'surge.launch("tx"); surge.wait(); pcall(os.exit, 8); return 2'
exit_case "master returns 7" 7 'surge.launch("tx"); surge.wait(); return 7'
exit_case "master returns the task results" 0 'surge.launch("tx"); return surge.wait()'
exit_case "master returns 256" 1 'return 256'
check_match "$N: master returns 256: says why" "^[^ ]*exit\.lua:6: master's return value \(the exit status\): expected .* 0\.\.255, got 256" "$ERR"
printf 'local surge = require "surge"\nif not arg[1] then print("usage: exit.lua N"); os.exit(2) end\nfunction master() end\n' >"$EXIT"
run_surge 30 run --no-huge "$EXIT"
check "os.exit(2) at the top level: exit 2 before EAL" "2 usage: exit.lua N" "$RC $OUT"
check_nomatch "os.exit at the top level: no EAL started" "EAL|telemetry" "$ERR"

echo "# 13. script options: refused before EAL starts, exit status 2"
OPTS=$TMP/opts.lua
cat >"$OPTS" <<'EOF'
function configure(p)
  p:option("--count", "packets", 0, "integer >=0")
  p:option("--burst", "burst", 32, "integer 1..256")
  p:option("--gap", "seconds", 1, "number")
end
function master(args) return 0 end
EOF
opt() {  # opt REGEX ARGS...
  local re=$1
  shift
  N=$((N + 1))
  run_surge 30 run -q --no-huge --vdev net_null0,no-rx=1 "$OPTS" "$@"
  if [ "$RC" = 2 ] && printf '%s' "$(printf '%s\n' "$ERR" | head -1)" | grep -Eq -- "opts\\.lua: .*$re" \
     && ! printf '%s' "$ERR" | grep -q '^EAL'; then echo "ok   $N: options $*"; else
    echo "FAIL $N: options $*: expected rc 2, /$re/ and no EAL line, got rc $RC:"; printf '%s\n' "$ERR" | head -3
    FAILS=$((FAILS + 1)); fi
}
opt "option --count: expected an integer >= 0, got 'inf'" --count inf
opt "option --count: expected an integer >= 0, got '1e20'" --count 1e20
opt "option --count: expected an integer >= 0, got 'nan'" --count nan
opt "option --count: expected an integer >= 0, got '-1'" --count -1
opt "option --count: expected an integer >= 0, got '1.5'" --count=1.5
opt "option --burst: expected an integer in 1..256, got '0'" --burst 0
opt "option --burst: expected an integer in 1..256, got '300'" --burst 300
opt "option --gap: expected a number, got 'nan'" --gap nan
opt "option --gap: expected a number, got 'inf'" --gap inf
opt "unknown option '--bogus'" --bogus 1
opt "option --count needs a value" --count

echo "$N cases"
finish
