"""misuse_prompt.py - part 2 of tests/e2e/test_misuse_prompt.sh: the terminal,
the control socket and DPDK telemetry under hostile use, as tables of rows.

Each row does one hostile thing and asserts its outcome (a reply, an exit
status, one error line); after each the instance must still answer, and each
instance's run must end with its summary, every pool full and no crash text.
"""
import fcntl, os, re, select, signal, socket, stat, subprocess, sys, tempfile, threading, time
sys.path.insert(0, os.path.dirname(__file__))
from pty_drive import Term
from wire import frame, recv_frame

SURGE = os.environ["SURGE"]
SRC = os.environ["SURGE_SRC"]
FLOOD = os.path.join(SRC, "tests/e2e/repl/flood.lua")
LIVE = os.path.join(SRC, "tests/e2e/results/live.lua")
CRASH_RE = re.compile(r"Segmentation fault|core dumped|Aborted|PANIC|rte_dump_stack|Illegal instruction|"
                      r"Bus error|double free|stack smashing|error in error handling")
tmp = tempfile.mkdtemp(prefix="surge-misuse-")
os.chmod(tmp, 0o755)            # only the socket's own rule decides who may connect
env = dict(os.environ, HOME=tmp, TERM="xterm")
fails = 0


def check(name, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else ": " + str(detail)[-600:]))
    fails += 0 if cond else 1


def ended_well(name, rc, text, want_rc=0):
    check(name + ": exit %d" % want_rc, rc == want_rc, "exit %s\n%s" % (rc, text[-800:]))
    check(name + ": the summary is printed", re.search(r"summary over [\d.]+ s\n\s+port 0\s+TX \d+", text) is not None,
          text[-800:])
    if want_rc == 0:
        check(name + ": every pool full again", re.search(r"pool \d+: (\d+) of \1 mbufs back, no leak", text)
              is not None and "leaked" not in text, text[-400:])
    check(name + ": no crash text", CRASH_RE.search(text) is None, text[-800:])


