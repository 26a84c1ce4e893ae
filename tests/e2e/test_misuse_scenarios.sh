#!/bin/bash
# test_misuse_scenarios.sh - scenarios, scenario modules and SCENARIO / script
# names misused, table-driven (issue 23 item 13): every row is a `surge run`
# command line, run in a folder of its own, that must end with the expected
# exit status and whose first stderr line (EAL's notices aside) must match.
# A row marked pre-EAL must also be refused before EAL starts: no EAL or
# telemetry line at all. docs/guarantees.md ("Scenarios, modules and the
# install refuse clearly") states what these rows prove.
. "$(dirname "$0")/lib.sh"

CWD=$TMP/cwd
MODS=$TMP/mods
mkdir -p "$CWD" "$MODS"
# user scenario modules that break the contract, one fault each
mod() { printf '%s\n' "$2" >"$MODS/$1.lua"; }
mod norun    'return { description = "x", options = function(p) end }'
mod number   'return 42'
mod nodesc   'return { options = function(p) end, run = function(o) return {} end }'
mod opttable 'return { description = "x", options = {}, run = function(o) return {} end }'
mod badrep   'return { description = "x", options = function(p) end, run = function(o) return {} end, report = 5 }'
mod retnum   $'return { description = "x", options = function(p) end,\n  run = function(o) return 5 end }'
mod retnil   $'return { description = "x", options = function(p) end,\n  run = function(o) end }'
mod reptab   $'return { description = "x", options = function(p) end, run = function(o) return {} end,\n  report = function(r) return {} end }'
mod raises   $'return { description = "x", options = function(p) end,\n  run = function(o)\n    error("boom") end }'
mod raisenil $'return { description = "x", options = function(p) end,\n  run = function(o)\n    error() end }'
mod raisetab $'return { description = "x", options = function(p) end,\n  run = function(o)\n    error({ code = 7 }) end }'
mod loaderr  $'local x = 1\nerror("at load")'
mod syntax   $'return {\n  description = "x",'
mod optraise $'return { description = "x", options = function(p)\n  error("in options") end, run = function(o) return {} end }'
mod optbad   $'return { description = "x", options = function(p)\n  p:option("n", "no dashes") end, run = function(o) return {} end }'
mod good     $'return { description = "fine", options = function(p) p:option("--n", "n", 1, "integer 1..5") end,\n  run = function(o) return { n = o.n } end, report = function(r) return "n=" .. r.n end }'
# names: a folder named like a scenario, or like a script
mkdir -p "$CWD/rfc2544" "$CWD/flood" "$CWD/dir.lua" "$MODS/folder.lua"
printf 'function master() print("the file ran") end\n' >"$CWD/plain"

N=0
# row RC PRE-EAL(yes|no) REGEX ARGS...: `surge run --no-huge ARGS` in $CWD with
# SURGE_PATH=$MODS; REGEX must match the first stderr line that is not EAL's
# nor a notice of a healthy start-up ("" : there is none). EAL started when
# the run said so (its telemetry socket, the default device, EAL's lines).
row() {
  local rc=$1 pre=$2 re=$3 first eal
  shift 3
  N=$((N + 1))
  (cd "$CWD" && SURGE_PATH=$MODS run_surge 30 run --no-huge --duration 2 "$@"
   printf '%s\n' "$RC" >"$TMP/rc"; printf '%s\n' "$ERR" >"$TMP/err"; printf '%s\n' "$OUT" >"$TMP/out")
  RC=$(cat "$TMP/rc"); ERR=$(cat "$TMP/err"); OUT=$(cat "$TMP/out")
  first=$(printf '%s\n' "$ERR" | grep -v '^EAL: \|^surge: telemetry: \|virtual sink\|^surge: pool .* no leak' |
    grep . | head -1)
  eal=$(printf '%s\n' "$ERR$OUT" | grep -c '^EAL: \|^surge: telemetry: \|virtual sink')
  if [ "$RC" = "$rc" ] && { if [ -z "$re" ]; then [ -z "$first" ]; else printf '%s' "$first" | grep -Eq -- "$re"; fi; } &&
     { [ "$pre" = no ] || [ "$eal" = 0 ]; }; then
    echo "ok   $N: $* -> $rc: $first"
  else
    echo "FAIL $N: surge run $*: expected rc $rc, /$re/${pre/yes/, before EAL}; got rc $RC, $eal EAL line(s):"
    printf '%s\n' "$ERR" | head -5
    FAILS=$((FAILS + 1))
  fi
  check_nomatch "$N: no crash text" "$CRASH_RE" "$ERR" >/dev/null || FAILS=$((FAILS + 1))
}

