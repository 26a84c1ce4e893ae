"""test_doc.py - the session recorded in docs/repl.md, typed into a real terminal.

Every `surge> ` and `   >> ` line of the first session block is typed; what
comes back before the next prompt must match the recorded lines, with every
number allowed to differ (rates and counters move) and runs of spaces free.
"""
import os, re, sys
sys.path.insert(0, os.path.dirname(__file__))
from pty_drive import Term

SURGE = os.environ["SURGE"]
doc = open(os.path.join(os.environ["SURGE_SRC"], "docs/repl.md")).read()
block = next(b for b in re.findall(r"```\n(.*?)```", doc, re.S) if b.startswith("surge> "))
steps = []                       # (typed line, [expected output lines])
for line in block.rstrip("\n").split("\n"):
    m = re.match(r"^(surge> |   >> )(.*)$", line)
    if m:
        steps.append((m.group(2), []))
    else:
        steps[-1][1].append(line)


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


t = Term([SURGE, "repl", "--no-huge", "--stats-interval", "0", "--lcores", "(0-1)@(0-1)"],
         dict(os.environ, HOME=os.environ.get("TMPDIR", "/tmp"), TERM="xterm"))
t.expect(r"surge> ")
fails = 0
for typed, expected in steps:
    t.type(typed + "\r", delay=0.005)
    rx = re.escape(typed) + r"\n" + "".join(pattern(l) + r"\n" for l in expected) + r"(surge> |   >> )"
    try:
        t.expect(rx, timeout=15)
        print("ok   " + typed)
    except AssertionError as e:
        print("FAIL " + typed + ": " + str(e)[-600:])
        fails += 1
        break
t.type("\x04")
rc = t.close()
if rc != 0 or "no leak" not in t.screen:
    print("FAIL leaving: exit %s\n%s" % (rc, t.screen[-600:]))
    fails += 1
print("all %d lines of the recorded session checked" % len(steps) if fails == 0 else "%d failure(s)" % fails)
sys.exit(1 if fails else 0)
