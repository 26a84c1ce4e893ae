"""wire.py - the control socket's framing, for the tests that speak it raw.

A request and a reply are each "LENGTH\\n" then LENGTH bytes (docs/repl.md,
core/front/socket.c); these two are the tests' only copy of that rule.
"""
import socket
from typing import Optional


def frame(payload: bytes) -> bytes:
    """One framed request."""
    return str(len(payload)).encode() + b"\n" + payload


def recv_frame(s: socket.socket) -> Optional[bytes]:
    """One framed reply, or None when the socket closed first."""
    head = b""
    while not head.endswith(b"\n"):
        c = s.recv(1)
        if not c:
            return None
        head += c
    n, body = int(head), b""
    while len(body) < n:
        c = s.recv(n - len(body))
        if not c:
            return None
        body += c
    return body
