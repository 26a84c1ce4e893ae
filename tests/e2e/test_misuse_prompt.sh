#!/bin/bash
# test_misuse_prompt.sh - the prompt, `surge attach`, the control socket and
# DPDK telemetry under hostile use, table-driven (issue 23 item 14), as
# test_misuse.sh is for the API. docs/guarantees.md, "The prompt, the
# control socket and telemetry under hostile use", states what the rows prove.
#
# Part 1 (here): `surge repl < input`, one instance per row. Each row is the
# hostile input, the exit status and a regex its output must match; every
# row also asserts no crash text, that the prompt still answers afterwards
# (a line after the input prints "alive", where the row goes on), and that
# the run's summary still appears. Part 2 (tests/e2e/repl/misuse_prompt.py):
# the terminal (Ctrl-C, Ctrl-D, Ctrl-Z), the socket and telemetry.
. "$(dirname "$0")/lib.sh"
need_cmd python3

IN=$TMP/in.bin
N=0
# row NAME RC REGEX [ALIVE=yes|no] [SURGE OPTIONS...]: stdin is "$IN" (the
# row's input), after a first line that opens a port (so that the summary
# has a line) and before a last line `"alive"`.
row() {
  local name=$1 rc=$2 re=$3 alive=${4:-yes}
  shift 4 2>/dev/null || shift $#
  N=$((N + 1))
  { printf 'p = surge.port(0)\n'; cat "$TMP/row"; printf '\n"alive"\n'; } >"$IN"
  run_surge 40 repl --no-huge --stats-interval 0 "$@" <"$IN"
  local all="$OUT
$ERR" bad=""
  [ "$RC" = "$rc" ] || bad="exit status $RC, expected $rc"
  printf "%s" "$all" | LC_ALL=C grep -Eq -- "$re" || bad="$bad; no match for /$re/"
  ! printf '%s' "$all" | grep -Eq -- "$CRASH_RE" || bad="$bad; crash text"
  if [ "$alive" = yes ]; then
    printf '%s\n' "$OUT" | grep -qx '"alive"' || bad="$bad; the prompt did not answer afterwards"
  fi
  printf '%s\n' "$OUT" | grep -q '^surge: summary over' || bad="$bad; no summary"
  printf '%s\n' "$all" | grep -q 'leaked' && bad="$bad; a leak"
  if [ -z "$bad" ]; then echo "ok   $N: $name"; else
    echo "FAIL $N: $name: ${bad#; }"; show_run 8; FAILS=$((FAILS + 1)); fi
  check_no_runtime_dir "$N" "$SURGE_PID" >/dev/null
}
input() { printf "$@" >"$TMP/row"; }

echo "# the prompt without a terminal: one instance per row"
input 'x = "a\0b"\nreturn #x, x\n'
row "a NUL byte inside a line is part of it" 0 '^3	"a\\000b"$'
input 'return "\xff\xfe\xc3("\n'
row "invalid UTF-8 in a line is bytes in a string" 0 $'^"\xff\xfe\xc3\\("$'
LC_ALL=C awk 'BEGIN { srand(7); for (i = 0; i < 4096; i++) { c = 1 + int(rand() * 255); printf "%c", c == 10 ? 32 : c } }' \
  >"$TMP/row"
row "4 KiB of binary garbage (a fixed seed): one error line, the session goes on" 0 '^error: prompt:1: '
printf '\033LJ\002\000garbage\n' >"$TMP/row"
row "a line that starts like LuaJIT bytecode (byte 27) is refused, never loaded as bytecode" 0 \
  '^error: prompt:1: the line starts with byte 27, as LuaJIT bytecode does: only Lua source is run here$'
{ printf 'x = "'; head -c $(((1 << 20) - 5)) /dev/zero | tr '\0' a; printf '"\nprint(x)\n'; } >"$TMP/row"
row "a line of 1 MiB + 1 byte: refused whole with one line, nothing of it runs" 0 \
  '^error: the line is longer than the 1048576 bytes a line may have: not run$'
[ "$(grep -c '^error: ' <<<"$OUT")" = 1 ] && grep -qx nil <<<"$OUT" ||
  { echo "FAIL $N: more than one error line, or part of the line ran"; FAILS=$((FAILS + 1)); }
