"""test_port_reuse.py - surge.port(N) on a port the script opened, typed at
the prompt of `surge run -i` (a real pty) and sent by `surge attach -e`
(the --control socket): no options or agreeing ones give the open port's
handle, so its stats and its queues' rates are reachable live; options
that differ are refused naming each difference (issue 23 item 6).
"""
import os, re, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(__file__))
from pty_drive import Term

SURGE = os.environ["SURGE"]
SCRIPT = os.path.join(os.environ["SURGE_SRC"], "tests/e2e/repl/port_reuse.lua")
tmp = tempfile.mkdtemp(prefix="surge-port-reuse-")
env = dict(os.environ, HOME=tmp, TERM="xterm")
fails = 0
ARGS = ["--no-huge", "--stats-interval", "0", "--lcores", "(0-1)@(0-1)", "--vdev", "net_null0,no-rx=1"]
DIFFER = r"port 0 is already open with other options: txq = 2 \(asked 4\), clones = false \(asked true\)"


def check(name, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else ": " + detail))
    fails += 0 if cond else 1


# --- the prompt of surge run -i ----------------------------------------------
t = Term([SURGE, "run", "-i"] + ARGS + [SCRIPT], env)
t.expect(r"surge> ")
t.type("(function() for _ = 1, 100 do if surge.port(0):stats().tx_packets > 0 then return true end "
       "surge.sleep(0.05) end return false end)()\r")
m = t.expect(r"\n(true|false|error[^\n]*)\n")
check("run -i: surge.port(0):stats() reads the script's port", m.group(1) == "true", m.group(0))
t.type('surge.port(0):txq(0):set_rate("20kpps"); surge.sleep(0.2)\r')
t.expect(r"surge> ")
t.type("surge.port(0):txq(0):rate_stats().target_pps\r")
m = t.expect(r"\n([\d.]+|error[^\n]*)\n")
check("run -i: surge.port(0):txq(0):set_rate() re-rates the task's queue", m.group(1) == "20000", m.group(0))
t.type("surge.port(0, { txq = 2, rxq = 1 }):info().txq\r")
m = t.expect(r"\n(\d+|error[^\n]*)\n")
check("run -i: agreeing options give the handle too", m.group(1) == "2", m.group(0))
t.type("surge.port(0, { txq = 4, clones = true })\r")
m = t.expect(r"\n(error[^\n]*)\n")
check("run -i: differing options are refused, naming each", re.search(r"^error: prompt:1: surge\.port: " + DIFFER, m.group(1)),
      m.group(1))
t.type("exit()\r")
t.expect(r"master: wait returned")
rc = t.close()
check("run -i: exit 0, pools full", rc == 0 and re.search(r"pool \d+: (\d+) of \1 mbufs back, no leak", t.screen),
      "rc=%s %s" % (rc, t.screen[-600:]))

# --- surge attach -e through the --control socket ---------------------------
ctl = os.path.join(tmp, "ctl.sock")
out = open(os.path.join(tmp, "run.out"), "w+")
run = subprocess.Popen([SURGE, "run", "--control", ctl] + ARGS + [SCRIPT], stdout=out, stderr=subprocess.STDOUT)
deadline = time.monotonic() + 30
while time.monotonic() < deadline and not (os.path.exists(ctl) and "ready" in open(out.name).read()):
    time.sleep(0.1)


def attach(code):
    r = subprocess.run([SURGE, "attach", ctl, "-e", code], capture_output=True, text=True, timeout=20)
    return r.returncode, (r.stdout + r.stderr).strip()


# "ready" is printed when the task is launched, not when it has sent: wait
# (bounded) for its first packets, as a user would who looks again.
rc, text = attach("for _ = 1, 100 do if surge.port(0):stats().tx_packets > 0 then return true end "
                  "surge.sleep(0.05) end return false")
check("attach -e: surge.port(0):stats() reads the script's port", (rc, text) == (0, "true"), "%s %s" % (rc, text))
rc, text = attach('surge.port(0):txq(0):set_rate("30kpps"); surge.sleep(0.2); '
                  "return surge.port(0):txq(0):rate_stats().target_pps")
check("attach -e: surge.port(0):txq(0):set_rate() re-rates the task's queue", (rc, text) == (0, "30000"),
      "%s %s" % (rc, text))
rc, text = attach("surge.port(0, { txq = 4, clones = true })")
check("attach -e: differing options are refused (exit 1), naming each", rc == 1 and re.search(DIFFER, text),
      "%s %s" % (rc, text))
attach("surge.stop()")
rc = run.wait(timeout=30)
out.seek(0)
log = out.read()
check("attach: the run ends with exit 0, pools full",
      rc == 0 and re.search(r"pool \d+: (\d+) of \1 mbufs back, no leak", log), "rc=%s %s" % (rc, log[-600:]))
sys.exit(1 if fails else 0)
