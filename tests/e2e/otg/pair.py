"""pair.py - one flow each way between two ports wired back to back
(test_otg_veth.sh: a veth pair, each end a Linux interface name as the
port's location).

  PYTHONPATH=../shared/peers/otg python3 pair.py URL LOC_A LOC_B

Checks, per flow: transmit stopped, frames_tx == the packets asked,
frames_rx on the other port == frames_tx, bytes; per port: frames_tx.
Prints one line per check; exits 1 when one failed.
"""
import sys

import snappi
from otgrun import check, start_all, udp_flow, wait_stopped

URL, LOC_A, LOC_B = sys.argv[1], sys.argv[2], sys.argv[3]


api = snappi.api(location=URL, verify=False)
cfg = api.config()
pa = cfg.ports.add(name="a", location=LOC_A)
pb = cfg.ports.add(name="b", location=LOC_B)
for name, tx, rx, n, size in (("ab", pa, pb, 2000, 256), ("ba", pb, pa, 700, 1518)):
    udp_flow(cfg, name, tx.name, rx.name, n, size, 20000, 1000, 100)
api.set_config(cfg)
start_all(api)
fm = wait_stopped(api, 30)
by = {m.name: m for m in fm}
for name, n, size in (("ab", 2000, 256), ("ba", 700, 1518)):
    m = by[name]
    check(f"{name}: transmit stopped", m.transmit == "stopped", m.transmit)
    check(f"{name}: frames_tx == {n}", m.frames_tx == n, m.frames_tx)
    check(f"{name}: frames_rx on the other end == frames_tx", m.frames_rx == n, m.frames_rx)
    check(f"{name}: bytes_rx == {n} x {size}", m.bytes_rx == n * size, m.bytes_rx)
mr = api.metrics_request()
mr.port.port_names = []
pm = {m.name: m for m in api.get_metrics(mr).port_metrics}
check("port a: frames_tx 2000, link up", pm["a"].frames_tx == 2000 and pm["a"].link == "up", pm["a"].serialize())
check("port b: frames_tx 700, link up", pm["b"].frames_tx == 700 and pm["b"].link == "up", pm["b"].serialize())
print("otg pair: %d failed" % check.fails)
sys.exit(1 if check.fails else 0)
