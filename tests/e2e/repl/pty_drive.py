"""pty_drive.py - type at a program through a real pseudo-terminal, as a person would.

    t = Term(["surge", "repl", ...], env)
    t.expect(r"surge> ")          # waits for the screen to show it (regex)
    t.type("1+1\r")               # keystrokes: \r is Enter, \t Tab, \x03 Ctrl-C, \x04 Ctrl-D
    t.close() -> exit code
Everything the program printed is in t.screen (escape sequences stripped).
"""
import fcntl, os, pty, re, select, signal, struct, sys, termios, time

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r|\x07")
BACK = re.compile(rb"[^\n\x08]\x08")   # a backspace, then the same column rewritten


class Term:
    def __init__(self, argv, env=None):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            # a wide terminal: typed lines never wrap (wrapping adds cursor moves)
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 250, 0, 0))
            os.execvpe(argv[0], argv, env or os.environ)
        self.raw = b""
        self.mark = 0          # expect() looks from here on

    @property
    def screen(self):
        text = ANSI.sub(b"", self.raw)
        while b"\x08" in text:
            new = BACK.sub(b"", text)
            if new == text:
                text = text.replace(b"\x08", b"")
            text = new
        return text.decode("utf-8", "replace")

    def _read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return None
        if not data:
            return None
        self.raw += data
        return True

    def expect(self, pattern, timeout=10):
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.screen, self.mark)
            if m:
                self.mark = m.end()
                return m
            left = deadline - time.monotonic()
            if left <= 0 or self._read(min(left, 0.2)) is None and not rx.search(self.screen, self.mark):
                if left <= 0 or self._read(0) is None:
                    raise AssertionError("timed out waiting for /%s/; screen since mark:\n%s"
                                         % (pattern, self.screen[self.mark:][-2000:]))

    def type(self, keys, delay=0.02):
        for ch in keys:
            os.write(self.fd, ch.encode())
            time.sleep(delay)

    def drain(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self._read(0.05) is None:
                break

    def close(self, timeout=20):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.drain(0.2)
                return os.waitstatus_to_exitcode(status)
            self._read(0.1)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise AssertionError("the program did not exit; screen:\n" + self.screen[-2000:])


class Checks:
    """check = Checks(); check("name", cond, detail) prints ok/FAIL; check.fails counts the failures."""

    def __init__(self):
        self.fails = 0

    def __call__(self, name, cond, detail=""):
        print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else ": " + detail))
        self.fails += 0 if cond else 1