input 'function f()\nprint(1)\n'
row "input that ends inside a statement (an end missing): Lua's error for it, exit 1" 1 \
  "^error: prompt:4: 'end' expected \\(to close 'function' at line 1\\) near '<eof>'\$" no
input 'setmetatable({}, { __tostring = function() error("ts boom") end })\n'
row "a __tostring that raises" 0 '^error: prompt:1: ts boom$'
input 'setmetatable({}, { __index = function() error("idx boom") end }).x\n'
row "an __index that raises" 0 '^error: prompt:1: idx boom$'
input 'setmetatable({}, { __pairs = function() error("pairs boom") end })\n'
row "a __pairs that raises (the value is shown without it)" 0 '^\{ *\}$'
input 'error(setmetatable({}, { __tostring = function() return {} end }))\n'
row "an error value whose __tostring gives no string" 0 '^error: prompt:1: error raised with a table'
input 'os.exit()\n'
row "os.exit() typed: the run ends, exit 0, the summary" 0 '' no
input 'os.exit(7)\n'
row "os.exit(7) typed: exit 7, the summary" 7 '' no
input 'os.exit("x")\n'
row "os.exit(\"x\"): not a status, an error line; the session goes on" 0 \
  '^error: prompt:1: os.exit: status: expected true, false, nothing or an integer in 0..255, got "x"$'
input 'coroutine.yield(1)\n'
row "coroutine.yield at the top of a line" 0 '^error: prompt:1: attempt to yield across C-call boundary$'
input 'co = coroutine.wrap(function() surge.sleep(0.05) coroutine.yield(1) end)\nco()\nco()\nco()\n'
row "a coroutine that calls surge, then is resumed dead" 0 '^error: prompt:1: cannot resume dead coroutine$'
input 'string.rep("x", 5e6)\nfor i = 1, 100000 do print(i) end\n'
row "huge outputs (5 MB string, 100000 lines)" 0 '^100000$'
input 'function f(n) return 1 + f(n + 1) end\nf(1)\n'
row "deep recursion" 0 '^error: prompt:1: stack overflow'
input 'surge.wait("x")\nsurge.wait(99)\nsurge.launch(42)\nsurge.launch("nosuch")\nlaunch()\nstop("x")\nsurge.wait()\nsurge.poll()\n'
row "surge.wait()/launch() and the helpers called wrongly" 0 \
  'surge.wait: id: expected an integer in 0..1023, got "x"'
grep -q "no global function 'nosuch'" <<<"$OUT" && grep -q '^error: prompt:1: stop: no running task x$' <<<"$OUT" ||
  { echo "FAIL $N: launch/stop errors missing"; FAILS=$((FAILS + 1)); }
input 'launch(string.rep, "x", 3)\nlaunch(surge.sleep, 1)\nlocal t = 1; launch(function() return t end)\n'
row "launch() given a C function, one of surge's own, a closure: one line at the prompt naming it" 0 \
  '^error: prompt:1: launch: string\.rep is a C function, not a function typed at the prompt'
grep -q "^error: prompt:1: launch: surge.sleep is one of surge's own, not a function typed" <<<"$OUT" &&
  grep -q "^error: prompt:1: launch: the function uses 't', a local from outside it" <<<"$OUT" &&
  ! grep -q 'lua/surge/' <<<"$OUT" || { echo "FAIL $N: launch's errors"; FAILS=$((FAILS + 1)); }
input 'surge.stop()\n'
row "surge.stop() typed: the run ends as SIGTERM would (exit 0, summary)" 0 '' no
input 'while true do end\n'
row "an endless loop without a terminal: the run's end (--duration) interrupts it" 0 \
  '^error: interrupted \(the run stopped\)$' no --duration 1
input 'while true do pcall(function() while true do end end) end\n'
row "an endless loop that catches its interrupt: the watchdog ends it (exit 3)" 3 \
  'the command typed at the prompt still runs .* after the run stopped' no --duration 1 --stop-grace 0.5

echo "# the terminal, the control socket, telemetry"
timeout -k 5 250 python3 "$E2E_DIR/repl/misuse_prompt.py"
PY=$?
[ "$PY" = 0 ] || { echo "FAIL misuse_prompt.py: exit $PY"; FAILS=$((FAILS + 1)); }
finish
