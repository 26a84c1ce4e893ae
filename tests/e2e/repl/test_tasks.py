"""test_tasks.py - the prompt's common case at a real terminal: the README's
`surge repl --vdev net_ring0`, with no --lcores, on at most two CPUs.

- a function typed at the prompt sends a plain `surge.pool{}` over the
  net_ring loopback (no "shared = true" refusal), and a receiver and two
  senders all find an lcore (the default map gives four);
- tasks() shows each task's own counts: a second sender on the queue a first
  one used shows its own packets + drops (exactly what it tried), not the
  queue's lifetime count; a sender on a ring nobody reads shows its drops;
- t:state() says done after t:wait(), and stays done when a later task runs
  on the same lcore; a failed task and a waited one both stay in tasks()
  until tasks("clear") drops them;
- Tab does not offer names starting with "_" (q:__handle, surge._wait_all).
"""
import os, re, sys
sys.path.insert(0, os.path.dirname(__file__))
from pty_drive import Term

SURGE = os.environ["SURGE"]
fails = 0


def check(name, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else ": " + detail))
    fails += 0 if cond else 1


# at most two CPUs, so the default map is surge repl's own (four lcores)
cpus = sorted(os.sched_getaffinity(0))[:2]
env = dict(os.environ, HOME=os.environ.get("TMPDIR", "/tmp"), TERM="xterm")
t = Term(["taskset", "-c", ",".join(map(str, cpus)), SURGE, "repl", "--no-huge", "--stats-interval", "0",
          "--vdev", "net_ring0", "--vdev", "net_ring1"], env)
t.expect(r"surge> ", timeout=30)


def say(line, until=r"surge> ", timeout=20):
    """Types a line; returns what it printed before the next prompt."""
    t.type(line + "\r", delay=0.002)
    m = t.expect(re.escape(line) + r"\n((?:.|\n)*?)" + until, timeout=timeout)
    return m.group(1)


# n packets tried (sent or dropped), then it waits to be stopped: a task that
# is still running when tasks() samples it
say("function try(q, n)", r"   >> ")
say("  local pool = surge.pool{ template = surge.proto.udp{ size = 60 } }", r"   >> ")
say("  local b = pool:burst(32)", r"   >> ")
say("  for i = 1, n / 32 do b:alloc(); q:send(b) end", r"   >> ")
say("  while surge.running() do end", r"   >> ")
say("  return n", r"   >> ")
out = say("end", r"surge> ")
say("function rx(q)", r"   >> ")
say("  local b = surge.pool{ size = 4096 }:burst(32)", r"   >> ")
say("  local n = 0", r"   >> ")
say("  while surge.running() do n = n + q:recv(b) end", r"   >> ")
say("  b:free()", r"   >> ")
say("  return n", r"   >> ")
say("end", r"surge> ")
say("function boom() error('typed failure') end")

out = say("r = launch(rx, surge.port(0):rxq(0))")
check("the receiver launches (no free-lcore error with the default map)", out.strip() == "", out)
out = say("a = launch(try, surge.port(0):txq(0), 32000)")
check("a typed sender launches beside it", out.strip() == "", out)
say("surge.sleep(0.5)")
say("a:stop()")
out = say("a:wait()")
check("the typed sender's plain pool is sent over net_ring (shared by default), returns", out.strip() == "32000", out)
out = say("a:state()")
check("t:state() after t:wait() says done", out.strip() == '"done"', out)
out = say("surge.port(0):txq(0):stats().packets + surge.port(0):txq(0):stats().drops")
check("the queue counted the first sender's 32000", out.strip() == "32000", out)

out = say("b = launch(try, surge.port(0):txq(0), 6400)")
check("a second sender on the same queue launches", out.strip() == "", out)
say("surge.sleep(0.5)")
out = say("tasks()")
rows = {m.group(1): m.groups() for m in
        re.finditer(r"^(\d+)\s+(\w+)\s+(\w+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$", out, re.M)}
print(out)
m = re.search(r"^\d+\s+try\s+running\s+(\d+)\s+[\d.]+\s+(\d+)\s", out, re.M)
check("tasks(): the running sender shows its own packets + drops (6400), not the queue's 38400",
      m is not None and int(m.group(1)) + int(m.group(2)) == 6400, out)
check("tasks(): the waited sender is still listed, done", re.search(r"^\d+\s+try\s+done\s+-", out, re.M) is not None, out)
check("tasks(): the receiver is listed running", re.search(r"^\d+\s+rx\s+running\s+\d+", out, re.M) is not None, out)
out = say("a.id == b.id, a:state(), b:state()")
check("the first handle still says done while its lcore may run the second",
      re.match(r'^(true|false)\t"done"\t"running"\s*$', out) is not None, out)

# a sender on a ring nobody reads: all it cannot queue are drops, and shown
out = say("c = launch(try, surge.port(1):txq(0), 3200)")
check("a third task launches (four lcores)", out.strip() == "", out)
say("surge.sleep(2)")     # (a send into a queue nobody drains gives up after a 1 s stall)
out = say("tasks()")
lines = [l for l in out.split("\n") if re.match(r"^\d+\s+try\s+running", l)]
drops = [int(re.split(r"\s+", l)[5]) for l in lines]
check("tasks(): the sender on the unread ring shows its drops", any(d >= 3200 - 1024 for d in drops), out)
say("stop(b); stop(c); b:wait(); c:wait()")

f = say("d = launch(boom)")
t.expect(r"task \d+ 'boom' failed: prompt:1: typed failure", timeout=10)
say("surge.sleep(0.1)")
out = say("tasks()")
check("tasks(): the failed task and the waited ones stay listed",
      re.search(r"^\d+\s+boom\s+failed", out, re.M) is not None
      and len(re.findall(r"^\d+\s+try\s+done", out, re.M)) == 3, out)
out = say("d:state()")
check("a failed task's handle says failed", out.strip() == '"failed"', out)
out = say('tasks("clear")')
check('tasks("clear") drops the ended ones (4) and keeps the running receiver', out.strip() == "4", out)
out = say("tasks()")
check("tasks() after clear: only the receiver", re.findall(r"^\d+\s+(\w+)\s+(\w+)", out, re.M) == [("rx", "running")],
      out)

# Tab: no internals
say("q = surge.port(0):txq(0)")
t.type("q:\t\t")
m = t.expect(r"q:set_rate(?:.|\n)*?surge> q:", timeout=10)
check("Tab on q: lists its methods, not q:__handle", "__handle" not in m.group(0) and "q:stats" in m.group(0), m.group(0))
t.type("\x03")
t.expect(r"\^C\n")
t.type("surge._wai\t")
t.expect(r"surge\._wait_all", timeout=10)
check("typed with its _, an internal still completes", True)
t.type("\x03")
t.expect(r"\^C\n")

say("stop(r); r:wait()")
t.type("\x04")
rc = t.close()
check("leaving: exit 0, every pool back", rc == 0 and "no leak" in t.screen and "leak!" not in t.screen,
      "rc=%s %s" % (rc, t.screen[-500:]))
print("all checks passed" if fails == 0 else "%d failure(s)" % fails)
sys.exit(1 if fails else 0)