# ---------------------------------------------------------------- the terminal
def pty_rows():
    t = Term([SURGE, "repl", "--no-huge", "--stats-interval", "0", "--lcores", "(0-1)@(0-1)", "--stop-grace", "1",
              FLOOD], env)
    t.expect(r"surge> ")

    def row(name, keys, pattern, timeout=10, then="1 + 1\r", answer=r"\n2\n"):
        try:
            t.type(keys)
            t.expect(pattern, timeout)
            if then is not None:
                t.type(then)
                t.expect(answer, 10)
            check("terminal: " + name, True)
        except AssertionError as e:
            check("terminal: " + name, False, e)
            t.expect(r"surge> ", 5)

    row("Ctrl-C at an empty prompt says what a second one does", "\x03",
        r"\(Ctrl-C again stops the tasks; Ctrl-D or exit\(\) leaves\)\n", then=None)
    t.type("a = launch(\"tx\", surge.port(0):txq(0))\r")
    # the prompt after the launch ran (the one on screen before it was typed
    # matched too early: under load a Ctrl-C then interrupted the launch)
    t.expect(r"txq\(0\)\)\nsurge> ", 20)
    row("... a first Ctrl-C", "\x03", r"Ctrl-C again stops the tasks", then=None)
    row("Ctrl-C twice at an empty prompt stops the tasks, the session stays", "\x03",
        r"stopping 1 task\(s\)\n")
    row("Ctrl-C cancels the line being typed", "while tr\x03", r"while tr\^C\nsurge> ")
    row("Ctrl-C interrupts an endless loop", "while true do end\r", r"", then=None)
    time.sleep(0.3)
    row("... with one line", "\x03", r"error: interrupted \(Ctrl-C\)\n")
    row("Ctrl-C interrupts a loop inside __tostring", "setmetatable({}, {__tostring = function() while true do end end})\r",
        r"", then=None)
    time.sleep(0.3)
    row("... while the value is shown", "\x03", r"error: interrupted \(Ctrl-C\)\n")
    row("a NUL typed at the terminal is the key Ctrl-@, not text", "#'a\x00b'\r", r"\n2\n", then=None)
    row("Tab does not complete surge's internals (surge.handles, surge.TaskFailure)", "print(surge.hand\t)\r",
        r"print\(surge\.hand\)\nnil\n", then=None)
    row("... nor surge.TaskF", "print(surge.TaskF\t)\r", r"print\(surge\.TaskF\)\nnil\n", then=None)
    row("... and still completes the API next to them (surge.tas -> surge.tasks)", "print(type(surge.tas\t))\r",
        r"print\(type\(surge\.tasks\)\)\nfunction\n", then=None)
    row("Ctrl-Z at an empty prompt is no key: the session goes on", "\x1a", r"surge> ")
    t.type("surge.sleep(0.6) return 'slept'\r")
    time.sleep(0.2)
    row("Ctrl-Z during a command (no job control here): the command finishes", "\x1a", r'"slept"\n')
    t.type("surge.sleep(0.8) return 'slept again'\r")
    time.sleep(0.3)
    t.type("\x04")
    try:
        t.expect(r'"slept again"\n', 10)
        rc = t.close(timeout=20)
    except AssertionError as e:
        rc = "hung: %s" % e
    check("terminal: Ctrl-D during a command: it finishes, then the session leaves", rc == 0, rc)
    ended_well("terminal session", rc, t.screen)

    # a command that catches its interrupt: Ctrl-C, then the run stops and the watchdog ends it
    t = Term([SURGE, "repl", "--no-huge", "--stats-interval", "0", "--stop-grace", "0.5"], env)
    t.expect(r"surge> ")
    t.type("p = surge.port(0)\r")
    t.expect(r"surge> ")
    t.type("while true do pcall(function() while true do end end) end\r")
    time.sleep(0.3)
    t.type("\x03")
    try:
        rc = t.close(timeout=20)
    except AssertionError as e:
        rc = "hung: %s" % e
    check("terminal: a loop that catches Ctrl-C: the run stops, the watchdog says why",
          "a pcall around its loop?" in t.screen, t.screen[-600:])
    ended_well("terminal: watchdog", rc, t.screen, 3)


# ---------------------------------------------------------------- pasted lines, hostile history
def paste(t, data):
    """Writes data at the terminal as a terminal does a paste: in chunks, as fast as it is taken,
    reading what surge draws meanwhile (a terminal does both: written alone, a paste whose echo
    fills the pty's output stalls both ends)."""
    fl = fcntl.fcntl(t.fd, fcntl.F_GETFL)
    fcntl.fcntl(t.fd, fcntl.F_SETFL, fl | os.O_NONBLOCK)
    try:
        i, deadline = 0, time.monotonic() + 60
        while i < len(data) and time.monotonic() < deadline:
            r, w, _ = select.select([t.fd], [t.fd], [], 1)
            if r:
                t._read(0)
            if w:
                try:
                    i += os.write(t.fd, data[i:i + 4096])
                except BlockingIOError:
                    pass
    finally:
        fcntl.fcntl(t.fd, fcntl.F_SETFL, fl)


