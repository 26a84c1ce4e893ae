"""otg-overhead.py - what surge otg adds around the data path, measured from
snappi (docs/performance.md, "surge otg's overhead"): set_config, a traffic
start (the port tasks launched, every port receiving, the flows sending)
and a metrics poll.

  build/surge otg --no-huge --vdev net_ring0 [--file-prefix P] &
  PYTHONPATH=../shared/peers/otg /usr/bin/python3 bench/otg-overhead.py https://127.0.0.1:8443 [P]

With P (the server's --file-prefix) it also measures set_config to the
first packet: from the set_config call to the first poll of DPDK's
telemetry (/ethdev/stats,0 of the server, polled back to back, ~0.1 ms a
poll) in which the port's opackets moved, the start sent right after the
set_config returned: what a snappi test waits between its config and its
traffic.
"""
import json
import os
import statistics
import sys
import time
from typing import Callable, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from surgebench.telemetry import connect  # noqa: E402

import requests
import snappi

URL = sys.argv[1]
api = snappi.api(location=URL, verify=False)
cfg = api.config()
p = cfg.ports.add(name="p", location="net_ring0")
f = cfg.flows.add(name="f")
f.tx_rx.port.tx_name = "p"
f.rate.pps = 1000
f.metrics.enable = True
f.duration.fixed_packets.packets = 10
f.packet.ethernet().ipv4().udp()


def timed(fn: Callable[[], object], n: int) -> List[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


t = timed(lambda: api.set_config(cfg), 20)
print("set_config: median %.1f ms" % (statistics.median(t) * 1e3))
cs = api.control_state()
cs.traffic.flow_transmit.state = "start"


def start() -> None:
    api.set_control_state(cs)
    time.sleep(0.05)   # its flow of 10 frames ends


t = timed(start, 20)
print("start: median %.1f ms" % (statistics.median(t) * 1e3 - 50))
mr = api.metrics_request()
mr.flow.flow_names = []
t = sorted(timed(lambda: api.get_metrics(mr), 200))
print("flow metrics poll (snappi): median %.2f ms, p99 %.2f ms" % (statistics.median(t) * 1e3, t[197] * 1e3))
s = requests.Session()
t = timed(lambda: s.post(URL + "/monitor/metrics", data='{"choice":"port"}', verify=False), 200)
print("port metrics poll (a plain HTTP client): median %.2f ms" % (statistics.median(t) * 1e3))

if len(sys.argv) > 2:
    tele = connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % sys.argv[2], 10)

    def opackets() -> int:
        tele.send(b"/ethdev/stats,0")
        return int(json.loads(tele.recv(1 << 16))["/ethdev/stats"]["opackets"])

    stop = api.control_state()
    stop.traffic.flow_transmit.state = "stop"
    firsts = []
    for _ in range(20):
        api.set_control_state(stop)
        before = opackets()
        t0 = time.perf_counter()
        api.set_config(cfg)
        api.set_control_state(cs)
        while opackets() == before:
            pass
        firsts.append(time.perf_counter() - t0)
    firsts.sort()
    print("set_config to first packet: median %.1f ms, min %.1f, max %.1f" % (
        statistics.median(firsts) * 1e3, firsts[0] * 1e3, firsts[-1] * 1e3))