echo "# b. a scenario's option errors name the option as typed, exit 2, before EAL where no port is needed"
row 2 yes "^flood: --src: '10.0.0.300' is not an IPv4 address$"        flood --src 10.0.0.300
row 2 yes "^flood: --dst: '10.1.0' is not an IPv4 address$"            flood --dst 10.1.0
row 2 yes "^rfc2544: --gateway: 'router' is not an IPv4 address$"      rfc2544 --gateway router
row 2 yes "^qos: --rx-gateway: '1.2.3' is not an IPv4 address$"         qos --rx-gateway 1.2.3
row 2 yes "^load-latency: --src: '2001:db8::zz' is not an IPv6 address$" load-latency --src 2001:db8::zz --dst 2001:db8::1
row 2 yes "^flood: --src 10.0.0.2 and --dst 2001:db8::1 are not of one family$" flood --dst 2001:db8::1
# mlrsearch's goals need no port either (issue 18: contradicting goals, before traffic)
row 2 yes "^mlrsearch: --goals: goal NDR: loss ratio 1 must be in 0..1"     mlrsearch --goals NDR:1
row 2 yes "^mlrsearch: --exceed-ratio: goal NDR: exceed ratio 2 must be"     mlrsearch --exceed-ratio 2
row 2 yes "^mlrsearch: --width: goal NDR: width 0 must be above 0"           mlrsearch --width 0
row 2 yes "^mlrsearch: --goals: goal 'NDR' given twice"                      mlrsearch --goals NDR:0,NDR:0.01
# rfc9693's tests, rates and ports need no port either (issue 21 item 4)
row 2 yes "^rfc9693: --tests: 'latency' is not a test \(capacity, setup-rate, teardown-rate, throughput\)$" \
  rfc9693 --tx 0 --rx 1 --tests capacity,latency
row 2 yes "^rfc9693: --tests: test 'capacity' given twice in 'capacity,capacity'$" rfc9693 --rx 1 --tests capacity,capacity
row 2 yes "^rfc9693: --rx: the server needs a port of its own: give --rx, another port than --tx 0$" rfc9693 --rx 0
row 2 yes "^rfc9693: --width: 0 must be above 0 and below 1" rfc9693 --rx 1 --width 0
row 2 yes "^rfc9693: --min-rate: 500 connections/s is not below --max-rate 100$" rfc9693 --rx 1 --min-rate 500 --max-rate 100
row 2 yes "^rfc9693: --max-rate: 70000 connections/s for 1 s \(--trial\) is 70000 connections in a trial" \
  rfc9693 --rx 1 --max-rate 70000
row 2 yes "^rfc9693: --max-connections: " rfc9693 --rx 1 --max-connections 70000
row 2 yes "^rfc9693: --vlan: the connection engine sends untagged frames only$" rfc9693 --rx 1 --vlan 5
row 2 no "^rfc9693: --rx: the server needs a port of its own" rfc9693 --tx 0
# --clients-dhcp (issue 33 item 4): the clients' subnet, before EAL
row 2 yes "^rfc9693: --clients-subnet: not given, and no IPv4 --gateway to take a /24 from$" rfc9693 --rx 1 --clients-dhcp 5
row 2 yes "^rfc9693: --clients-subnet: '10.0.0.0/40' is not A.B.C.D/LEN with LEN 12..32$" rfc9693 --rx 1 \
  --clients-dhcp 5 --gateway 10.0.0.1 --clients-subnet 10.0.0.0/40
row 2 yes "^rfc9693: --clients-dhcp: expected an integer in 0..1048576, got '1048577'$" rfc9693 --rx 1 --clients-dhcp 1048577
row 2 yes "^rfc9693: --clients-dhcp: DHCPv4 clients open IPv4 connections: --dst 2001:db8::1:2 is IPv6$" rfc9693 \
  --rx 1 --clients-dhcp 3 --src 2001:db8::2 --dst 2001:db8::1:2 --gateway 2001:db8::1