def text_rows():
    """Pastes and keys past ASCII, and tabs in a paste (issue 31 item 20's class). Every character
    past ASCII was dropped from the line (libedit encoded it in the C locale): 'é' typed or pasted
    was an empty string; a lead byte 0xff took the three keys after it; a paste of UTF-8 or one
    holding tabs went key by key (quadratic, and each tab ran the completer)."""
    rows = [("a typed é is its two bytes", "print(#'é')\r", r"\n2\n", False, 10),
            ("a pasted line of 30 000 é runs whole", 'x = "' + "é" * 30000 + '" print(#x)\r', r"\n60000\n", True, 5),
            ("a pasted line of 20 000 4-byte characters runs whole", 'x = "' + "\U0001F600" * 20000
             + '" print(#x)\r', r"\n80000\n", True, 5),
            ("a pasted line holding 10 000 tabs is text, not completions", 'x = "' + "a\tb" * 10000
             + '" print(#x)\r', r"\n30000\n", True, 5),
            ("a pasted line of 10 000 bytes that are not UTF-8: each U+FFFD", b'x = "' + b"\xff" * 10000
             + b'" print(#x)\r', r"\n30000\n", True, 5),
            ("a typed 0xff is U+FFFD and the keys after it stay", b"print(#'\xff')\r", r"\n3\n", False, 10)]
    for name, keys, want, pasted, limit in rows:
        t = Term([SURGE, "repl", "--no-huge", "-q"], env)
        t.expect(r"surge> ")
        data = keys if isinstance(keys, bytes) else keys.encode()
        t0 = time.monotonic()
        try:
            if pasted:
                paste(t, data)
            else:
                os.write(t.fd, data)
            t.expect(want, limit)
            check("terminal: %s (%.2f s)" % (name, time.monotonic() - t0), True)
        except AssertionError as e:
            check("terminal: " + name, False, e)
        t.type("\x04")
        t.close()


def paste_rows():
    # libedit converted the whole line after every key: 20 000 characters took 15-22 s
    for n, limit in ((100000, 5.0), (1000000, 20.0)):
        t = Term([SURGE, "repl", "--no-huge", "-q"], env)
        t.expect(r"surge> ")
        t0 = time.monotonic()
        try:
            paste(t, ('x = "' + "a" * n + '" print(#x)\r').encode())
            t.expect(r"\n%d\n" % n, limit)
            took = time.monotonic() - t0
            check("terminal: a pasted line of %d characters runs in %.1f s (at most %g)" % (n + 17, took, limit),
                  True)
        except AssertionError as e:
            check("terminal: a pasted line of %d characters runs within %g s" % (n + 17, limit), False, e)
        # a paste of several lines: each runs, in order, as typed
        paste(t, b'a = 40\rb = "' + b"c" * 3000 + b'"\rprint(a + #b)\r')
        try:
            t.expect(r"\n3040\n", 10)
            check("terminal: a pasted block of lines runs line by line", True)
        except AssertionError as e:
            check("terminal: a pasted block of lines runs line by line", False, e)
        t.type("\x04")
        check("terminal: after the pastes Ctrl-D leaves, exit 0", t.close() == 0, t.screen[-300:])
        # the history keeps the short lines, not the pasted megabyte: it stays readable next time
        hist = open(os.path.join(tmp, ".surge_history"), "rb").read()
        check("terminal: the history keeps the short pasted lines, not the %d-character one" % (n + 17),
              b"a\\040=\\04040" in hist and len(hist) < 64 << 10, len(hist))
    # past the limit: refused whole, quickly, and the rest of the paste is skipped to its Enter
    t = Term([SURGE, "repl", "--no-huge", "-q"], env)
    t.expect(r"surge> ")
    t0 = time.monotonic()
    try:
        paste(t, b'z = "' + b"b" * (1 << 20) + b'"\rprint(z)\r')
        t.expect(r"error: the line is longer than the 1048576 bytes a line may have: not run\n", 20)
        t.expect(r"\nnil\n", 10)
        check("terminal: a pasted line over 1 MiB is refused in %.1f s, none of it runs"
              % (time.monotonic() - t0), True)
    except AssertionError as e:
        check("terminal: a pasted line over 1 MiB is refused, none of it runs", False, e)
    t.type("\x04")
    t.close()

    # a history file that never ends (/dev/full reads zeros for ever) or is no file
    for target in ("/dev/full", "/dev/zero", tmp):
        home = tempfile.mkdtemp(prefix="surge-hist-")
        os.symlink(target, os.path.join(home, ".surge_history"))
        t = Term([SURGE, "repl", "--no-huge", "-q"], dict(env, HOME=home))
        try:
            t.expect(r"surge: warning: %s/\.surge_history is not a regular file: the history is neither read "
                     r"nor saved\n" % re.escape(home), 10)
            t.expect(r"surge> ", 10)
            t.type("1 + 1\r")
            t.expect(r"\n2\n", 10)
            t.type("\x04")
            rc = t.close()
            check("terminal: ~/.surge_history -> %s: one warning, the prompt answers, exit 0" % target, rc == 0, rc)
        except AssertionError as e:
            check("terminal: ~/.surge_history -> %s: one warning, the prompt answers" % target, False, e)
            t.close()
    # a regular history file over the bound: not read (a line says so), the session goes on
    home = tempfile.mkdtemp(prefix="surge-hist-")
    with open(os.path.join(home, ".surge_history"), "wb") as f:
        f.truncate(64 << 20)
    t = Term([SURGE, "repl", "--no-huge", "-q"], dict(env, HOME=home))
    try:
        t.expect(r"surge: warning: %s/\.surge_history is over 16 MiB: the history is neither read nor saved\n"
                 % re.escape(home), 10)
        t.type("1 + 1\r")
        t.expect(r"\n2\n", 10)
        t.type("\x04")
        rc = t.close()
        check("terminal: a history file of 64 MiB is not read; the prompt answers",
              rc == 0 and os.path.getsize(os.path.join(home, ".surge_history")) == 64 << 20, rc)
    except AssertionError as e:
        check("terminal: a history file of 64 MiB is not read", False, e)
        t.close()


