#!/usr/bin/python3
"""bench/wake.py IFACE COUNT GAP_MS - writes COUNT frames into IFACE (a
surge net_tap port's kernel side), GAP_MS apart: ethertype 0x88b5, "SRGW",
the send time as little-endian CLOCK_MONOTONIC_RAW ns. See bench/wake.lua."""
import socket
import struct
import sys
import time

iface, count, gap = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
for _ in range(count):
    time.sleep(gap)
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    s.send(b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + b"SRGW" + struct.pack("<Q", now) + b"\0" * 34)
