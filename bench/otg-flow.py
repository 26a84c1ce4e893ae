"""otg-flow.py - the OTG side of scripts/bench's OTG row (issue 32 item 7):
through snappi, a config of one port (LOCATION) and one flow as
examples/udp-flood.lua --size SIZE --flows FLOWS sends it (UDP/IPv4, the
source port incremented over FLOWS values from 1024, frames of SIZE + 4
bytes with the FCS, continuous, a rate no queue reaches: 1e9 pps, surge's pacer's highest), then
traffic started. Prints `started` and exits; the server keeps sending.

  PYTHONPATH=../shared/peers/otg /usr/bin/python3 bench/otg-flow.py URL LOCATION SIZE FLOWS [--wait]

--wait: the server may still be starting: its version asked until it
answers (30 s at most).
"""
import sys
import time

import snappi

URL, LOC, SIZE, FLOWS = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
api = snappi.api(location=URL, verify=False)
if "--wait" in sys.argv[5:]:
    deadline = time.time() + 30
    while True:
        try:
            api.get_version()
            break
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.1)
cfg = api.config()
p = cfg.ports.add(name="p", location=LOC)
f = cfg.flows.add(name="f")
f.tx_rx.port.tx_name = p.name
f.size.fixed = SIZE + 4
f.rate.pps = 10 ** 9
f.duration.continuous.gap = 12
eth, ip, udp = f.packet.ethernet().ipv4().udp()
eth.src.value, eth.dst.value = "02:00:00:00:00:01", "02:00:00:00:00:02"
ip.src.value, ip.dst.value = "10.0.0.1", "10.0.0.2"
if FLOWS > 1:
    udp.src_port.increment.start, udp.src_port.increment.step, udp.src_port.increment.count = 1024, 1, FLOWS
else:
    udp.src_port.value = 1024
udp.dst_port.value = 5000
api.set_config(cfg)
cs = api.control_state()
cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.START
api.set_control_state(cs)
print("started")
