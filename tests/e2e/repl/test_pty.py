"""test_pty.py - the prompt at a real terminal, typed as a person would.

Expression values, a multi-line function, Tab completion, history across a
restart, Ctrl-C on a half-typed line, the three kinds of error, Ctrl-C twice
at an empty prompt stopping the tasks, and Ctrl-D leaving with the summary
and every pool full. `surge run -i` opens the same prompt at surge.wait().
"""
import json, os, re, signal, sys, tempfile
sys.path.insert(0, os.path.dirname(__file__))
from pty_drive import Term

SURGE = os.environ["SURGE"]
SRC = os.environ["SURGE_SRC"]
FLOOD = os.path.join(SRC, "tests/e2e/repl/flood.lua")
home = tempfile.mkdtemp(prefix="surge-repl-pty-")
env = dict(os.environ, HOME=home, TERM="xterm")
BASE = [SURGE, "repl", "--no-huge", "--lcores", "(0-2)@(0-1)"]
fails = 0


def check(name, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + detail))
    fails += 0 if cond else 1


# --- session 1 --------------------------------------------------------------
t = Term(BASE + [FLOOD], env)
t.expect(r"surge> ")
t.type("6 * 7\r")
t.expect(r"\n42\n")
check("an expression prints its value", True)
t.type("function twice(x)\r")
t.expect(r"   >> ")
t.type("return 2 * x\r")
t.expect(r"   >> ")
t.type("end\r")
t.expect(r"surge> ")
t.type("twice(21)\r")
t.expect(r"\n42\n")
check("a multi-line function continues and then runs", True)
t.type('"a" .. string.char(27, 0) .. "[2Jb"\r')
m = t.expect(r"\n(\"a[^\n]*)\n")
check("a string's control bytes are shown escaped, not sent to the terminal",
      m.group(1).strip() == '"a\\027\\000[2Jb"', repr(m.group(1)))

t.type("surge.po\t\t")
m = t.expect(r"surge\.pool\s+surge\.port")
check("Tab lists surge.pool and surge.port for surge.po", True)
t.type("\x03")                  # Ctrl-C on the half-typed line
t.expect(r"\^C\n")
t.type("1 + 1\r")
t.expect(r"\n2\n")
check("Ctrl-C cancels the half-typed line (the next line is fresh)", "surge.po1" not in t.screen)

t.type("p = surge.port(0)\r")
t.expect(r"surge> ")
t.type("p:tx\t")
t.expect(r"p:txq")
t.type("\x03")
t.expect(r"\^C\n")
check("Tab completes a handle's method (p:tx -> p:txq)", True)

t.type("x = = 1\r")
m = t.expect(r"error: prompt:1: [^\n]*\n")
check("a syntax error prints one line", "unexpected symbol" in m.group(0), m.group(0))
t.type("nosuch.field\r")
m = t.expect(r"error: prompt:1: [^\n]*\n")
check("a runtime error prints one line", "nosuch" in m.group(0), m.group(0))

t.type("q = p:txq(0)\r")
t.expect(r"surge> ")
t.type('a = launch("tx", q, "1mpps")\r')
t.expect(r"surge> ")
t.type("function boom() error('typed failure') end\r")
t.expect(r"surge> ")
t.type("launch(boom)\r")
m = t.expect(r"task \d+ 'boom' failed: prompt:1: typed failure[^\n]*\n")
check("a typed function failing in a task is reported once", t.screen.count("failed: prompt:1: typed failure") == 1, t.screen[-500:])
t.type("a:state()\r")
m = t.expect(r'"running"')
check("the other task keeps running after the failure", True)

t.type("watch()\r")
t.expect(r"press a key to stop")
t.expect(r"port 0\s+TX\s+[\d.]+ Mpps.*\n")
t.expect(r"port 0\s+TX\s+[\d.]+ Mpps.*\n")
t.type("x")
t.expect(r"surge> ")
t.type("1 + 3\r")
t.expect(r"\n4\n")
check("watch() prints rates live until a key is pressed", "x1 + 3" not in t.screen)
check("no periodic stats line while the prompt is open", re.search(r"\[\s*[\d.]+s\] port", t.screen) is None,
      t.screen[-800:])