# the http scenario's rates and addresses (issue 21 item 4)
row 2 yes "^http: --rates: '0' is not a rate above 0 \(connections/s\)$" http --rates 500,0
row 2 yes "^http: --rates: rate 100 given twice in '100,100'$"        http --rates 100,100
row 2 yes "^http: --rates: 100000 connections/s for 1 s \(--trial\) is 100000 connections" http --rates 100000
row 2 yes "^http: --server: 2001:db8::1 is not of the family of --src$" http --server 2001:db8::1
row 2 yes "^http: --gateway: 'gw' is not an IPv4 or IPv6 address$"   http --gateway gw
row 2 yes "^http: --path: 'x' starts with / and holds no spaces$"     http --path x
row 2 no "^http: --tx: port 3 does not exist"                         http --tx 3
row 2 yes "^mlrsearch: --duration-sum: goal NDR: duration sum 1 s must be"   mlrsearch --final-trial 2 --duration-sum 1
# y1564's services need no port either (issue 18 item 3); a CIR above the
# port's own link speed is known once the port is open: still exit 2
row 2 yes "^y1564: --services: service 'a': cir 20 Gbit/s is above line rate \(9\.624 Gbit/s of 512-byte frames, --line-rate\)$" \
  y1564 --services a:dscp=1:cir=20gbit --line-rate 10gbit
row 2 no  "^y1564: --services: service 'a': cir 20 Gbit/s is above line rate .*port 0's link speed\)$" \
  y1564 --services a:dscp=1:cir=20gbit
row 2 yes "^y1564: --services: service 'a': eir=-1mbit is negative$"  y1564 --services a:cir=1mbit:eir=-1mbit
row 2 yes "^y1564: --services: service 'a': unknown key 'colour' \(keys: dscp, vlan, port, cir, eir, " \
  y1564 --services a:cir=1mbit:colour=red
row 2 yes "^y1564: --services: service 'a' given twice$"               y1564 --services a:cir=1mbit,a:dscp=2:cir=1mbit
row 2 yes "^y1564: --services: services 'a' and 'b' both match dscp 1: the DUT cannot tell them apart" \
  y1564 --services a:dscp=1:cir=1mbit,b:dscp=1:cir=2mbit
row 2 yes "^y1564: --tests: unknown test 'foo' \(config, performance\)$" y1564 --tests foo

# rfc2889 (issue 18 item 2): its ports, tests and ranges need no port, refused before EAL; the
# ports' existence and the rates after EAL, still naming the option
row 2 yes "^rfc2889: --ports: test 'caching' needs 3 ports, 2 given"         rfc2889 --ports 0,1 --tests caching
row 2 yes "^rfc2889: --ports: test 'congestion' needs 4 ports, 3 given"      rfc2889 --ports 0,1,2 --tests congestion
row 2 yes "^rfc2889: --ports: 1 port given: RFC 2889 tests need 2 or more"   rfc2889 --ports 0
row 2 yes "^rfc2889: --ports: port 1 given twice"                            rfc2889 --ports 0,1,1
row 2 yes "^rfc2889: --ports: 'x' is not a port number"                      rfc2889 --ports 0,x,2
row 2 yes "^rfc2889: --tests: unknown test 'flood' \(forwarding, caching"     rfc2889 --tests caching,flood
row 2 yes "^rfc2889: --pattern: unknown pattern 'star'"                      rfc2889 --pattern star
row 2 yes "^rfc2889: --min-addresses: 10 is above --max-addresses 5"         rfc2889 --min-addresses 10 --max-addresses 5
row 2 yes "^rfc2889: --sizes: 60 is below 64"                                rfc2889 --sizes 60
row 2 no  "^rfc2889: --ports: port 1 does not exist \(1 port"                 rfc2889 --ports 0,1,2 --tests caching
row 2 no  "^rfc2889: --rate: 'fast' is not a rate"                           --vdev net_null0,no-rx=1 --vdev net_null1,no-rx=1 rfc2889 --ports 0,1 --tests forwarding --rate fast

