#!/bin/bash
# test_progress.sh - progress with an ETA (lua/surge/results/progress.lua): on a
# terminal (a pseudo-terminal from python's pty module) one stderr line is
# rewritten in place ("\r" + erase), its percentage only grows, and it ends
# at 100 % with a newline; piped, it is plain "progress: ..." lines ending
# at 100 %; --quiet prints none. udp-flood --count and a pcap replay show
# it; a master can draw it itself with surge.progress(done, total, label).
. "$(dirname "$0")/lib.sh"
need_cmd python3
P=$E2E_DIR/results/progress.lua

TTY=$(python3 - "$SURGE" "$P" <<'PY'
import os, pty, re, sys
pid, fd = pty.fork()
if pid == 0:
    null = os.open("/dev/null", os.O_WRONLY)
    os.dup2(null, 1)                       # stats lines away: stderr stays the terminal
    os.execv("/usr/bin/timeout", ["timeout", "60", sys.argv[1], "run", "--no-huge", "--stats-interval", "0",
                                  sys.argv[2], "--count", "300000", "--rate", "200kpps"])
out = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
text = out.decode(errors="replace")
draws = text.split("\r\x1b[K")[1:]
pcts = [float(m.group(1)) for d in draws for m in [re.search(r"sent +([\d.]+)% ", d)] if m]
print("exit", os.waitstatus_to_exitcode(status))
print("rewrites>=5", len(draws) >= 5)
print("grows", pcts == sorted(pcts))
print("ends", bool(draws) and bool(re.match(r"sent 100\.0% 300000/300000  elapsed [\d:]+  ETA 0:00$", draws[-1].strip())),
      repr(draws[-1][-2:]) if draws else "")
print("eta", all("ETA" in d for d in draws))
PY
)
check "tty: the line is rewritten in place, grows and ends at 100 %" "exit 0
rewrites>=5 True
grows True
ends True '\\r\\n'
eta True" "$TTY"

run_surge 60 run --no-huge --stats-interval 0 "$P" --count 300000 --rate 200kpps
check "piped: exit 0" 0 "$RC"
check "piped: no carriage returns" 0 "$(printf '%s' "$ERR" | tr -cd '\r' | wc -c)"
check_match "piped: plain lines" '^progress: sent +[0-9.]+% [0-9]+/300000  elapsed [0-9:]+  ETA' "$ERR"
check_match "piped: ends at 100 %" 'progress: sent 100\.0% 300000/300000  elapsed [0-9:]+  ETA 0:00$' "$(printf '%s\n' "$ERR" | tail -1)"

run_surge 60 run --no-huge --stats-interval 0 "$P" --count 300000 --rate 200kpps --own 1
check_match "surge.progress() from master: ends at 100 %" '^progress: own 100\.0% 300000/300000' "$(printf '%s\n' "$ERR" | tail -1)"

run_surge 60 run --no-huge -q "$P" --count 100000 --rate 200kpps
check "--quiet: exit 0" 0 "$RC"
check "--quiet: no progress" "" "$(printf '%s\n' "$ERR" | grep progress)"

run_surge 60 run --no-huge --stats-interval 0 "$EXAMPLES/udp-flood.lua" --count 2000000
check_match "udp-flood --count: progress ends at 100 %" '^progress: sent 100\.0% 2000000/2000000' "$(printf '%s\n' "$ERR" | grep progress | tail -1)"
run_surge 60 run --no-huge --stats-interval 0 "$EXAMPLES/replay.lua" --loop 3
check "replay: exit 0" 0 "$RC"
N=$(printf '%s\n' "$OUT" | sed -nE 's/^replay: sent ([0-9]+) packets$/\1/p')
check_match "replay --loop 3: progress ends at 100 % of what it sent ($N)" "^progress: replayed 100\\.0% $N/$N" \
  "$(printf '%s\n' "$ERR" | grep progress | tail -1)"

# scenarios: their steps, and a replay scenario's frames
run_surge 120 run --no-huge --stats-interval 0 --vdev net_ring0 load-latency --rates 10kpps,20kpps,30kpps \
  --trial 0.2 --settle 0.1 --probes 100
check "load-latency: exit 0" 0 "$RC"
check_match "load-latency: starts at 0 %" '^progress: load-latency +0\.0% 0/3' \
  "$(printf '%s\n' "$ERR" | grep progress | head -1)"
check_match "load-latency: ends at 100 %" '^progress: load-latency 100\.0% 3/3  elapsed [0-9:]+  ETA 0:00$' \
  "$(printf '%s\n' "$ERR" | grep progress | tail -1)"
run_surge 120 run --no-huge --stats-interval 0 --vdev net_ring0 rfc2544 --sizes 64,128 --tests throughput,latency \
  --max-rate 20kpps --trial 0.2 --settle 0.1 --latency-trial 0.2 --probes 100
check "rfc2544: exit 0" 0 "$RC"
check_match "rfc2544: ends at 100 % of sizes x tests" '^progress: rfc2544 100\.0% 4/4' \
  "$(printf '%s\n' "$ERR" | grep progress | tail -1)"
finish