t.type("n = 0; while true do n = n + 1 end\r")   # a loop typed at the prompt
t.drain(0.5)
t.type("\x03")
t.expect(r"error: interrupted \(Ctrl-C\)\n")
t.type("n > 0 and a:state()\r")
t.expect(r'"running"')
check("Ctrl-C interrupts a loop typed at the prompt; the task goes on", True)
t.type("\x03")                  # empty prompt: a hint
t.expect(r"Ctrl-C again stops the tasks")
t.type("\x03")
t.expect(r"stopping 1 task")
t.expect(r"task \d+ 'tx' finished")
check("Ctrl-C twice at an empty prompt stops the tasks, the session stays", True)
t.type("1 + 2\r")
t.expect(r"\n3\n")
t.type('b = launch("tx", q)\r')
t.expect(r"surge> ")
t.type("\x04")                  # Ctrl-D leaves
rc = t.close()
check("Ctrl-D leaves with exit code 0", rc == 0, "rc=%s" % rc)
check("the summary is printed", re.search(r"summary over .* s\n\s*port 0\s+TX \d+ packets", t.screen) is not None,
      t.screen[-800:])
check("every pool is full again", "leak" in t.screen and re.search(r"pool \d+: (\d+) of \1 mbufs back", t.screen)
      and "LEAK" not in t.screen.upper().replace("NO LEAK", ""), t.screen[-600:])

# --- session 2: history survived --------------------------------------------
t = Term(BASE, env)
t.expect(r"surge> ")
t.type("\x1b[A")                # Up: the last line of session 1
t.expect(r"launch\(\"tx\", q\)")
t.type("\x03")
t.expect(r"\^C")
t.type("\x1b[A" * 2 + "\r")    # two back: 1 + 2 from session 1
t.expect(r"\n3\n")
check("history survives a restart (~/.surge_history)", os.path.exists(os.path.join(home, ".surge_history")))
t.type("exit()\r")
check("exit() leaves", t.close() == 0)

# --- session 3: Ctrl-C in the middle of a scenario ---------------------------
# The scenario's tasks stop with the command (a task launched before it goes
# on), nothing of theirs prints later, and what it measured so far lands in
# --output marked partial, as a stop from the command line does.
out_json = os.path.join(home, "r.json")
t = Term([SURGE, "repl", "--no-huge", "--lcores", "(0-3)@(0-1)", "--vdev", "net_ring0", "--output", out_json], env)
t.expect(r"surge> ")
t.type("function idle() while surge.running() do surge.sleep(0.05) end return 'idle' end\r")
t.expect(r"surge> ")
t.type("b = launch(idle)\r")
t.expect(r"surge> ")
t.type('ll = require "surge.scenario.load_latency"\r')
t.expect(r"surge> ")
t.type('r2 = ll.run{ rates = "10kpps,20kpps,30kpps", trial = 10 }\r')
t.drain(1.5)
t.type("\x03")
t.expect(r"error: interrupted \(Ctrl-C\)\n")
t.expect(r"load-latency: interrupted \(Ctrl-C\): the results so far are partial\n")
check("Ctrl-C during a scenario: its task stopped with it",
      re.search(r"stopped 1 task\(s\) the command started", t.screen) is not None, t.screen[-600:])
t.type("b:state()\r")
t.expect(r'"running"')
check("Ctrl-C during a scenario: the task launched before it goes on", True)
t.drain(1.5)
check("nothing of the scenario's task prints later", "received" not in t.screen.split("b:state()")[-1],
      t.screen[-600:])
t.type("\x04")
rc = t.close()
check("Ctrl-C during a scenario: Ctrl-D leaves with exit 0", rc == 0, "rc=%s %s" % (rc, t.screen[-400:]))
try:
    with open(out_json) as f:
        sc = json.load(f)["scenarios"].get("load-latency", {})
except (OSError, ValueError) as e:
    sc = {"error": str(e)}
check("the interrupted scenario's results are in --output, marked partial",
      sc.get("partial") is True and sc.get("stopped") == "interrupted (Ctrl-C)", repr(sc)[:300])

# --- session 4: SIGTERM while a typed loop runs ------------------------------
t = Term(BASE + [FLOOD], env)
t.expect(r"surge> ")
t.type('a = launch("tx", surge.port(0):txq(0), "100kpps")\r')
t.expect(r"surge> ")
t.type("while true do end\r")
t.drain(0.5)
os.kill(t.pid, signal.SIGTERM)
t.expect(r"error: interrupted \(the run stopped\)\n")
rc = t.close()
check("SIGTERM during a typed loop at a terminal: exit 0, summary, pools full, no watchdog",
      rc == 0 and re.search(r"summary over .* s\n\s*port 0\s+TX \d+ packets", t.screen) is not None
      and re.search(r"pool \d+: (\d+) of \1 mbufs back, no leak", t.screen) is not None
      and "still runs" not in t.screen, "rc=%s %s" % (rc, t.screen[-600:]))