# ---------------------------------------------------------------- the control socket
def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)               # blocking: waits for the backlog rather than EAGAIN
    s.settimeout(10)
    return s


def ask(path, code):
    try:
        s = connect(path)
        s.sendall(frame(b"e" + code))
        r = recv_frame(s)
        s.close()
        return r
    except OSError as e:
        return "error %s" % e


def attach(path, code, pre=(), timeout=15):
    return subprocess.run(list(pre) + [SURGE, "attach", path, "-e", code], capture_output=True, text=True,
                          timeout=timeout)


def start_flood(ctl, log, wrap=True):
    out = open(log, "w+")
    run = subprocess.Popen((["timeout", "-k", "5", "150"] if wrap else []) + [SURGE, "run", "--no-huge", "--stats-interval", "0",
                            "--lcores", "(0-1)@(0-1)", "--control", ctl, FLOOD],
                           stdout=out, stderr=subprocess.STDOUT, env=env)
    for _ in range(150):
        if os.path.exists(ctl) and ask(ctl, b"1") == b"o1\n":
            break
        time.sleep(0.1)
    return run, out


def socket_rows():
    ctl = os.path.join(tmp, "ctl.sock")
    run, out = start_flood(ctl, os.path.join(tmp, "ctl.out"))

    def alive(name):
        r = ask(ctl, b"40 + 2")
        check("socket: %s: the instance still answers" % name, r == b"o42\n", r)

    # half-closed: the client shut down its sending side after its request
    s = connect(ctl)
    s.sendall(frame(b"elocal n = 0 for i = 1, 3e6 do n = n + 1 end return n"))
    s.shutdown(socket.SHUT_WR)
    r = recv_frame(s)
    s.close()
    check("socket: a half-closed client's command runs to its end and gets its reply", r == b"o3000000\n", r)
    alive("half-closed")

    # many clients at once: 16 are served, the others are told so; when they
    # leave, the next client is served at once
    cs = [connect(ctl) for _ in range(20)]
    time.sleep(0.3)
    served, refused = 0, 0
    for i, c in enumerate(cs):
        try:
            c.sendall(frame(b"e%d" % i))
            r = recv_frame(c)
        except OSError:
            r = None
        served += r == b"o%d\n" % i
        refused += r is None or r == b"etoo many clients attached"
    check("socket: 20 clients at once: 16 served, 4 told 'too many clients attached'",
          (served, refused) == (16, 4), (served, refused))
    # while the master is busy with one client's command, the 19 others
    # leave and a new one comes: it must get a slot the leavers gave back
    busy = cs[0]
    busy.sendall(frame(b"elocal t = os.clock() while os.clock() - t < 0.5 do end return 'busy'"))
    time.sleep(0.1)
    for c in cs[1:]:
        c.close()
    late = connect(ctl)
    late.sendall(frame(b"e1 + 1"))
    r = recv_frame(late)
    check("socket: a client that comes as 15 leave is served (their slots are free)", r == b"o2\n", r)
    check("socket: ... and the busy client got its reply", recv_frame(busy) == b"o\"busy\"\n")
    late.close()
    busy.close()
    alive("20 clients")

    # a client that never reads its replies: the others wait ~1 s at most for
    # each reply it does not take, then it is disconnected
    s = connect(ctl)
    for _ in range(4):
        s.sendall(frame(b'ereturn string.rep("x", 900000)'))
    t0 = time.monotonic()
    r = ask(ctl, b"2 + 2")
    check("socket: a client that never reads holds the others a few seconds at most",
          r == b"o4\n" and time.monotonic() - t0 < 6, (r, time.monotonic() - t0))
    s.close()
    alive("never reads")

    # a client that connects and says nothing holds no one up
    idle = connect(ctl)
    alive("a silent client")

    # 10 MiB without a newline (digits, then letters): one error reply, the connection closed
    for name, junk in (("10 MiB of digits", b"1" * (10 << 20)), ("10 MiB of letters", b"a" * (10 << 20))):
        s = connect(ctl)
        try:
            s.sendall(junk)
        except OSError:
            pass
        try:
            r = recv_frame(s)
        except OSError:
            r = None
        s.close()
        check("socket: %s without a newline: an error reply (or the connection closed)" % name,
              r is None or r.startswith(b"enot a surge request"), r)
        alive(name)

    # LuaJIT bytecode as a request (made by the instance, sent back raw):
    # refused, never loaded (LuaJIT does not verify bytecode)
    r = ask(ctl, b'return (string.dump(function() return "ran as bytecode" end):gsub(".", '
                 b'function(c) return ("%02x"):format(c:byte()) end))')
    code = bytes.fromhex(r[2:-2].decode()) if r and r.startswith(b'o"') else b"\x1bLJ"
    r = ask(ctl, code)
    check("socket: a request of LuaJIT bytecode is refused with one error reply",
          r is not None and r.startswith(b"eerror: prompt:1: the line starts with byte 27") and b"ran as" not in r, r)
    alive("bytecode")

    # NUL bytes and invalid UTF-8 in a request are bytes of the line
    r = ask(ctl, b'return "a\x00b\xff\xfe"')
    check("socket: NUL and invalid UTF-8 in a request are part of it", r == b'o"a\\000b\xff\xfe"\n', r)

    # clients that disconnect mid-command: an endless loop, a sleep
    for code in (b"ewhile true do end", b"efor i = 1, 1e12 do end", b"esurge.sleep(1.0)"):
        s = connect(ctl)
        s.sendall(frame(code))
        time.sleep(0.2)
        s.close()
    t0 = time.monotonic()
    r = ask(ctl, b"tasks()")
    check("socket: clients gone mid-command: the next is served, master's sender still runs",
          r is not None and re.search(rb"\n1\s+tx\s+running", r) is not None and time.monotonic() - t0 < 4,
          (r, time.monotonic() - t0))

    # a client's value that raises while shown, a typed os.exit() from a client
    r = ask(ctl, b'setmetatable({}, {__tostring = function() error("boom") end})')
    check("socket: a value whose __tostring raises: one error reply", r == b"eerror: prompt:1: boom\n", r)
    r = ask(ctl, b"exit()")
    check("socket: exit() from a client does not end the run", r is not None and r.startswith(b"o")
          and b"Ctrl-D detaches" in r, r)
    alive("exit()")

    # who may connect: the socket is 0600, and a client of another uid is
    # refused even where its mode lets it connect
    nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    r = attach(ctl, "1", nobody)
    check("socket: uid nobody cannot connect to the 0600 socket (exit 1, one line)",
          r.returncode == 1 and "Permission denied" in r.stderr and r.stderr.count("\n") == 1,
          (r.returncode, r.stdout, r.stderr))
    os.chmod(ctl, 0o666)
    r = attach(ctl, "1", nobody)
    os.chmod(ctl, 0o600)
    check("socket: uid nobody is refused by the instance when the socket's mode would let it in",
          r.returncode == 1 and r.stdout == "" and "uid 65534 may not attach" in r.stderr,
          (r.returncode, r.stdout, r.stderr))
    alive("another uid")

    # attach to a symlink of the live socket (the same user's): it is followed
    link = os.path.join(tmp, "link.sock")
    os.symlink(ctl, link)
    r = attach(link, "3 * 3")
    check("attach to a symlink of a live socket: it is followed", r.returncode == 0 and r.stdout.strip() == "9", r)

    # --control on a path that is a symlink or a regular file: refused, exit 2, before EAL
    plain = os.path.join(tmp, "plain")
    open(plain, "w").close()
    for what, path in (("a symlink", link), ("a regular file", plain)):
        r = subprocess.run([SURGE, "repl", "--no-huge", "--control", path], capture_output=True, text=True,
                           timeout=30, stdin=subprocess.DEVNULL)
        check("--control on %s: refused (exit 2, one line, no EAL)" % what,
              r.returncode == 2 and "exists and is not a socket" in r.stderr and "EAL" not in r.stderr,
              (r.returncode, r.stderr))
    check("--control on a symlink: the live socket it points to is left alone", ask(ctl, b"5") == b"o5\n")

    # attach to a regular file, a stale socket, a dangling symlink: one line each, exit 1
    stale = os.path.join(tmp, "stale.sock")
    x = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    x.bind(stale)
    x.close()
    dangling = os.path.join(tmp, "dangling.sock")
    os.symlink(os.path.join(tmp, "none"), dangling)
    for what, path in (("a regular file", plain), ("a stale socket", stale), ("a dangling symlink", dangling)):
        r = attach(path, "1")
        check("attach to %s: exit 1, one line saying what to check" % what,
              r.returncode == 1 and "is a surge running with --control" in r.stderr and r.stderr.count("\n") == 1,
              (r.returncode, r.stderr))

    idle.close()
    r = ask(ctl, b"surge.stop()")
    rc = run.wait(timeout=30)
    out.seek(0)
    text = out.read()
    ended_well("socket: the run after all the rows", rc, text)
    check("socket: removed at exit", not os.path.exists(ctl))
    r = attach(ctl, "1")
    check("attach to an instance that ended: exit 1, one line", r.returncode == 1 and r.stderr.count("\n") == 1,
          r.stderr)

    # the instance dies under a client (SIGKILL): the client says so, exit 1
    ctl2 = os.path.join(tmp, "ctl2.sock")
    run, out = start_flood(ctl2, os.path.join(tmp, "ctl2.out"), wrap=False)   # run.kill() is surge's
    p = subprocess.Popen([SURGE, "attach", ctl2, "-e", "surge.sleep(3)"], stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    run.kill()
    run.wait()
    subprocess.run(["rm", "-rf", "/var/run/dpdk/surge-%d" % run.pid])   # what a killed run leaves
    err = p.communicate(timeout=15)[1]
    check("attach -e while the instance is killed: exit 1, 'the instance closed the connection'",
          p.returncode == 1 and "the instance closed the connection" in err, (p.returncode, err))
    r = attach(ctl2, "1")
    check("attach to the socket the killed instance left: exit 1, one line", r.returncode == 1
          and "is a surge running with --control" in r.stderr, r.stderr)


# ---------------------------------------------------------------- DPDK telemetry
def tel_rows():
    prefix = "surge-misuse-%d" % os.getpid()
    sock = "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix
    out = open(os.path.join(tmp, "tel.out"), "w+")
    run = subprocess.Popen(["timeout", "-k", "5", "60", SURGE, "run", "--no-huge", "--file-prefix", prefix,
                            "--vdev", "net_ring_misuse0", "--lcores", "(0-1)@(0-1)", "--duration", "5",
                            "--stats-interval", "0", LIVE], stdout=out, stderr=subprocess.STDOUT)
    for _ in range(150):
        if os.path.exists(sock):
            break
        time.sleep(0.1)
    time.sleep(0.5)

    def session():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(sock)
        s.settimeout(5)
        s.recv(16384)
        return s

    def tel(cmd):
        s = session()
        s.send(cmd)
        r = s.recv(65536)
        s.close()
        return r

    mode = stat.S_IMODE(os.stat(os.path.dirname(sock)).st_mode)
    check("telemetry: the run's folder is the owner's only (0700)", mode == 0o700, oct(mode))
    good = tel(b"/surge/queues,0")
    check("telemetry: /surge/queues,0 answers", b'"tx0_packets"' in good, good)
    for cmd in (b"/surge/nosuch", b"/surge/queues,abc", b"/surge/queues,-1", b"/surge/queues,-0", b"/surge/queues,+0",
                b"/surge/queues, 0", b"/surge/queues,0x0", b"/surge/queues,0,0", b"/surge/queues,31",
                b"/surge/queues,99999999999999999999", b"/surge/latency,\xff\xfe", b"/surge/latency,-0",
                b"/surge/latency," + b"9" * 500):
        r = tel(cmd)
        check("telemetry: %r: refused (null)" % cmd[:40], r.endswith(b":null}"), r)
    s = session()
    for junk in (os.urandom(1000), b"\x00" * 10, b"/" * 5000):
        try:
            s.send(junk)
            s.recv(65536)
        except OSError:
            break
    s.close()
    check("telemetry: after garbage the instance answers", b'"running":1' in tel(b"/surge/info"))

    # connect/disconnect storm, and more connections than DPDK takes at once
    n, t0 = 0, time.monotonic()
    while time.monotonic() - t0 < 1:
        x = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        x.connect(sock)
        x.close()
        n += 1
    held = []
    for _ in range(40):
        x = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            x.connect(sock)
            held.append(x)
        except OSError:
            break
    for x in held:
        x.close()
    time.sleep(0.2)
    check("telemetry: after a storm of %d connections and %d held at once it answers" % (n, len(held)),
          b'"running":1' in tel(b"/surge/info"))

    # a client connected (and asking) at exit
    stop = threading.Event()

    def asker():
        while not stop.is_set():
            try:
                s = session()
                while not stop.is_set():
                    s.send(b"/surge/queues,0")
                    if not s.recv(65536):
                        break
            except OSError:
                time.sleep(0.01)

    th = threading.Thread(target=asker)
    th.start()
    held = session()
    rc = run.wait(timeout=30)
    stop.set()
    th.join(10)
    held.close()
    out.seek(0)
    ended_well("telemetry: a client connected at exit", rc, out.read())
    check("telemetry: the run's folder is gone", not os.path.exists(os.path.dirname(sock)))


for part in (pty_rows, paste_rows, text_rows, socket_rows, tel_rows):
    try:
        part()
    except Exception as e:          # a row that hangs or breaks the driver is a failure, not a traceback
        check("%s ran to its end" % part.__name__, False, repr(e))
print("all checks passed" if fails == 0 else "%d check(s) failed" % fails)
sys.exit(1 if fails else 0)
