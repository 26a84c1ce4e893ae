"""portcap.py - OTG captures, port link and layer1 through snappi
(test_otg_portcap.sh): two loopback ports net_ring0 and net_ring1, a flow
on each, a capture on each (p1 pcap whole frames, p2 pcapng cut at 60
bytes); the capture started, traffic run, the capture read (which stops
it, as the model says) and written to OUT.p1.pcap and OUT.p2.pcapng for
tshark to judge. Then the link of p1 down and up again (the port metrics
say so) and the refusals by path.

  PYTHONPATH=../shared/peers/otg python3 portcap.py URL OUT

Prints one line per check; exits 1 when one failed.
"""
import json
import sys
import time
from typing import Any

import requests
import snappi
from otgrun import check, refused, start_all, udp_flow, wait_stopped

URL, OUT = sys.argv[1], sys.argv[2]
api = snappi.api(location=URL, verify=False)


def config(captures: bool = True) -> Any:
    cfg = api.config()
    p1 = cfg.ports.add(name="p1", location="net_ring0")
    p2 = cfg.ports.add(name="p2", location="net_ring1")
    for name, p, n, size, sport in (("f1", p1, 100, 64, 1000), ("f2", p2, 40, 128, 2000)):
        udp_flow(cfg, name, p.name, p.name, n, size, 20000, sport, 1000)
    if captures:
        c1 = cfg.captures.add(name="c1")
        c1.port_names = ["p1"]
        c2 = cfg.captures.add(name="c2")
        c2.port_names = ["p2"]
        c2.format, c2.packet_size = "pcapng", 60
    return cfg


if len(sys.argv) > 3 and sys.argv[3] == "bound":
    # the server bounds a capture at a few kB (SURGE_OTG_CAPTURE_BYTES): 1000 frames a port,
    # p1 overwrites (the newest kept), p2 does not (the first kept)
    cfg = config()
    for f in cfg.flows:
        f.duration.fixed_packets.packets, f.size.fixed = 1000, 64
    cfg.captures[1].format, cfg.captures[1].overwrite = "pcap", False
    api.set_config(cfg)
    cs = api.control_state()
    cs.port.capture.state = cs.port.capture.START
    api.set_control_state(cs)
    start_all(api)
    fm = {m.name: m for m in wait_stopped(api, 30)}
    check("1000 frames a flow received", fm["f1"].frames_rx == 1000 and fm["f2"].frames_rx == 1000)
    for port in ("p1", "p2"):
        req = api.capture_request()
        req.port_name = port
        with open("%s.%s.pcap" % (OUT, port), "wb") as out:
            out.write(api.get_capture(req).read())
    sys.exit(1 if check.fails else 0)

api.set_config(config())
got = api.get_config()
check("GET /config: the captures with the model's defaults (format pcap, overwrite true)",
      got.captures[0].format == "pcap" and got.captures[0].overwrite is True
      and got.captures[1].format == "pcapng" and got.captures[1].packet_size == 60, got.captures.serialize())


def port_metrics() -> Any:
    mr = api.metrics_request()
    mr.port.port_names = []
    return {m.name: m for m in api.get_metrics(mr).port_metrics}


cs = api.control_state()
cs.port.capture.port_names = []
cs.port.capture.state = cs.port.capture.START
api.set_control_state(cs)
pm = port_metrics()
check("port metrics: capture started on p1 and p2", pm["p1"].capture == "started" and pm["p2"].capture == "started",
      [pm["p1"].capture, pm["p2"].capture])
start_all(api)
fm = {m.name: m for m in wait_stopped(api, 30)}
check("f1: 100 sent, 100 received", fm["f1"].frames_tx == 100 and fm["f1"].frames_rx == 100, fm["f1"].serialize())
check("f2: 40 sent, 40 received", fm["f2"].frames_tx == 40 and fm["f2"].frames_rx == 40, fm["f2"].serialize())
for port, ext in (("p1", "pcap"), ("p2", "pcapng")):
    req = api.capture_request()
    req.port_name = port
    data = api.get_capture(req)
    with open("%s.%s.%s" % (OUT, port, ext), "wb") as out:
        out.write(data.read())
pm = port_metrics()
check("get_capture stopped the captures", pm["p1"].capture == "stopped" and pm["p2"].capture == "stopped",
      [pm["p1"].capture, pm["p2"].capture])

# a second run with the captures stopped: the files read again are the first run's
cs2 = api.control_state()
cs2.traffic.flow_transmit.state = cs2.traffic.flow_transmit.STOP
api.set_control_state(cs2)
start_all(api)
wait_stopped(api, 30)
req = api.capture_request()
req.port_name = "p1"
again = api.get_capture(req).read()
with open("%s.p1.pcap" % OUT, "rb") as f:
    check("a capture stopped takes no more frames (the same bytes read again)", again == f.read(), len(again))
cs2.traffic.flow_transmit.state = cs2.traffic.flow_transmit.STOP
api.set_control_state(cs2)

# link down and up on a net_ring port (the device can)
lk = api.control_state()
lk.port.link.port_names = ["p1"]
lk.port.link.state = lk.port.link.DOWN
api.set_control_state(lk)
pm = port_metrics()
check("port.link down: p1's link down, p2's up", pm["p1"].link == "down" and pm["p2"].link == "up",
      [pm["p1"].link, pm["p2"].link])
