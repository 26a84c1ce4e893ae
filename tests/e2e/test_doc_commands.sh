#!/bin/bash
# test_doc_commands.sh - the commands README.md and docs/ give a new user,
# run as written (issue 22: "every documented command works as written").
#
# Each row names the file and the exact line it shows (the row fails when the
# doc no longer has that line, so doc and test cannot drift), how to run it
# (to its end, or Ctrl-C after N seconds for the ones that run until
# stopped), the exit status and a line its output must have. The commands
# run from a folder where build/surge and `surge` on PATH are the binary
# under test and examples/ is the source tree's. Lines that need a terminal
# (the prompt), a second instance's PID, or change the machine (install)
# are proven by their own tests (test_repl_*, test_telemetry, test_install).
. "$(dirname "$0")/lib.sh"
need_cmd timeout

W=$TMP/work
mkdir -p "$W/build" "$TMP/bin"
ln -s "$SURGE" "$W/build/surge"
ln -s "$SURGE" "$TMP/bin/surge"
ln -s "$SURGE_SRC/examples" "$W/examples"
ln -s "$SURGE_SRC/scripts" "$W/scripts"
ln -s "$SURGE_SRC/bench" "$W/bench"
export PATH=$TMP/bin:$PATH
N=0

# doc FILE LINE RUN RC REGEX: RUN is "end" (to its end, 180 s at most) or
# "int:S" (SIGINT after S seconds, as a user's Ctrl-C)
doc() {
  local file=$1 line=$2 run=$3 rc=$4 re=$5 cmd got
  N=$((N + 1))
  if ! grep -qxF -- "$line" "$SURGE_SRC/$file"; then
    echo "FAIL $N: $file no longer shows: $line"; FAILS=$((FAILS + 1)); return
  fi
  cmd=$(printf '%s' "$line" | sed -E 's/[[:space:]]+#[[:space:]].*$//')   # the doc's comment
  if [ "$run" = end ]; then
    (cd "$W" && timeout -k 5 180 bash -c "$cmd") >"$TMP/out" 2>&1
    got=$?
  else
    # one SIGINT to surge alone, as Ctrl-C gives the foreground process
    (cd "$W" && exec bash -c "exec $cmd") >"$TMP/out" 2>&1 &
    local pid=$! waited=0
    sleep "${run#int:}"
    kill -INT "$pid" 2>/dev/null
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 300 ]; do sleep 0.1; waited=$((waited + 1)); done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid"
    got=$?
  fi
  if [ "$got" = "$rc" ] && grep -Eq -- "$re" "$TMP/out"; then
    echo "ok   $N: $file: $cmd"
  else
    echo "FAIL $N: $file: $cmd: expected exit $rc and /$re/, got exit $got:"; tail -8 "$TMP/out"
    FAILS=$((FAILS + 1))
  fi
  check_nomatch "$N: no crash text" "$CRASH_RE" "$(cat "$TMP/out")" >/dev/null
}

echo "# README.md"
doc README.md 'build/surge run examples/udp-flood.lua --help' end 0 '^usage: surge run'
doc README.md 'build/surge run --duration 10 examples/udp-flood.lua --flows 256 --size 128' end 0 '^surge: summary over 10\.0'
doc README.md 'build/surge run --vdev net_pcap0,tx_pcap=/tmp/out.pcap examples/udp-flood.lua --count 1000 --flows 10' \
  end 0 'TX 1000 packets'
doc README.md 'build/surge run examples/udp-flood.lua --clones 8        # each mbuf sent 8 times, one refcount add' \
  int:3 0 '^surge: summary over'
doc README.md "build/surge run --vdev net_ring0 --lcores '(0-2)@(0-1)' examples/loopback.lua   # TX and RX task" \
  end 0 '^surge: summary over'
doc README.md 'build/surge devices                                       # ports, drivers, offloads' end 0 'net_null'
doc README.md 'build/surge show examples/flows.lua                       # first packets, decoded, no port opened' \
  end 0 '^packet 1, .*csum ok'
doc README.md 'build/surge run examples/rate.lua                         # every pacing mode, re-rated from master' \
  end 0 '^surge: summary over'
doc README.md 'build/surge run examples/latency.lua                      # probes under load: p50/p99/p99.9, loss' \
  end 0 '^latency: sent [0-9]+ packets in (2\.9|3\.0)'
