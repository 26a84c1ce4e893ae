"""restart.py - a server lives through many configs and starts: 40 rounds,
alternating two configs of two flows each on one loopback port (other
templates each round: pools are refilled, surge cannot free them; 80 flow
starts are more than the 64 pools surge can have), every round's counts
exact: both flows' frames come back (the second flow's on the port's
second queue pair); then six ports at once, each a task.

  PYTHONPATH=../shared/peers/otg python3 restart.py URL
"""
import sys

import snappi
from otgrun import start_all, wait_stopped

URL = sys.argv[1]
api = snappi.api(location=URL, verify=False)
fails = 0


def config(k: int) -> "snappi.Config":
    cfg = api.config()
    p = cfg.ports.add(name="p", location="net_ring0")
    for j in range(2):
        f = cfg.flows.add(name="f%d" % j)
        f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = p.name, [p.name]
        f.size.fixed, f.rate.pps = 64 + 8 * k + 4 * j, 50000
        f.duration.fixed_packets.packets = 100 + j
        f.metrics.enable = True
        eth, ip, udp = f.packet.ethernet().ipv4().udp()
        udp.dst_port.value = 1000 * (k + 1) + j
    return cfg


cfgs = [config(0), config(1)]
for r in range(40):
    api.set_config(cfgs[r % 2])
    start_all(api)
    fm = wait_stopped(api, 20, poll=0.02)
    got = [(m.frames_tx, m.frames_rx) for m in fm]
    if got != [(100, 100), (101, 101)]:
        print("FAIL round %d: %s" % (r, got))
        fails += 1
# six ports at once: a task each (surge otg's default lcores: master and 7)
cfg = api.config()
for i in range(6):
    p = cfg.ports.add(name="p%d" % i, location="net_ring%d" % (i + 10))
    f = cfg.flows.add(name="f%d" % i)
    f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = p.name, [p.name]
    f.duration.fixed_packets.packets = 300 + i
    f.metrics.enable, f.rate.pps = True, 20000
    f.packet.ethernet().ipv4().udp()
api.set_config(cfg)
start_all(api)
fm = wait_stopped(api, 20, poll=0.05)
got6 = [(m.frames_tx, m.frames_rx) for m in fm]
if got6 != [(300 + i, 300 + i) for i in range(6)]:
    print("FAIL six ports: %s" % got6)
    fails += 1
print("restart: 40 rounds and six ports, %d failed" % fails)
sys.exit(1 if fails else 0)
