#!/usr/bin/env python3
"""A raw TCP peer for surge's connection engine (test_conn_misuse.sh).

It crafts every segment itself on an AF_PACKET socket of the kernel's end
of the veth pair, from an address the kernel does not own (so the kernel
neither answers surge's segments nor resets them), and checks what a surge
server (http-server.lua) answers: segments out of the window, ACKs of what
was never sent, a SYN on an established connection, a zero window, an RST
in each state and out of the window, malformed lengths and options, data
after a FIN. Each check prints "ok ..." or "FAIL ..."; the last line is
"SENT MALFORMED n" (the frames the server must count in rx_bad) and the
exit status is the number of failures.

Usage: raw_peer.py IFACE SERVER_IP SERVER_MAC
"""
import socket
import struct
import sys
import time
from typing import List, Optional, Tuple

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
SRC_IP = "10.1.0.77"     # not the kernel's: surge's answers to it are dropped there
REQ = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"

fails = 0
malformed = 0


def check(ok: bool, what: str, detail: str = "") -> None:
    global fails
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else ": " + detail), flush=True)
    if not ok:
        fails += 1


def csum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


class Seg:
    def __init__(self, seq: int, ack: int, flags: int, win: int, data: bytes) -> None:
        self.seq, self.ack, self.flags, self.win, self.data = seq, ack, flags, win, data

    def __repr__(self) -> str:
        return "<seq %d ack %d flags 0x%x win %d len %d>" % (self.seq, self.ack, self.flags, self.win,
                                                              len(self.data))


class Peer:
    def __init__(self, iface: str, server: str, mac: str) -> None:
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.sock.bind((iface, 0))
        self.my_mac = self.sock.getsockname()[4]
        self.dst_mac = bytes(int(x, 16) for x in mac.split(":"))
        self.src = socket.inet_aton(SRC_IP)
        self.dst = socket.inet_aton(server)

    def frame(self, sport: int, seq: int, ack: int, flags: int, data: bytes = b"", win: int = 65535,
              opts: bytes = b"", doff: Optional[int] = None, ip_tot: Optional[int] = None,
              ihl: int = 5, bad_sum: bool = False) -> bytes:
        off = doff if doff is not None else (20 + len(opts)) // 4
        tcp = struct.pack("!HHIIBBHHH", sport, 80, seq & 0xffffffff, ack & 0xffffffff, off << 4, flags, win,
                          0, 0) + opts + data
        ph = self.src + self.dst + struct.pack("!BBH", 0, 6, len(tcp))
        s = csum(ph + tcp) ^ (0x5555 if bad_sum else 0)
        tcp = tcp[:16] + struct.pack("!H", s) + tcp[18:]
        iplen = ihl * 4
        tot = ip_tot if ip_tot is not None else iplen + len(tcp)
        ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, tot & 0xffff, 0, 0, 64, 6, 0, self.src, self.dst)
        ip += b"\0" * (iplen - 20)
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        return self.dst_mac + self.my_mac + b"\x08\x00" + ip + tcp

    def send(self, sport: int, seq: int, ack: int, flags: int, data: bytes = b"", **kw) -> None:
        self.sock.send(self.frame(sport, seq, ack, flags, data, **kw))

    def send_raw(self, f: bytes) -> None:
        self.sock.send(f)

    def recv(self, sport: int, quiet: float = 0.15, most: float = 3.0, first: float = 2.0) -> List[Seg]:
        """The server's segments to sport: waits up to `first` s for one
        (a loaded machine may take that long), then until none came for
        `quiet` s, `most` s in all."""
        got: List[Seg] = []
        t0 = time.time()
        end, last = t0 + most, t0
        while time.time() < end and time.time() - last < (quiet if got else first):
            self.sock.settimeout(max(0.01, min(quiet, end - time.time())))
            try:
                b, addr = self.sock.recvfrom(65535)
            except socket.timeout:
                continue
            if addr[2] == socket.PACKET_OUTGOING or len(b) < 54 or b[12:14] != b"\x08\x00" or b[23] != 6:
                continue
            ihl = (b[14] & 15) * 4
            if b[26:30] != self.dst or b[30:34] != self.src:
                continue
            t = 14 + ihl
            sp, dp, seq, ack, offb, flags, win = struct.unpack("!HHIIBBH", b[t:t + 16])
            if dp != sport:
                continue
            tot = struct.unpack("!H", b[16:18])[0]
            got.append(Seg(seq, ack, flags, win, b[t + (offb >> 4) * 4:14 + tot]))
            last = time.time()
        return got

    def handshake(self, sport: int, isn: int = 1000) -> Tuple[int, int]:
        """SYN, SYN-ACK, ACK: (the server's next seq, ours)."""
        self.send(sport, isn, 0, SYN, opts=b"\x02\x04\x05\xb4")
        r = [s for s in self.recv(sport) if s.flags & SYN]
        if not r:
            raise RuntimeError("no SYN-ACK on port %d" % sport)
        self.send(sport, isn + 1, r[0].seq + 1, ACK)
        return r[0].seq + 1, isn + 1

    def alive(self, sport: int, snd: int, rcv: int) -> bool:
        """A request on the connection gets response bytes at rcv."""
        self.send(sport, snd, rcv, ACK | PSH, REQ)
        return any(s.data and s.seq == rcv for s in self.recv(sport))

    def gone(self, sport: int, snd: int, rcv: int) -> bool:
        """No connection on sport: an ACK there is answered by an RST."""
        self.send(sport, snd, rcv, ACK)
        return any(s.flags & RST for s in self.recv(sport))


