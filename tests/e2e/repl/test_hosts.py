"""test_hosts.py - hosts() at the prompt (issue 33, docs/hosts.md), typed at a
real terminal: a function typed at the prompt runs 300 DHCP clients against
surge's DHCP server on the net_ring loopback; hosts() lists both tables with
their hosts by state (300 bound each), hosts(i, t) a host's detail, and
the server's slot for that host's address holds that host's MAC; a host or
table out of range is one line naming hosts."""
import os, re, sys
sys.path.insert(0, os.path.dirname(__file__))
from pty_drive import Checks, Term

check = Checks()
env = dict(os.environ, HOME=os.environ.get("TMPDIR", "/tmp"), TERM="xterm")
t = Term([os.environ["SURGE"], "repl", "--no-huge", "--stats-interval", "0", "--vdev", "net_ring_rh0"], env)
t.expect(r"surge> ", timeout=30)


def say(line, until=r"surge> ", timeout=20):
    t.type(line + "\r", delay=0.002)
    m = t.expect(re.escape(line) + r"\n((?:.|\n)*?)" + until, timeout=timeout)
    return m.group(1)


out = say("hosts()")
check("no tables yet", out.strip() == "no host tables", out)
for line in ['function dh(rxq, txq, n)',
             '  local hosts = require "surge.hosts"',
             '  local s = hosts.server{ count = n, pool = "10.7.0.10", server = "10.7.0.1", mac = "02:07:00:00:00:01" }',
             '  local c = hosts.new{ count = n, mac = "02:07:01:00:00:01", dhcp = true, subnet = "10.7.0.0/22", outstanding = 64 }',
             '  local pool = surge.pool{ template = surge.proto.udp{}, size = 4095, data_room = 2048 }',
             '  local rx, tx = pool:burst(64), pool:burst(64)',
             '  while surge.running() do',
             '    c:poll(rxq, txq, rx, tx)',
             '    if s:take(txq, rx, tx) > 0 then rx:free() end',
             '  end',
             '  rx:free()',
             '  return c:stats().state.bound']:
    say(line, r"   >> ")
say("end")
out = say("a = launch(dh, surge.port(0):rxq(0), surge.port(0):txq(0), 300)")
check("the typed clients and server launch", out.strip() == "", out)
listing = ""
for _ in range(50):
    listing = say("hosts()")
    if listing.count("bound 300") == 2:
        break
    say("surge.sleep(0.2)")
check("hosts(): the server's table, 300 leases", re.search(r"^table 0  server 300 hosts: bound 300, 300 acks, 0 naks, 0 "
                                                             r"unanswered \(pool taken\)$", listing, re.M) is not None, listing)
check("hosts(): the clients' table, 300 bound", re.search(r"^table 1  dhcp   300 hosts: bound 300, bind time mean [0-9.]+ ms$",
                                                         listing, re.M) is not None, listing)
out = say("hosts(5, 1)")
m = re.search(r"^host 5 of table 1: bound  ip (10\.7\.0\.(\d+))  mac 02:07:01:00:00:06  server 10\.7\.0\.1  lease 3600 s  "
              r"since \d+ ms  tries 0$", out, re.M)
check("hosts(5, 1): client 5's detail", m is not None, out)
if m:
    slot = int(m.group(2)) - 10
    out = say("hosts(%d, 0)" % slot)
    check("the server's slot for its address holds client 5's MAC",
          re.search(r"^host %d of table 0: bound  ip %s  mac 02:07:01:00:00:06  server 10\.7\.0\.1" % (slot, re.escape(m.group(1))),
                    out, re.M) is not None, out)
out = say("hosts(300, 1)")
check("a host out of range: one line naming hosts", "hosts: i: expected a host 0..299 of table 1, got 300" in out, out)
out = say("hosts(0, 2)")
check("a table out of range: one line naming hosts", "hosts: table: expected a table id 0..1, got 2" in out, out)
say("stop()")
out = say("a:wait()")
check("the task returns its 300 bound clients", out.strip() == "300", out)
t.type("exit()\r")
rc = t.close()
check("the prompt exits 0", rc == 0, str(rc))
sys.exit(1 if check.fails else 0)