# rfc3918 (issue 18 item 4): groups that are not multicast, fewer ports than a test needs, before EAL
row 2 yes "^rfc3918: --groups: 10.0.0.1 is not a multicast address \(224.0.0.0/4\)$" rfc3918 --groups 10.0.0.1/4
row 2 yes "^rfc3918: --groups: 2001:db8::1 is not a multicast address \(ff00::/8\)$" rfc3918 --groups 2001:db8::1
row 2 yes "^rfc3918: --groups: '239.255.255.255/2' runs past the multicast range" rfc3918 --groups 239.255.255.255/2
row 2 yes "^rfc3918: --groups: '239.1.1.1' and 'ff3e::1' are not of one family" rfc3918 --groups 239.1.1.1,ff3e::1
row 2 yes "^rfc3918: --rx: the capacity test needs a port that joins no group" rfc3918 --rx 1 --tests capacity
row 2 yes "^rfc3918: --rx: port 0 is the sender \(--tx 0\)"            rfc3918 --rx 0
row 2 yes "^rfc3918: --rx: no receiving port given"                      rfc3918 --rx ''
# --member-hosts (issue 33 item 4): what a table of hosts cannot do, before EAL
row 2 yes "^rfc3918: --member-hosts: the capacity test joins a membership a step" rfc3918 --rx 1,2 --members 1 \
  --member-hosts 4 --tests capacity
row 2 yes "^rfc3918: --member-mac: '03:00:00:00:00:01' is not a unicast MAC$" rfc3918 --member-hosts 4 \
  --member-mac 03:00:00:00:00:01
row 2 yes "^rfc3918: --member-mac: 02:ff:ff:ff:ff:ff \+ 4 hosts carries into the first byte$" rfc3918 --member-hosts 4 \
  --member-mac 02:ff:ff:ff:ff:ff
row 2 yes "^rfc3918: --groups: 65 runs of consecutive groups: emulated hosts \(--member-hosts\) join at most 64$" \
  rfc3918 --member-hosts 4 --groups "$(seq -s, -f '239.1.%g.1' 1 65)"
row 2 yes "^rfc3918: --members: port 3 is not one of --rx 1,2$"          rfc3918 --rx 1,2 --members 3
row 2 yes "^rfc3918: --igmp: v2 is IGMP \(IPv4\): IPv6 groups join with MLDv2$" rfc3918 --groups ff3e::1 --igmp v2
row 2 yes "^rfc3918: --tests: no test 'bogus'"                           rfc3918 --tests join,bogus
row 2 yes "^rfc3918: --igmp: 'v4' is not an IGMP version: v2 or v3$"     rfc3918 --igmp v4
row 2 yes "^rfc3918: --member-addr: '224.1.1.1' is not a unicast IPv4 address$" rfc3918 --member-addr 224.1.1.1
row 2 yes "^rfc3918: --member-addr: 10 addresses from 255.255.255.250 \(--rx ports' and --member-hosts'\) run into 255.255.255.255$" \
  rfc3918 --member-hosts 10 --member-addr 255.255.255.250
row 2 yes "^rfc3918: --member-addr: 2 addresses from 255.255.255.255 .* run into 255.255.255.255$" rfc3918 --rx 1,2 \
  --member-addr 255.255.255.255
row 2 yes "^rfc3918: --member-addr: 300 addresses from 223.255.255.0 .* run into the multicast range" rfc3918 --rx 1,2,3 \
  --member-hosts 100 --member-addr 223.255.255.0
# the host examples' tables (issue 33): refused with the options, before EAL, not in their task after it
row 2 yes "^$SURGE_SRC/examples/many-hosts.lua: --count, --ip, .*: surge.hosts.new: 10 hosts from 255.255.255.250: past" \
  "$SURGE_SRC/examples/many-hosts.lua" --count 10 --ip 255.255.255.250
row 2 yes "^$SURGE_SRC/examples/dhcp-storm.lua: --clients, --mac, .*: surge_hosts_new: the MAC 01:00:00:00:00:00 is multicast" \
  "$SURGE_SRC/examples/dhcp-storm.lua" --mac 01:00:00:00:00:00
row 2 yes "^$SURGE_SRC/examples/hosts-ping.lua: --count, .*--dhcp, .*: surge.hosts.new: subnet: '10.0.0.0/40' is not" \
  "$SURGE_SRC/examples/hosts-ping.lua" --dhcp 10.0.0.0/40