def main() -> int:
    global malformed
    p = Peer(sys.argv[1], sys.argv[2], sys.argv[3])
    port = 20000

    def nxt() -> int:
        nonlocal port
        port += 1
        return port

    # the first step of 3.10.7.4: the sequence number
    sp = nxt()
    rcv, snd = p.handshake(sp)
    p.send(sp, snd + 100000, rcv, ACK | PSH, REQ)
    r = p.recv(sp)
    check(len(r) == 1 and r[0].ack == snd and not r[0].data and r[0].flags == ACK,
          "data past the window: one duplicate ACK at rcv_nxt", repr(r))
    p.send(sp, snd - 5000, rcv, ACK | PSH, REQ)
    r = p.recv(sp)
    check(len(r) == 1 and r[0].ack == snd and not r[0].data, "data wholly before rcv_nxt: a duplicate ACK", repr(r))
    p.send(sp, snd, rcv + 70000, ACK | PSH, REQ)
    r = p.recv(sp)
    check(len(r) == 1 and r[0].ack == snd and not r[0].data, "an ACK of what was never sent: a duplicate ACK",
          repr(r))
    p.send(sp, snd, rcv - 100000, ACK)
    check(p.alive(sp, snd, rcv), "an old ACK changes nothing: a request after it answered")
    p.send(sp, snd + len(REQ), rcv, ACK | RST)

    # the fourth: a SYN on an established connection: an ACK, nothing reset
    sp = nxt()
    rcv, snd = p.handshake(sp)
    p.send(sp, snd + 7, 0, SYN)
    r = p.recv(sp)
    check(len(r) == 1 and r[0].flags == ACK and r[0].ack == snd, "SYN in ESTABLISHED: an ACK", repr(r))
    check(p.alive(sp, snd, rcv), "SYN in ESTABLISHED: the connection goes on")
    p.send(sp, snd + len(REQ), rcv, ACK | RST)

    # a zero window: nothing sent into it; a window update, then the answer
    sp = nxt()
    rcv, snd = p.handshake(sp)
    p.send(sp, snd, rcv, ACK | PSH, REQ, win=0)
    r = p.recv(sp, quiet=0.4)             # its ACK, then nothing for 0.4 s
    check(all(not s.data for s in r), "a zero window: no byte sent into it", repr(r))
    p.send(sp, snd + len(REQ), rcv, ACK, win=1000)
    r = p.recv(sp)
    n = sum(len(s.data) for s in r)
    check(n == 1000 and r[0].seq == rcv, "a window of 1000 opened: 1000 bytes, from the start", repr(r))
    p.send(sp, snd + len(REQ), rcv + 1000, ACK | RST)

    # the second: an RST, in each state and out of the window
    sp = nxt()
    p.send(sp, 5000, 0, SYN)
    r = [s for s in p.recv(sp) if s.flags & SYN]
    p.send(sp, 5001, 0, RST)
    check(len(r) == 1 and p.gone(sp, 5001, r[0].seq + 1), "RST in SYN-RECEIVED: the connection gone")
    sp = nxt()
    rcv, snd = p.handshake(sp)
    p.send(sp, snd + 200000, 0, RST)
    check(not p.recv(sp, first=0.5), "RST outside the window: ignored, unanswered")
    check(p.alive(sp, snd, rcv), "RST outside the window: the connection goes on")
    snd += len(REQ)
    p.send(sp, snd, 0, RST)
    check(p.gone(sp, snd, rcv), "RST in ESTABLISHED: the connection gone")
    sp = nxt()                                           # CLOSE_WAIT: request and FIN, a small window
    rcv, snd = p.handshake(sp)
    p.send(sp, snd, rcv, ACK | PSH | FIN, REQ, win=100)
    r = p.recv(sp)
    check(any(s.data for s in r) and not any(s.flags & FIN for s in r), "request and FIN: answers first (CLOSE_WAIT)",
          repr(r))
    snd += len(REQ) + 1
    p.send(sp, snd, 0, RST)
    check(p.gone(sp, snd, rcv), "RST in CLOSE-WAIT: the connection gone")
    sp = nxt()                                           # FIN_WAIT_1: the server's FIN with its answer
    rcv, snd = p.handshake(sp)
    close_req = b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n"
    p.send(sp, snd, rcv, ACK | PSH, close_req)
    r = p.recv(sp)
    fin = [s for s in r if s.flags & FIN]
    check(len(fin) == 1, "Connection: close: the answer and the server's FIN", repr(r))
    snd += len(close_req)
    p.send(sp, snd, 0, RST)
    check(p.gone(sp, snd, rcv), "RST in FIN-WAIT-1: the connection gone")
    sp = nxt()                                           # TIME_WAIT: the server closed first
    rcv, snd = p.handshake(sp)
    p.send(sp, snd, rcv, ACK | PSH, close_req)
    r = p.recv(sp)
    end = max((s.seq + len(s.data) + (1 if s.flags & FIN else 0) for s in r), default=rcv)
    snd += len(close_req)
    p.send(sp, snd, end, ACK | FIN)
    r = p.recv(sp)
    check(len(r) == 1 and r[0].flags == ACK and r[0].ack == snd + 1, "our FIN after the server's: its ACK (TIME-WAIT)",
          repr(r))
    p.send(sp, snd + 1, 0, RST)
    check(not p.recv(sp, first=0.5), "RST in TIME-WAIT: unanswered")

    # data after our FIN: dropped, counted, answered by an ACK, no answer
    sp = nxt()
    rcv, snd = p.handshake(sp)
    p.send(sp, snd, rcv, ACK | FIN)
    r = p.recv(sp)
    fin = [s for s in r if s.flags & FIN]
    check(len(fin) == 1 and fin[0].ack == snd + 1, "a FIN before any request: the server's FIN (LAST-ACK)", repr(r))
    p.send(sp, snd + 1, rcv, ACK | PSH, REQ)
    r = p.recv(sp, first=0.5)
    check(all(not s.data for s in r), "data after the FIN: no answer", repr(r))
    p.send(sp, snd + 1, rcv + 1, ACK)
    check(p.gone(sp, snd + 1, rcv + 1), "the close acknowledged: the connection gone")

    # lengths that lie, options that are garbage: each counted in rx_bad, unanswered
    sp = nxt()
    rcv, snd = p.handshake(sp)
    bad = [
        ("IP total length past the frame", p.frame(sp, snd, rcv, ACK | PSH, REQ, ip_tot=65535)),
        ("IP total length under its headers", p.frame(sp, snd, rcv, ACK | PSH, REQ, ip_tot=39)),
        ("IP header length past the total", p.frame(sp, snd, rcv, ACK, ihl=15, ip_tot=60 + 19)),
        ("IP header length under 20 bytes", p.frame(sp, snd, rcv, ACK, ihl=4)),
        ("TCP data offset under 5 words", p.frame(sp, snd, rcv, ACK | PSH, REQ, doff=4)),
        ("TCP data offset past the segment", p.frame(sp, snd, rcv, ACK, doff=15)),
        ("a wrong TCP checksum", p.frame(sp, snd, rcv, ACK | PSH, REQ, bad_sum=True)),
        ("an option of length 0", p.frame(sp, snd, rcv, ACK, opts=b"\x05\x00\x00\x00")),
        ("an option of length 1", p.frame(sp, snd, rcv, ACK, opts=b"\x08\x01\x00\x00")),
        ("an option past the header", p.frame(sp, snd, rcv, ACK, opts=b"\x01\x01\x08\x0a")),
        ("a SYN with FIN", p.frame(nxt(), 1, 0, SYN | FIN)),
        ("a SYN with RST", p.frame(nxt(), 1, 0, SYN | RST)),
        ("a SYN with an MSS option of length 0", p.frame(nxt(), 1, 0, SYN, opts=b"\x02\x00\x05\xb4")),
    ]
    for what, f in bad:
        p.send_raw(f)
        malformed += 1
        r = p.recv(sp, quiet=0.05, most=0.3, first=0.3)
        check(not r, what + ": dropped, unanswered", repr(r))
    check(p.alive(sp, snd, rcv), "after the malformed segments: the connection goes on")
    p.send(sp, snd + len(REQ), rcv, ACK | RST)
    # options the engine skips: a SYN with NOPs, an unknown kind, EOL then garbage, an MSS of 0
    for what, opts in [("NOPs and an unknown option", b"\x01\x01\xfe\x06\xaa\xbb\xcc\xdd\x01\x01\x01\x01"),
                       ("EOL then garbage", b"\x00\xff\xff\xff"), ("an MSS of 0", b"\x02\x04\x00\x00")]:
        sp = nxt()
        p.send(sp, 9000, 0, SYN, opts=opts)
        r = [s for s in p.recv(sp) if s.flags & SYN]
        check(len(r) == 1, "a SYN with " + what + ": answered", repr(r))
        p.send(sp, 9001, 0, RST)
    print("SENT MALFORMED %d" % malformed, flush=True)
    return fails


if __name__ == "__main__":
    sys.exit(main())
