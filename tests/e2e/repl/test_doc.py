"""test_doc.py - the sessions recorded in docs/repl.md, run as written.

Every block of docs/repl.md that starts with `$ surge ` is a session:
- `$ surge repl ...` or `$ surge attach PATH` opens a real terminal on that
  command; the `surge> ` and `   >> ` lines after it are typed there, and what
  comes back before the next prompt must match the recorded lines, with
  every number allowed to differ (rates and counters move) and runs of spaces
  free, and the line a task prints when it ends before the next prompt
  (`task N 'f' finished: ...`, docs/repl.md: when it shows is a race with
  the prompt) allowed before that prompt; the block's end (or the next `$`
  line) types Ctrl-D, and the command must exit 0 (a `surge repl` with every pool back, "no leak");
- `$ surge ... &` starts that command in the background: the block's end
  waits for it to exit 0 with every pool back;
- `$ surge attach PATH -e 'CODE'` runs it, and its output must match the lines
  recorded after it.
The commands are the doc's own; the test adds only what a test needs: the
built surge for `surge`, --no-huge --stats-interval 0 after `run` or `repl`,
the source tree for `examples/`, and a private folder for `/tmp/`.
"""
import os, re, shlex, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(__file__))
from pty_drive import Term

SURGE = os.environ["SURGE"]
SRC = os.environ["SURGE_SRC"]
tmp = tempfile.mkdtemp(prefix="surge-repl-doc-", dir=os.environ.get("TMPDIR", "/tmp"))
env = dict(os.environ, HOME=tmp, TERM="xterm")
doc = open(os.path.join(SRC, "docs/repl.md")).read()
blocks = [b for b in re.findall(r"```\n(.*?)```", doc, re.S) if b.startswith("$ surge ")]
fails = 0


def fail(msg):
    global fails
    print("FAIL " + msg)
    fails += 1


# a task that ended while nothing waited for it, announced before the prompt
ENDED = r"(?:task [0-9]+ '[^'\n]*' finished[^\n]*\n)*"


def pattern(line):
    out = []
    for tok in re.split(r"(\d+(?:\.\d+)?|\s+)", line):
        if not tok:
            continue
        if tok[0].isdigit():
            out.append(r"[0-9]+(?:\.[0-9]+)?")
        elif tok.isspace():
            out.append(r"\s+")
        else:
            out.append(re.escape(tok))
    return "".join(out)


def argv(cmd):
    """The doc's command line as this test runs it."""
    words = [w.replace("/tmp/", tmp + "/") for w in shlex.split(cmd)]
    words = [os.path.join(SRC, w) if w.startswith("examples/") else w for w in words]
    assert words[0] == "surge", cmd
    words[0] = SURGE
    if words[1] in ("run", "repl"):
        words[2:2] = ["--no-huge", "--stats-interval", "0"]
    return words


def parse(block):
    """[(kind, text, [expected lines])]: kind '$' a command, '>' a typed line."""
    steps = []
    for line in block.rstrip("\n").split("\n"):
        m = re.match(r"^(\$ |surge> |   >> )(.*)$", line)
        if m:
            steps.append(("$" if m.group(1) == "$ " else ">", m.group(2), []))
        else:
            steps[-1][2].append(line)
    return steps


def wait_socket(words, timeout=20):
    """A background `run --control PATH` serves once PATH answers."""
    if "--control" not in words:
        return
    path, end = words[words.index("--control") + 1], time.monotonic() + timeout
    while time.monotonic() < end:
        if subprocess.run([SURGE, "attach", path, "-e", "1"], capture_output=True).returncode == 0:
            return
        time.sleep(0.2)
    fail("the background run never served " + path)


def close_term(term):
    term.type("\x04")
    rc = term.close()
    if rc != 0:
        fail("leaving %s: exit %s\n%s" % (term.cmd, rc, term.screen[-600:]))
    elif term.cmd.startswith("surge repl") and "no leak" not in term.screen:
        fail("leaving %s: no pool check\n%s" % (term.cmd, term.screen[-600:]))
    else:
        print("ok   left " + term.cmd)


def run_block(block):
    term, background, checked = None, [], 0
    for kind, text, expected in parse(block):
        if kind == ">":
            if term is None:
                fail("typed line before any command: " + text)
                return
            term.type(text + "\r", delay=0.005)
            rx = (re.escape(text) + r"\n" + "".join(pattern(l) + r"\n" for l in expected) + ENDED
                  + r"(surge> |   >> )")
            try:
                term.expect(rx, timeout=15)
                print("ok   " + text)
                checked += 1
            except AssertionError as e:
                fail(text + ": " + str(e)[-600:])
                break
            continue
        if term is not None:
            close_term(term)
            term = None
        if text.endswith("&"):
            words = argv(text[:-1])
            out = open(os.path.join(tmp, "bg%d.out" % len(background)), "w+")
            background.append((text, subprocess.Popen(words, stdout=out, stderr=subprocess.STDOUT), out))
            wait_socket(words)
        elif " -e " in text:
            r = subprocess.run(argv(text), capture_output=True, text=True, timeout=30)
            got = r.stdout + r.stderr
            rx = "".join(pattern(l) + r"\n" for l in expected) + r"\Z"
            if r.returncode == 0 and re.match(rx, got):
                print("ok   $ " + text)
                checked += 1
            else:
                fail("$ %s: exit %d, printed:\n%s\nexpected:\n%s" % (text, r.returncode, got, "\n".join(expected)))
        else:
            term = Term(argv(text), env)
            term.cmd = text
            term.expect(r"surge> ", timeout=30)
    if term is not None:
        close_term(term)
    for text, p, out in background:
        try:
            rc = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        out.seek(0)
        log = out.read()
        if rc != 0 or "no leak" not in log:
            fail("background %s: exit %s\n%s" % (text, rc, log[-800:]))
        else:
            print("ok   background %s: exit 0, every pool back" % text)
    print("%d lines of the session '%s' checked" % (checked, block.split("\n")[0]))


if len(blocks) < 2:
    fail("docs/repl.md: expected the prompt's session and the attach session, found %d block(s)" % len(blocks))
for b in blocks:
    run_block(b)
print("all sessions checked" if fails == 0 else "%d failure(s)" % fails)
sys.exit(1 if fails else 0)
