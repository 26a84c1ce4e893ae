"""otg-tags.py - what a metric tag costs a flow's sending (docs/performance.md,
"OTG metric tags"): through snappi, one flow on net_null0,no-rx=1 as
bench/otg-flow.py sends it (64-byte UDP frames, the source port incremented
over 1024 values, 1e9 pps), metrics.enable, with "tag" a 10-bit metric tag
on the source port; its frames_tx read 1.5 s after the start and 3 s later.
Prints "tag|untagged N Mpps". Run it once the server says "serving the OTG API".

  PYTHONPATH=../shared/peers/otg /usr/bin/python3 bench/otg-tags.py URL tag|untagged
"""
import sys
import time

import snappi

URL, TAG = sys.argv[1], sys.argv[2] == "tag"
api = snappi.api(location=URL, verify=False)
cfg = api.config()
p = cfg.ports.add(name="p", location="net_null0,no-rx=1")
f = cfg.flows.add(name="f")
f.tx_rx.port.tx_name = p.name
f.size.fixed = 64
f.rate.pps = 10 ** 9
f.metrics.enable = True
eth, ip, udp = f.packet.ethernet().ipv4().udp()
eth.src.value, eth.dst.value = "02:00:00:00:00:01", "02:00:00:00:00:02"
ip.src.value, ip.dst.value = "10.0.0.1", "10.0.0.2"
udp.src_port.increment.start, udp.src_port.increment.step, udp.src_port.increment.count = 1024, 1, 1024
if TAG:
    udp.src_port.metric_tags.add(name="sport", offset=6, length=10)
udp.dst_port.value = 5000
api.set_config(cfg)
cs = api.control_state()
cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.START
api.set_control_state(cs)
time.sleep(1.5)
mr = api.metrics_request()
mr.flow.flow_names = ["f"]
mr.flow.tagged_metrics.include = False
a, t0 = api.get_metrics(mr).flow_metrics[0].frames_tx, time.time()
time.sleep(3)
b, t1 = api.get_metrics(mr).flow_metrics[0].frames_tx, time.time()
print("%s %.2f Mpps" % ("tag" if TAG else "untagged", (b - a) / (t1 - t0) / 1e6))
