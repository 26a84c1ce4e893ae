"""test_control.py - `surge run --control PATH` and `surge attach`.

The socket is the owner's only (0600); a second instance on the same path is
refused while a stale socket from a dead run is replaced; several clients
are served at once; a client killed in the middle of a command, garbage
bytes and a request of an unknown kind leave the run sending; attach -e
prints results (exit 0) and errors (exit 1); the interactive attach prompt
continues unfinished statements; and the run ends through the socket with
its summary, every pool full and the socket removed.
"""
import os, re, socket, stat, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(__file__))
from pty_drive import Term
from wire import frame, recv_frame

SURGE = os.environ["SURGE"]
FLOOD = os.path.join(os.environ["SURGE_SRC"], "tests/e2e/repl/flood.lua")
tmp = tempfile.mkdtemp(prefix="surge-repl-ctl-")
ctl = os.path.join(tmp, "ctl.sock")
env = dict(os.environ, HOME=tmp, TERM="xterm")
fails = 0


def check(name, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else ": " + detail))
    fails += 0 if cond else 1


def attach(code, timeout=15):
    return subprocess.run([SURGE, "attach", ctl, "-e", code], capture_output=True, text=True, timeout=timeout)


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(ctl)
    return s


# a stale socket (its server died without removing it) must not block a start
stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
stale.bind(ctl)
stale.close()

out = open(os.path.join(tmp, "run.out"), "w+")
run = subprocess.Popen(["timeout", "-k", "5", "120", SURGE, "run", "--no-huge", "--stats-interval", "0",
                        "--lcores", "(0-1)@(0-1)", "--control", ctl, FLOOD], stdout=out, stderr=subprocess.STDOUT,
                       env=env)
for _ in range(100):
    r = attach("1") if os.path.exists(ctl) else None
    if r is not None and r.returncode == 0:
        break
    time.sleep(0.1)
check("a stale socket file is replaced and attach -e answers", r is not None and r.stdout.strip() == "1",
      repr(r and (r.stdout, r.stderr)))
mode = stat.S_IMODE(os.stat(ctl).st_mode)
check("the socket is mode 0600", mode == 0o600, oct(mode))

r = subprocess.run([SURGE, "repl", "--no-huge", "--control", ctl], capture_output=True, text=True, timeout=30,
                   stdin=subprocess.DEVNULL)
check("a second instance on the same path is refused before EAL starts (exit 2, one line)",
      r.returncode == 2 and r.stderr.startswith("surge: --control " + ctl + ": another surge is listening there")
      and "EAL" not in r.stderr, repr((r.returncode, r.stderr)))

r = attach("tasks()")
check("attach -e tasks(): master's sender is running", re.search(r"\n1\s+tx\s+running", r.stdout) is not None,
      r.stdout)
r = attach('surge.port(0):txq(0):set_rate("2mpps")')
check("attach -e re-rates a queue (the result is printed)", r.returncode == 0 and "txq(0,0)" in r.stdout, r.stdout)
r = attach("surge.lcore()")
check("code from the socket runs on the master lcore (0), not a worker", r.returncode == 0 and r.stdout.strip() == "0",
      repr((r.stdout, r.stderr)))
r = attach("x = = 1")
check("attach -e with a syntax error: exit 1, one line on stderr", r.returncode == 1 and
      r.stderr.strip().startswith("error: prompt:1:") and r.stderr.count("\n") == 1, repr(r.stderr))
r = attach("function f(")
check("attach -e with unfinished code: exit 1, says so", r.returncode == 1 and "incomplete" in r.stderr, r.stderr)

# several clients at once, each with its own unfinished statement
a, b = connect(), connect()
a.sendall(frame(b"efunction add(x, y)"))
check("client A: unfinished statement -> 'm' (more)", recv_frame(a) == b"m")
b.sendall(frame(b"e40 + 2"))
check("client B is served meanwhile", recv_frame(b) == b"o42\n")
a.sendall(frame(b"ereturn x + y end"))
recv_frame(a)
a.sendall(frame(b"eadd(1, 2)"))
check("client A's function was completed and runs", recv_frame(a) == b"o3\n")
b.sendall(frame(b"csurge.po"))
cands = recv_frame(b)
check("completion over the socket lists surge.pool and surge.port",
      cands is not None and b"surge.pool" in cands and b"surge.port" in cands, repr(cands))
a.close()
b.close()

# a client killed in the middle of a command
p = subprocess.Popen([SURGE, "attach", ctl, "-e", "surge.sleep(1.5) return 'late'"])
time.sleep(0.3)
p.kill()
p.wait()
s = connect()
s.sendall(frame(b"esurge.sleep(1.0)"))
s.close()                                  # gone before its reply
r = attach("1 + 1")
check("after clients died mid-command the run answers", r.returncode == 0 and r.stdout.strip() == "2", r.stderr)

# garbage
s = connect()
s.sendall(b"hello, surge\n")
rep = recv_frame(s)
check("garbage bytes get an error reply", rep is not None and rep.startswith(b"enot a surge request"), repr(rep))
s.close()
s = connect()
s.sendall(os.urandom(4096))
try:
    rep = recv_frame(s)
