"""cross.py - flows across hosts (test_otg_hosts.sh): port p1 is this
server's end A of a veth pair, port p2 the end B of it as a port of a surge
otg on REMOTE (HOST/B, reached over SSH): a flow from p1 to p2 is sent here
and counted there, one from p2 to p1 the other way; the merged metrics are
exact (frames, bytes, loss 0), the kernel's counters of the veth agree; a
stop of all, then a start and a stop again, gives exact final counts of
continuous flows; latency across hosts is refused by path.

  PYTHONPATH=../shared/peers/otg python3 cross.py URL REMOTE A B

Prints one line per check; exits 1 when one failed.
"""
import sys
import time
from typing import Any, Dict

import snappi
from otgrun import check, refused, start_all, udp_flow, wait_stopped

URL, REMOTE, A, B = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
api = snappi.api(location=URL, verify=False)


def kernel(iface: str, what: str) -> int:
    with open("/sys/class/net/%s/statistics/%s" % (iface, what)) as f:
        return int(f.read())


def config() -> Any:
    cfg = api.config()
    cfg.ports.add(name="p1", location=A)
    cfg.ports.add(name="p2", location=REMOTE + "/" + B)
    return cfg


def metrics() -> Dict[str, Any]:
    mr = api.metrics_request()
    mr.flow.flow_names = []
    return {m.name: m for m in api.get_metrics(mr).flow_metrics}


def stop_all() -> None:
    cs = api.control_state()
    cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.STOP
    api.set_control_state(cs)


def exact(name: str, m: Any, size: int) -> None:
    check("%s: stopped, %d sent, %d received, bytes x %d, loss 0" % (name, m.frames_tx, m.frames_rx, size),
          m.transmit == "stopped" and m.frames_tx > 0 and m.frames_rx == m.frames_tx
          and m.bytes_tx == m.frames_tx * size and m.bytes_rx == m.frames_rx * size and m.loss == 0, m.serialize())


# fixed flows each way across the hosts
cfg = config()
fx = udp_flow(cfg, "fx", "p1", "p2", 1000, 200, 10000, 1000, 100)
fx.metrics.timestamps = True
udp_flow(cfg, "fy", "p2", "p1", 500, 300, 10000, 2000, 100)
api.set_config(cfg)
got = api.get_config()
check("GET /config: the flows as given (fx p1 -> p2, fy p2 -> p1)",
      [(f.name, f.tx_rx.port.tx_name, list(f.tx_rx.port.rx_names)) for f in got.flows]
      == [("fx", "p1", ["p2"]), ("fy", "p2", ["p1"])], got.serialize())
k0 = (kernel(B, "rx_packets"), kernel(A, "rx_packets"))
t0 = time.time_ns()
start_all(api)
fm = {m.name: m for m in wait_stopped(api, 30)}
t1 = time.time_ns()
m = fm["fx"]
check("fx (sent here, received on the other host): 1000 sent, 1000 received, 200000 bytes each way, loss 0",
      m.transmit == "stopped" and m.frames_tx == 1000 and m.frames_rx == 1000 and m.bytes_tx == 200000
      and m.bytes_rx == 200000 and m.loss == 0 and m.port_tx == "p1" and m.port_rx == "p2", m.serialize())
ts = m.timestamps
check("fx's timestamps: the receiving host's clock, within the run (%d .. %d)" % (t0, t1),
      t0 <= ts.first_timestamp_ns < ts.last_timestamp_ns <= t1, m.serialize())
m = fm["fy"]
check("fy (sent on the other host, received here): 500 sent, 500 received, 150000 bytes, loss 0",
      m.transmit == "stopped" and m.frames_tx == 500 and m.frames_rx == 500 and m.bytes_tx == 150000
      and m.bytes_rx == 150000 and m.loss == 0 and m.port_tx == "p2" and m.port_rx == "p1", m.serialize())
k1 = (kernel(B, "rx_packets"), kernel(A, "rx_packets"))
check("the kernel: %s received 1000 frames, %s 500" % (B, A), (k1[0] - k0[0], k1[1] - k0[1]) == (1000, 500),
      (k1[0] - k0[0], k1[1] - k0[1]))

# continuous flows each way: a stop of all gives final counts, every frame sent received; then again.
# 5000 a second: DPDK's af_packet ring (512 frames) holds 0.1 s of them while a task waits for a CPU
cfg = config()
for name, tx, rx, size in (("cx", "p1", "p2", 128), ("cy", "p2", "p1", 256)):
    f = udp_flow(cfg, name, tx, rx, 1, size, 5000, 3000, 10)
    f.duration.continuous.gap = 12
api.set_config(cfg)
last: Dict[str, int] = {}
for cycle in (1, 2):
    t = time.time()
    start_all(api)
    started = time.time() - t
    early = metrics()
    if last:
        # read at once (milliseconds of 5000 a second): counted since the last run it would be its count or more
        check("cycle %d: counts since this start (read at once: fewer than the last run's)" % cycle,
              all(early[n].frames_tx < last[n] for n in early), [(last[n], early[n].frames_tx) for n in early])
    time.sleep(0.6)
    t = time.time()
    stop_all()
    print("     cycle %d: the start took %.0f ms, the stop of all (drain included) %.0f ms"
          % (cycle, started * 1e3, (time.time() - t) * 1e3))
    fm = metrics()
    for name, size in (("cx", 128), ("cy", 256)):
        exact("cycle %d, %s (a stop of all)" % (cycle, name), fm[name], size)
    again = metrics()
    check("cycle %d: the counts final (a second read the same)" % cycle,
          all((again[n].frames_tx, again[n].frames_rx) == (fm[n].frames_tx, fm[n].frames_rx) for n in fm),
          [(n, fm[n].frames_rx, again[n].frames_rx) for n in fm])
    last = {n: fm[n].frames_tx for n in fm}

# a named stop of the flow across hosts: stopped once drained, exact; then the other by a stop of all
start_all(api)
time.sleep(0.2)
cs = api.control_state()
cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.STOP
cs.traffic.flow_transmit.flow_names = ["cx"]
api.set_control_state(cs)
deadline = time.time() + 5
while metrics()["cx"].transmit != "stopped" and time.time() < deadline:
    time.sleep(0.05)
fm = metrics()
exact("cx (stopped by name, cy running)", fm["cx"], 128)
check("cy still sends", fm["cy"].transmit == "started", fm["cy"].serialize())
stop_all()
exact("cy (then a stop of all)", metrics()["cy"], 256)

bad = config()
f = udp_flow(bad, "fx", "p1", "p2", 1000, 200, 20000, 1000, 100)
f.metrics.latency.enable = True
refused("latency across hosts: 400 naming flows[0].metrics.latency.enable, no common clock",
        lambda: api.set_config(bad), ["flows[0].metrics.latency.enable", "clock common to them"])
print("otg cross: %d failed" % check.fails)
sys.exit(1 if check.fails else 0)