row 2 yes "^rfc3918: 0.0625 pps \(--resolution 1 % of --max-rate over the 16 groups\)" rfc3918 --tests throughput --max-rate 100pps --trial 0.1
row 2 yes "^rfc3918: --size: 64 is below 68, the smallest IPv6 frame"    rfc3918 --groups ff3e::1 --size 64
row 2 no  "^rfc3918: --rx: port 3 does not exist \([0-9]+ ports?: give devices" rfc3918 --rx 3
row 2 yes "^flood: --gateway 2001:db8::1 is not of the family of --src 10.0.0.2$" flood --gateway 2001:db8::1
row 2 yes "^flood: --dst-mac: 'zz:zz' is not a MAC address"             flood --dst-mac zz:zz
row 2 yes "^replay: --src: '1.2.3.4.5' is not an IPv4 address$"     replay --src=1.2.3.4.5
row 2 yes "^flood: --vlan: expected an integer in 0..4095, got '5000'$" flood --vlan 5000
row 2 yes "^flood: unknown option '--src-ip'"                           flood --src-ip 10.0.0.1
row 2 yes "^good: --n: expected an integer in 1..5, got '9'$"          good --n 9
# what needs the ports is checked once they are open: still the option, exit 2
row 2 no  "^flood: --tx: port 7 does not exist"                         flood --tx 7
row 2 no  "^flood: --rate: 'fast' is not a rate"                        flood --rate fast

echo "# c. a user scenario module that breaks the contract: one line at its file"
row 1 yes "^$MODS/norun.lua: scenario 'norun': run must be a function \(run\(opts\) returns the results table\), got nil$" norun
row 1 yes "^$MODS/number.lua: scenario 'number' must return a table \{ description, options, run, report \}, got 42$" number
row 1 yes "^$MODS/nodesc.lua: scenario 'nodesc': description must be a string"  nodesc
row 1 yes "^$MODS/opttable.lua: scenario 'opttable': options must be a function .*, got a table$" opttable
row 1 yes "^$MODS/badrep.lua: scenario 'badrep': report must be a function .*, got 5$" badrep
row 1 yes "^$MODS/loaderr.lua:2: at load$"                               loaderr
row 1 yes "^$MODS/syntax.lua:3: unexpected symbol near '<eof>'$"       syntax
row 1 yes "^$MODS/optraise.lua:2: in options$"                           optraise
row 2 yes "^$MODS/optbad.lua:2: option name \"n\" must look like --name"  optbad
row 1 no  "^$MODS/retnum.lua:2: retnum: run\(opts\) returned 5, not the results table$" retnum
row 1 no  "^$MODS/retnil.lua:2: retnil: run\(opts\) returned nil, not the results table$" retnil
row 1 no  "^$MODS/reptab.lua:2: reptab: report\(results\) returned a table, not the text to print$" reptab
row 1 no  "^$MODS/raises.lua:3: boom$"                                   raises
row 1 no  "^$MODS/raisenil.lua:3: error raised with no message \(nil\)$" raisenil
row 1 no  "^$MODS/raisetab.lua:3: error raised with a table: \{ code = 7 \}$" raisetab
row 0 no  ""                                                          good --n 3

echo "# e. NAME: '-', an existing file other than a folder, else a scenario's word; a folder never hides one"
row 2 yes "^flood: --src: '1' is not an IPv4 address$"                  flood --src 1      # ./flood is a folder
row 0 yes ""                                                          rfc2544 --help     # ./rfc2544 is a folder
row 2 yes "^surge: cannot read script './rfc2544': Is a directory$"    ./rfc2544
row 2 yes "^surge: cannot read script 'dir.lua': Is a directory$"      dir.lua
row 2 yes "^surge: cannot read script 'nosuch.lua': No such file or directory$" nosuch.lua
row 2 yes "^surge: no script or scenario named 'nosuch' "              nosuch
row 2 yes "^surge: no script or scenario named 'folder' "              folder             # $MODS/folder.lua is a folder
row 0 no  ""                                                          plain              # a file wins over a name
check_match "a file named like a word runs as the script" '^the file ran$' "$OUT"

echo "# e. surge scenarios lists a broken module with what is wrong"
(cd "$CWD" && SURGE_PATH=$MODS run_surge 30 scenarios; printf '%s\n' "$RC" >"$TMP/rc"; printf '%s\n' "$OUT" >"$TMP/out")
check "surge scenarios: exit 0" 0 "$(cat "$TMP/rc")"
check_match "surge scenarios: a good user scenario" '^good +fine \[' "$(cat "$TMP/out")"
check_match "surge scenarios: a broken one, saying why" "^norun +cannot be used: .*norun.lua: scenario 'norun': run must be a function" \
  "$(cat "$TMP/out")"
check_nomatch "surge scenarios: no folder listed" '^folder ' "$(cat "$TMP/out")"
# a module that ends the process at load (os.exit(42) at its top level) and a
# folder with a ' in its name: the listing goes on, exit 0, both listed
ODD="$TMP/it's odd"
mkdir -p "$ODD"
printf 'return { description = "in an odd folder", options = function(p) end, run = function(o) return {} end }\n' \
  >"$ODD/oddone.lua"