except OSError:
    rep = None
s.close()
s = connect()
s.sendall(frame(b"xwhat"))
rep = recv_frame(s)
check("an unknown request kind gets an error reply", rep is not None and rep.startswith(b"e"), repr(rep))
s.close()
s = connect()
s.sendall(b"99999999999\n")
rep = recv_frame(s)
check("an oversized length gets an error reply", rep is not None and rep.startswith(b"e"), repr(rep))
s.close()
s = connect()
big = b"ereturn #'" + b"a" * (2 ** 20 - 11) + b"'"    # the largest request: 1 MiB
s.sendall(frame(big))
rep = recv_frame(s)
check("a 1 MiB request is served whole", rep == b"o%d\n" % (2 ** 20 - 11), repr(rep)[:80])
s.close()
s = connect()
s.sendall(frame(b"e" + b"x" * (2 ** 20 + 1)))   # over the limit: refused, the connection kept
rep = recv_frame(s)
check("a request over 1 MiB gets an error reply that says so", rep is not None and rep.startswith(b"e")
      and b"more than the 1048576 bytes a request may have" in rep, repr(rep)[:120])
s.sendall(frame(b"e6 * 7"))
rep = recv_frame(s)
check("the connection goes on after the refused request", rep == b"o42\n", repr(rep))
s.close()
r = attach('return string.rep("x", 2e6)')
check("a reply over 1 MiB: exit 1 and an error that says so", r.returncode == 1 and
      "more than the 1048576 bytes a reply may have" in r.stderr, repr((r.returncode, r.stderr))[:300])


def sent():
    r = attach("surge.port(0):stats().tx_packets")
    return int(r.stdout) if r.returncode == 0 and r.stdout.strip().isdigit() else -1


# a client's value with a broken __tostring, or one whose __index raises: an
# error reply, and the run goes on sending
for code in ('setmetatable({}, {__tostring = function() error("x") end})',
             'setmetatable({}, {__index = function() error("idx") end})',
             'error(setmetatable({}, {__tostring = function() return nil end}))'):
    r = attach(code)
    check("attach -e %s: exit 1, one error line" % code, r.returncode == 1 and r.stderr.startswith("error: prompt:1: ")
          and r.stderr.count("\n") == 1, repr((r.returncode, r.stdout, r.stderr)))
a0 = sent()
time.sleep(0.3)
check("the run keeps sending after the clients' bad values", 0 <= a0 < sent())

# a client's endless loop: the instance waits for it (requests are served one
# at a time), until its client leaves; then the command is interrupted
p = subprocess.Popen([SURGE, "attach", ctl, "-e", "while true do end"])
time.sleep(0.5)
p.kill()
p.wait()
t0 = time.time()
r = attach("return 1", timeout=10)
check("a client that left ends its endless loop: the next client is served",
      r.returncode == 0 and r.stdout.strip() == "1" and time.time() - t0 < 3, repr((r.stdout, r.stderr)))
a0 = sent()
time.sleep(0.3)
check("the run keeps sending after the client's loop was interrupted", 0 <= a0 < sent())

r = attach("tasks()")
check("after the garbage the sender is still running", re.search(r"\n1\s+tx\s+running", r.stdout) is not None,
      r.stdout + r.stderr)

# the interactive client
t = Term([SURGE, "attach", ctl], env)
t.expect(r"surge> ")
t.type("function g(n)\r")
t.expect(r"   >> ")
t.type("return n * 3 end\r")
t.expect(r"surge> ")
t.type("g(14)\r")
t.expect(r"\n42\n")
t.type("nosuch()\r")
t.expect(r"error: prompt:1: attempt to call global 'nosuch'")
t.type("\x04")
check("surge attach: prompt, multi-line, errors, Ctrl-D detaches", t.close() == 0)
check("the run goes on after the client detached", run.poll() is None)

# Ctrl-D typed while the client's request runs: kept for after it (the
# request finishes, then the Ctrl-D on the empty prompt detaches), never
# lost (it was: the client sat at its prompt for ever) nor a wedge
t = Term([SURGE, "attach", ctl], env)
t.expect(r"surge> ")
t.type("surge.sleep(1.5) return 'slept'\r")
time.sleep(0.4)
t0 = time.monotonic()
t.type("\x04")
try:
    t.expect(r'"slept"\n', timeout=10)
    rc = t.close(timeout=8)
except AssertionError as e:
    rc = "hung: %s" % str(e)[-300:]
check("attach: Ctrl-D while the request runs: it finishes, then the client leaves (exit 0, < 6 s)",
      rc == 0 and time.monotonic() - t0 < 6, "rc=%s" % rc)