# --- Ctrl-D while a command runs ---------------------------------------------
# The terminal is in cooked mode while a command runs; there Ctrl-D was the
# line discipline's end of file, turned into a NUL byte libedit took as
# Ctrl-@: the Ctrl-D was lost and the session never ended. Now it waits as
# a key: the command finishes, then the Ctrl-D on the empty prompt leaves
# the normal way (summary, pool check, exit 0), as in a shell.
import time
for what, cmd in (("surge.sleep", "surge.sleep(1.5)"),
                  ("a loop calling surge", "for i = 1, 15 do surge.sleep(0.1) end"),
                  ("surge.wait() for a task", 'w = launch("tx", q, "100kpps", 150000); surge.wait(w.id)')):
    t = Term(BASE + [FLOOD], env)
    t.expect(r"surge> ")
    # a task runs beside the command (the one it waits for, in the last case)
    t.type('q = surge.port(0):txq(0)' + ('' if "launch" in cmd else '; a = launch("tx", q, "100kpps")') + '\r')
    t.expect(r"surge> ")
    t.type(cmd + "\r")
    time.sleep(0.4)
    t0 = time.monotonic()
    t.type("\x04")
    try:
        rc = t.close(timeout=10)
    except AssertionError as e:
        rc = "hung"
    took = time.monotonic() - t0
    check("Ctrl-D during %s: the command ends, then the session (exit 0, 0.8 s < %.1f s < 8 s)" % (what, took),
          rc == 0 and 0.8 < took < 8, "rc=%s %s" % (rc, t.screen[-600:]))
    check("Ctrl-D during %s: the summary is printed" % what,
          re.search(r"summary over .* s\n\s*port 0\s+TX \d+ packets", t.screen) is not None, t.screen[-600:])
    check("Ctrl-D during %s: every pool is full again" % what,
          re.search(r"pool \d+: (\d+) of \1 mbufs back, no leak", t.screen) is not None, t.screen[-600:])

# run -i: Ctrl-D while a typed command runs ends the prompt after it; master
# goes on from its wait as after any Ctrl-D
t = Term([SURGE, "run", "-i", "--no-huge", "--lcores", "(0-1)@(0-1)", FLOOD], env)
t.expect(r"surge> ")
t.type("surge.sleep(1.5)\r")
time.sleep(0.4)
t0 = time.monotonic()
t.type("\x04")
try:
    t.expect(r"master: wait returned", timeout=10)
    rc = t.close(timeout=10)
except AssertionError as e:
    rc = "hung"
check("run -i: Ctrl-D while a command runs: the prompt ends after it, exit 0, summary, pools full",
      rc == 0 and time.monotonic() - t0 < 10 and "summary over" in t.screen
      and re.search(r"pool \d+: (\d+) of \1 mbufs back, no leak", t.screen) is not None,
      "rc=%s %s" % (rc, t.screen[-600:]))

# --- surge run -i: the prompt opens at surge.wait() -------------------------
t = Term([SURGE, "run", "-i", "--no-huge", "--lcores", "(0-1)@(0-1)", FLOOD], env)
t.expect(r"surge> ")
t.type("tasks()\r")
m = t.expect(r"\n1\s+tx\s+running\s+\d+\s+([\d.]+)")
check("run -i: the prompt opens with master's task running", 0.5 < float(m.group(1)) < 1.5, m.group(0))
t.type("exit()\r")
t.expect(r"master: wait returned")
rc = t.close()
check("run -i: exit() stops the tasks and master goes on from wait()", rc == 0, "rc=%s" % rc)

# --- long lines: typed (pasted) whole, or refused whole over the limit -------
def paste(t, text):
    for i in range(0, len(text), 4096):
        os.write(t.fd, text[i:i + 4096].encode())
        t.drain(0.005)

t = Term(BASE, env)
t.expect(r"surge> ")
t.type("p = surge.port(0)\r")
t.expect(r"surge> ")
paste(t, 'x = "' + "a" * 20000 + '"\r')
t.expect(r"surge> ", 120)
t.type("print(#x)\r")
m = t.expect(r"\n(\d+)\n", 60)
check("a 20000-character line typed at the prompt runs whole", m.group(1) == "20000", m.group(0))
t.type("\x04")
rc = t.close()
check("long lines: Ctrl-D leaves with exit 0 and the summary, no abort",
      rc == 0 and "summary over" in t.screen and "malloc()" not in t.screen, "rc=%s %s" % (rc, t.screen[-300:]))

print("all checks passed" if fails == 0 else "%d check(s) failed" % fails)
sys.exit(1 if fails else 0)
