"""trickle.py - a client that sends its request a byte at a time must not
hold the server back: while one trickles (and others hold idle
connections), requests of other clients are answered at once.

  python3 trickle.py HOST PORT
"""
import socket
import sys
import threading
import time
import urllib.request

HOST, PORT = sys.argv[1], int(sys.argv[2])
stop = threading.Event()


def trickle() -> None:
    s = socket.create_connection((HOST, PORT))
    s.sendall(b"POST /config HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
    while not stop.is_set():
        try:
            s.sendall(b" ")
        except OSError:
            return
        time.sleep(0.05)


threads = [threading.Thread(target=trickle, daemon=True) for _ in range(3)]
idle = [socket.create_connection((HOST, PORT)) for _ in range(8)]
for t in threads:
    t.start()
time.sleep(0.3)
worst = 0.0
for _ in range(20):
    t0 = time.time()
    with urllib.request.urlopen("http://%s:%d/capabilities/version" % (HOST, PORT), timeout=5) as r:
        assert r.status == 200
    worst = max(worst, time.time() - t0)
stop.set()
print("worst %.3f s" % worst)
sys.exit(0 if worst < 0.5 else 1)