printf 'os.exit(42)\n' >"$ODD/exiter.lua"
# and one whose top level never returns (it hung the listing for good)
printf 'local t = os.clock() while os.clock() - t < 600 do end\n' >"$ODD/spinner.lua"
(cd "$CWD" && SURGE_PATH="$ODD:$MODS" run_surge 30 scenarios; printf '%s\n' "$RC" >"$TMP/rc"; printf '%s\n' "$OUT" >"$TMP/out")
check "surge scenarios: a module calling os.exit(42) at load: exit 0" 0 "$(cat "$TMP/rc")"
check_match "surge scenarios: ... listed with its error at its line" \
  "^exiter +cannot be used: .*/exiter.lua:1: os.exit called while the module loads \\[" "$(cat "$TMP/out")"
check_match "surge scenarios: a module whose top level never returns is listed with its error" \
  "^spinner +cannot be used: .*/spinner.lua:1: its top level ran more than 2 s of CPU while the module loads \\[" \
  "$(cat "$TMP/out")"
check_match "surge scenarios: a folder with ' in its name is listed" "^oddone +in an odd folder \\[.*it's odd\\]$" \
  "$(cat "$TMP/out")"
check_match "surge scenarios: ... and the folders after it" '^good +fine \[' "$(cat "$TMP/out")"
echo "# d. the prompt's loop survives typed code replacing any global or library field"
# prompt LINE: `surge repl` with stdin not a terminal: LINE, then an
# expression, an error and a helper; each must still work, the session end
# normally (exit 0), LINE itself be no error.
prompt() {
  N=$((N + 1))
  printf '%s\n6 * 7\nnosuch()\ntasks()\n"still" .. " here"\n' "$1" >"$TMP/typed.lua"
  run_surge 30 repl --no-huge --stats-interval 0 <"$TMP/typed.lua"
  local errs
  errs=$(printf '%s\n' "$OUT" | grep -c '^error: ')
  if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | grep -qx '42' && [ "$errs" = 1 ] &&
     printf '%s\n' "$OUT" | grep -qx "error: prompt:1: attempt to call global 'nosuch' (a nil value)" &&
     printf '%s\n' "$OUT" | grep -qx 'no tasks' && printf '%s\n' "$OUT" | grep -qx '"still here"'; then
    echo "ok   $N: prompt after: $1"
  else
    echo "FAIL $N: prompt after: $1: expected exit 0, 42, one error line, the helper's line and \"still here\"; got rc $RC:"
    printf '%s\n' "$OUT" | tail -6; printf '%s\n' "$ERR" | grep -v '^EAL' | head -3
    FAILS=$((FAILS + 1))
  fi
}
for line in 'print = nil' 'tostring = 1' 'pcall = nil' 'xpcall = nil' 'error = nil' 'require = nil' \
  'ipairs = nil' 'pairs = nil' 'type = nil' 'select = nil' 'unpack = nil' 'setmetatable = nil' \
  'getmetatable = nil' 'rawget = nil' 'setfenv = nil' 'loadstring = nil' 'tonumber = nil' 'string = nil' \
  'table = nil' 'io = nil' 'os = nil' 'jit = nil' 'package = nil' '_G = nil' \
  '_G.tostring = 1' '_G.pcall = nil' '_G.xpcall = nil' '_G.require = nil' '_G.pairs = nil' '_G.ipairs = nil' \
  '_G.select = nil' '_G.type = nil' '_G.string = nil' '_G.table = nil' 'rawset(_G, "tostring", nil)' \
  'string.format = nil' 'string.rep = nil' 'string.gsub = nil' 'string.match = nil' 'string.sub = nil' \
  'table.concat = nil' 'table.insert = nil' 'table.sort = nil' 'io.write = nil' 'math.floor = nil' \
  'jit.off = nil' 'os.getenv = nil' '_G = nil; pcall(function() _G.tostring = 1 end)' \
  'local G = _G; for k in pairs(G) do if k ~= "tasks" then G[k] = nil end end'; do
  prompt "$line"
done
tostring_kept=$(printf 'tostring = 1\nreturn type(tostring)\n' | timeout 30 "$SURGE" repl --no-huge 2>/dev/null)
check_match "the user's own replacement stays theirs" '^"number"$' "$tostring_kept"

echo "$N rows"
finish
