"""test_rate.py - re-rate a running task from the prompt, then from `surge attach -e`.

A task floods net_null0 at 1 Mpps; `q:set_rate("3mpps")` is typed at the
prompt, then `surge attach SOCK -e 'q:set_rate("1.5mpps")'` comes from another
process. The rate is measured from outside: DPDK telemetry's /ethdev/stats
opackets, sampled every 100 ms against python's monotonic clock. Each new
rate must hold within 10 % over the second that starts one second after the
command, and the counter must grow in every 100 ms sample (never stalls).
"""
import json, os, socket, subprocess, sys, tempfile, threading, time
sys.path.insert(0, os.path.dirname(__file__))
from pty_drive import Term

SURGE = os.environ["SURGE"]
SRC = os.environ["SURGE_SRC"]
FLOOD = os.path.join(SRC, "tests/e2e/repl/flood.lua")
tmp = tempfile.mkdtemp(prefix="surge-repl-rate-")
prefix = "surge-repl-rate-%d" % os.getpid()
ctl = os.path.join(tmp, "ctl.sock")
env = dict(os.environ, HOME=tmp, TERM="xterm")
fails = 0


def check(name, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else ": " + detail))
    fails += 0 if cond else 1


t = Term([SURGE, "repl", "--no-huge", "--lcores", "(0-1)@(0-1)", "--eal", "--file-prefix " + prefix,
          "--control", ctl, FLOOD], env)
t.expect(r"surge> ")
tele_path = "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix
if not os.path.exists(tele_path):
    print("SKIP: no telemetry socket at " + tele_path)
    t.type("\x04"); t.close()
    sys.exit(77)
tele = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
tele.connect(tele_path)
tele.recv(4096)


def opackets():
    tele.send(b"/ethdev/stats,0")
    return json.loads(tele.recv(65536))["/ethdev/stats"]["opackets"]


samples, stop = [], threading.Event()


def sampler():
    while not stop.is_set():
        samples.append((time.monotonic(), opackets()))
        time.sleep(0.1)


t.type('q = surge.port(0):txq(0)\r')
t.expect(r"surge> ")
t.type('a = launch("tx", q, "1mpps")\r')
t.expect(r"surge> ")
th = threading.Thread(target=sampler)
th.start()
time.sleep(2.5)
t.type('q:set_rate("3mpps")\r')
t1 = time.monotonic()                 # Enter was typed
t.expect(r"surge> ")
time.sleep(2.5)
t2 = time.monotonic()
r = subprocess.run([SURGE, "attach", ctl, "-e", 'q:set_rate("1.5mpps")'], capture_output=True, text=True,
                   timeout=10)
check("attach -e re-rates and exits 0", r.returncode == 0, r.stderr.strip())
time.sleep(2.5)
stop.set()
th.join()


def rate(a, b):
    """Mpps over the samples inside [a, b] (seconds, monotonic)."""
    s = [x for x in samples if a <= x[0] <= b]
    return (s[-1][1] - s[0][1]) / (s[-1][0] - s[0][0]) / 1e6


r0, r1, r2 = rate(t1 - 1.5, t1 - 0.2), rate(t1 + 1, t1 + 2), rate(t2 + 1, t2 + 2)
print("measured: %.3f Mpps before, %.3f after set_rate(3mpps) at the prompt, %.3f after attach set_rate(1.5mpps)"
      % (r0, r1, r2))
check("1 Mpps at the start", abs(r0 - 1.0) < 0.1, "%.3f" % r0)
check("3 Mpps within a second of typing q:set_rate(\"3mpps\")", abs(r1 - 3.0) < 0.3, "%.3f" % r1)
check("1.5 Mpps within a second of attach -e", abs(r2 - 1.5) < 0.15, "%.3f" % r2)
stalls = [i for i in range(1, len(samples)) if samples[i][1] <= samples[i - 1][1]]
check("the counter grew in every one of %d samples" % len(samples), not stalls and len(samples) > 50,
      "stalled at samples %s" % stalls[:5])
tele.close()
t.type("\x04")
rc = t.close()
check("Ctrl-D leaves with exit code 0 and pools full", rc == 0 and "no leak" in t.screen, t.screen[-400:])
check("the control socket is removed at exit", not os.path.exists(ctl))
print("all checks passed" if fails == 0 else "%d check(s) failed" % fails)
sys.exit(1 if fails else 0)