doc README.md 'build/surge run examples/imix.lua                         # 7:4:1 IMIX' int:2 0 '60 bytes .*packets'
# the replay line reads in.pcap: the user's own capture; here the pcap line's
cp /tmp/out.pcap "$W/in.pcap"
doc README.md 'build/surge run examples/replay.lua --file in.pcap --timing original' end 0 '^surge: summary over'
doc README.md 'build/surge run --duration 10 --output run.json examples/latency.lua   # results file (.json/.csv)' \
  end 0 '^latency: sent [0-9]+ packets in (9\.9|10\.0)'
doc README.md 'build/surge plot run.json                                 # run-rate.svg, run-latency.svg, ...: one figure per chart' \
  end 0 '^surge: wrote .*run-rate\.svg'
check_true "the figures are there: run-rate.svg, run-latency.svg" "$(ls "$W")" test -s "$W/run-rate.svg" -a -s "$W/run-latency.svg"
doc README.md 'build/surge scenarios                                     # rfc2544, load-latency, flood, qos, replay, mlrsearch, y1564, rfc2889, rfc3918, rfc9693, http' \
  end 0 'rfc2544'
doc README.md 'build/surge run --vdev net_ring0 rfc2544 --sizes 64,512 --max-rate 50kpps   # a scenario by name' \
  end 0 '^ +512 +[0-9]+'
doc README.md 'SURGE_PATH=examples/scenarios build/surge run --vdev net_ring0 sweep   # your own scenario' \
  end 0 '^surge: summary over'

echo "# docs/guide.md"
ln -s "$SURGE_SRC/tests" "$W/tests"
doc docs/guide.md 'build/surge test --no-huge tests/lua/test_flow.lua tests/lua/test_ports.lua' end 0 ' passed, 0 failed$'

echo "# docs/scenarios.md"
doc docs/scenarios.md 'surge scenarios                                   # names and one-line descriptions' end 0 'load-latency'
doc docs/scenarios.md "surge run rfc2544 --help                          # a scenario's options (no DPDK start-up)" \
  end 0 '^usage: surge run'
doc docs/scenarios.md 'surge run --vdev net_ring0 load-latency --rates 10kpps,50kpps   # a loopback: a perfect DUT' \
  end 0 '50'
doc docs/scenarios.md 'SURGE_PATH=examples/scenarios surge run --vdev net_ring0 sweep --sizes 64,1518 --rate 20kpps' \
  end 0 '1518'

echo "# docs/results.md"
doc docs/results.md 'surge run --duration 10 --output run.csv  examples/udp-flood.lua' end 0 '^surge: summary over'
doc docs/hosts.md 'surge run --no-huge examples/many-hosts.lua --count 1000000 --seconds 1' end 0 '^hosts: bound 1000000$'
doc docs/hosts.md 'surge run --no-huge --vdev net_null0 examples/mcast-hosts.lua --count 1000000 --join 239.5.5.5@0+1000000v3 --robustness 1 --seconds 3 --linger 0' \
  end 0 '^joined: the joins. reports sent in [0-9.]+ s [(]1000000 reports'
doc docs/hosts.md 'surge run --no-huge --vdev net_ring0 bench/hosts.lua --role both --count 1000000' end 0 \
  '^dhcp-server: 1000000 acks, 1000000 leases, 0 naks$'
doc docs/hosts.md 'surge run --no-huge --vdev net_ring0 examples/hosts-ping.lua --count 1001 --ip 10.50.0.1 --mac 02:50:00:00:00:01 --target 10.50.0.1 --to-mac 02:50:00:00:00:01 --first 1 --rate 100000 --interval 0.1' \
  end 0 '^ping: [0-9]+ sent, [0-9]+ replies, 0 timeouts'
check_match "run.csv has a header and rows" '^[a-z_]+,' "$(head -1 "$W/run.csv" 2>/dev/null)"
doc docs/results.md 'mkdir -p fig && surge plot run.json -o fig/run.png   # -> fig/run-rate.png, fig/run-latency.png, ...' end 0 '^surge: wrote .*fig/run-rate\.png'
check_match "fig/run-rate.png is a PNG" "PNG image" "$(file "$W/fig/run-rate.png" 2>/dev/null)"

finish