lk.port.link.state = lk.port.link.UP
api.set_control_state(lk)
check("port.link up: p1's link up", port_metrics()["p1"].link == "up")
lk.port.link.port_names = ["nope"]
refused("port.link of a port not in the config: 400 naming it", lambda: api.set_control_state(lk),
        ["port.link.port_names[0]", "'nope'"])

# a device that cannot set its link (net_null): the error names the port and the device
nl = api.config()
nl.ports.add(name="n", location="net_null0")
api.set_config(nl)
lk.port.link.port_names, lk.port.link.state = ["n"], lk.port.link.DOWN
refused("port.link on net_null: 400 naming the port and the device", lambda: api.set_control_state(lk),
        ["port.link: port 'n'", "(net_null): link down: the device cannot change it"])

# a TX-only port (net_null no-rx: every RX poll empty) sends at its rate: 100000 frames at 1 Mpps
# end in ~0.1 s (the core's RX idle sleep before each empty poll held such a port at ~0.03 Mpps: 3 s)
tx = api.config()
tx.ports.add(name="nr", location="net_null1,no-rx=1")
f = tx.flows.add(name="fast")
f.tx_rx.port.tx_name = "nr"
f.size.fixed, f.rate.pps, f.duration.fixed_packets.packets = 64, 1000000, 100000
f.packet.ethernet().ipv4().udp()
api.set_config(tx)
t0 = time.time()
start_all(api)
fm = {m.name: m for m in wait_stopped(api, 30, 0.02)}
took = time.time() - t0
check("a TX-only port: 100000 frames at 1 Mpps sent in under 1.5 s (%.2f s)" % took,
      fm["fast"].frames_tx == 100000 and took < 1.5, (fm["fast"].frames_tx, took))

# refusals by path
bad = config()
bad.captures[0].port_names = ["p1", "p9"]
refused("a capture naming no port: 400 with its path", lambda: api.set_config(bad),
        ["captures[0].port_names[1]", "'p9' is not a port"])
bad = config()
bad.captures[1].port_names = ["p1"]
refused("two captures of one port: 400", lambda: api.set_config(bad),
        ["captures[1].port_names[0]", "in captures[0] already"])
bad = config()
bad.captures[0].filters.add().ethernet.src.value = "00"
refused("capture filters: not implemented, by path", lambda: api.set_config(bad),
        ["captures[0].filters: not implemented by surge"])
bad = config()
l1 = bad.layer1.add(name="l1")
l1.port_names, l1.speed = ["p1"], l1.SPEED_400_GBPS
refused("layer1 speed the device does not run at: refused naming the port", lambda: api.set_config(bad),
        ["layer1[0].speed: speed_400_gbps", "port 'p1'"])
bad = config()
l1 = bad.layer1.add(name="l1")
l1.port_names, l1.media = ["p2"], "fiber"
refused("layer1 media: not implemented, by path", lambda: api.set_config(bad),
        ["layer1[0].media: not implemented by surge"])
bad = config()
l1 = bad.layer1.add(name="l1")
l1.port_names, l1.mtu = ["p2"], 64
refused("layer1 mtu under a flow's frames: the flow's size refused", lambda: api.set_config(bad),
        ["flows[1].size: 128 is over layer1[0].mtu 64 of port 'p2'"])
bad = config()
bad.flows[0].rate.pps = 2 * 10 ** 9
refused("a rate above the pacer's 1e9 pps: 400 at set_config naming it (was a 500 at the start)",
        lambda: api.set_config(bad), ["flows[0].rate.pps: 2000000000 outside 1..1000000000"])
bad = config(captures=False)
bad.flows[1].rate.gbps, bad.flows[1].size.fixed = 1000, 64    # 1e12 bit/s of 64-byte frames: 1.95e9 a second
api.set_config(bad)
refused("a bit/s rate of more than 1e9 frames a second: 409 at the start naming it (it was accepted)",
        lambda: start_all(api), ["flows[1].rate.gbps: 1.953e+09 frames a second of this flow's size on port p2, "
                                 "above surge's bound, 1000000000"], 409)
raw = json.loads(config().serialize())
raw["captures"][0]["format"] = "pcapx"
# snappi checks enums itself: this one goes around it
r = requests.post(URL + "/config", data=json.dumps(raw), verify=False)
check("capture format not of the enum: 400 naming the path", r.status_code == 400
      and "captures[0].format: 'pcapx' is not one of pcap, pcapng" in r.text, (r.status_code, r.text))
req = api.capture_request()
req.port_name = "p1"
api.set_config(config(captures=False))
refused("get_capture of a port without a capture: 400", lambda: api.get_capture(req),
        ["port_name: 'p1' is no port of a capture"])

# layer1 honoured: the speed the ring runs at, mtu and promiscuous given to the open; traffic runs
cfg = config(captures=False)
l1 = cfg.layer1.add(name="l1")
l1.port_names, l1.speed, l1.mtu, l1.promiscuous = ["p1", "p2"], l1.SPEED_10_GBPS, 1500, True
api.set_config(cfg)
start_all(api)
fm = {m.name: m for m in wait_stopped(api, 30)}
check("layer1 (10 Gbps as the ring runs, mtu 1500): f1 100/100", fm["f1"].frames_rx == 100, fm["f1"].serialize())
print("otg portcap: %d failed" % check.fails)
sys.exit(1 if check.fails else 0)