# the client holds VEOF off for its whole session (a Ctrl-D that reached
# the terminal between its reads was lost): the terminal's own settings are
# back when it leaves, by Ctrl-D and by Ctrl-C (which ends the client), as
# the shell's next command sees them
for key, how in (("\x04", "Ctrl-D"), ("\x03", "Ctrl-C")):
    t = Term(["sh", "-c", 'trap : INT; "$0" attach "$1"; echo "left $?"; stty -a', SURGE, ctl], env)
    t.expect(r"surge> ")
    t.type("6 * 7\r")
    t.expect(r"\n42\n")
    t.expect(r"surge> ")
    t.type(key)
    try:
        t.expect(r"left (\d+)\n", timeout=10)
        left = re.findall(r"left (\d+)\n", t.screen)[-1]
        t.expect(r"eof = ([^;]+);")
        eof = re.findall(r"eof = ([^;]+);", t.screen)[-1]
        rc = t.close(timeout=8)
    except AssertionError as e:
        left, eof, rc = "hung", str(e)[-300:], None
    check("attach left by %s (exit %s), the terminal's eof is ^D again" % (how, "0" if key == "\x04" else "130"),
          left == ("0" if key == "\x04" else "130") and eof == "^D" and rc == 0, "left=%s eof=%s rc=%s" % (left, eof, rc))

r = attach("1 + 1")
check("attach: after that Ctrl-D the instance serves other clients", r.returncode == 0 and r.stdout.strip() == "2",
      repr((r.returncode, r.stdout, r.stderr)))
check("attach: after that Ctrl-D the run goes on", run.poll() is None)

r = attach("surge.stop()")
rc = run.wait(timeout=30)
out.seek(0)
text = out.read()
check("surge.stop() through the socket ends the run with exit 0", rc == 0, text[-600:])
check("the summary is printed", re.search(r"summary over [\d.]+ s\n\s+port 0\s+TX \d+ packets", text) is not None)
check("every pool is full again", re.search(r"pool \d+: (\d+) of \1 mbufs back, no leak", text) is not None
      and "leaked" not in text, text[-400:])
check("the socket is removed at exit", not os.path.exists(ctl))

# a master that never calls surge.wait(): clients are served from its
# surge.poll() and surge.sleep() loops, from the start of master()
LOOP = os.path.join(os.environ["SURGE_SRC"], "tests/e2e/repl/poll_loop.lua")
for mode in ("poll", "sleep"):
    lout = open(os.path.join(tmp, "loop-%s.out" % mode), "w+")
    run = subprocess.Popen(["timeout", "-k", "5", "120", SURGE, "run", "--no-huge", "--stats-interval", "0",
                            "--control", ctl, LOOP, "--mode", mode], stdout=lout, stderr=subprocess.STDOUT,
                           env=env)
    r = None
    for _ in range(100):
        r = attach("tasks()") if os.path.exists(ctl) else None
        if r is not None and r.returncode == 0:
            break
        time.sleep(0.1)
    check("master looping on surge.%s(): attach -e is served, the task runs" % mode,
          r is not None and re.search(r"\n1\s+tx\s+running", r.stdout) is not None,
          repr(r and (r.returncode, r.stdout, r.stderr)))
    r = attach("surge.stop()")
    rc = run.wait(timeout=30)
    lout.seek(0)
    text = lout.read()
    check("master looping on surge.%s(): surge.stop() from a client ends it, exit 0" % mode,
          rc == 0 and "master: loop ended" in text and "no leak" in text, text[-600:])
    check("master looping on surge.%s(): the socket is removed" % mode, not os.path.exists(ctl))

# the stop interrupts a client's endless loop: --duration ends the run on
# time with exit 0, the summary and the pool check (no watchdog), and the
# client hears why its command ended
lout = open(os.path.join(tmp, "loop-duration.out"), "w+")
run = subprocess.Popen(["timeout", "-k", "5", "60", SURGE, "run", "--no-huge", "--stats-interval", "0",
                        "--lcores", "(0-1)@(0-1)", "--duration", "3", "--control", ctl, FLOOD], stdout=lout,
                       stderr=subprocess.STDOUT, env=env)
for _ in range(100):
    r = attach("1") if os.path.exists(ctl) else None
    if r is not None and r.returncode == 0:
        break
    time.sleep(0.1)
r = attach("while true do end", timeout=30)
rc = run.wait(timeout=30)
lout.seek(0)
text = lout.read()
check("--duration interrupts a client's endless loop; the client hears why",
      r.returncode == 1 and "interrupted (the run stopped)" in r.stderr, repr((r.returncode, r.stderr)))
check("--duration with a client's loop: exit 0, summary, pools full, no watchdog",
      rc == 0 and "summary over" in text and "no leak" in text and "still runs" not in text, text[-600:])

open(ctl, "w").close()                    # a plain file is not ours to replace
r = subprocess.run([SURGE, "repl", "--no-huge", "--control", ctl], capture_output=True, text=True, timeout=30,
                   stdin=subprocess.DEVNULL)
check("a path that is not a socket is refused", r.returncode != 0 and "is not a socket" in r.stderr, r.stderr)
r = subprocess.run([SURGE, "attach", os.path.join(tmp, "none.sock"), "-e", "1"], capture_output=True, text=True,
                   timeout=10)
check("attach to a path nobody serves: exit 1, says what to check", r.returncode == 1 and
      "is a surge running with --control" in r.stderr and r.stderr.count("\n") == 1, r.stderr)
print("all checks passed" if fails == 0 else "%d check(s) failed" % fails)
sys.exit(1 if fails else 0)
