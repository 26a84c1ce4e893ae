"""bigbodies.py - six clients send 60 MB bodies at the same time, a
megabyte each in turn: the server holds at most 256 MiB of bodies, so some
are read whole (400: zeros are not JSON) and the others answered 503 at
once; every client gets an answer, the server then answers others.

  python3 bigbodies.py HOST PORT   -> prints "400:N 503:M"
"""
import socket
import sys
from collections import Counter
from typing import List

HOST, PORT = sys.argv[1], int(sys.argv[2])
SIZE, CHUNK = 60_000_000, 1 << 20
socks: List[socket.socket] = []
for _ in range(6):
    s = socket.create_connection((HOST, PORT))
    s.sendall(b"POST /config HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % SIZE)
    socks.append(s)
zeros = bytes(CHUNK)
sent = [0] * 6
closed = [False] * 6
while any(n < SIZE for n in sent):
    for i, s in enumerate(socks):
        n = min(CHUNK, SIZE - sent[i])
        if n == 0 or closed[i]:
            sent[i] = SIZE
            continue
        try:
            s.sendall(zeros[:n])
        except OSError:          # answered (503) and closed before the whole body
            closed[i] = True
        sent[i] += n
codes: "Counter[str]" = Counter()
for s in socks:
    s.settimeout(20)
    head = b""
    try:
        while b"\r\n" not in head:
            more = s.recv(4096)
            if not more:
                break
            head += more
    except OSError:
        pass
    codes[head.split(b" ")[1].decode() if head.startswith(b"HTTP/") else "none"] += 1
    s.close()
print(" ".join("%s:%d" % (k, v) for k, v in sorted(codes.items())))
