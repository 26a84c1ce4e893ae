"""basic.py - surge otg driven by snappi as a lab drives Ixia-c, back to back
over net_ring ports (each a loopback: what a port sends it receives).

  PYTHONPATH=../shared/peers/otg python3 basic.py URL PCAP_DIR

Checks: the version, set_config, traffic start, transmit state stopped,
flow metrics exact (frames_rx == frames_tx == packets asked, bytes =
frames x size), port metrics, GET /config; the refusals (BGP, unknown
field, wrong type, bad enum, missing port, malformed JSON, pause,
set_config while traffic runs) each a model Error with its JSON path and
status, the server answering after each. Prints one line per check;
exits 1 when one failed.
"""
import json
import sys
import time
from typing import List

import requests
import snappi
from otgrun import check, start_all, wait_stopped

URL = sys.argv[1]


def post(path: str, body: str) -> requests.Response:
    return requests.post(URL + path, data=body, headers={"Content-Type": "application/json"}, verify=False,
                         timeout=30)


def refused(name: str, path: str, body: str, status: int, needle: str) -> None:
    r = post(path, body)
    try:
        e = r.json()
    except ValueError:
        e = {}
    errs: List[str] = e.get("errors", [])
    check(f"{name}: status {status}", r.status_code == status, (r.status_code, r.text[:300]))
    check(f"{name}: a model Error (code {status}, errors naming '{needle}')",
          e.get("code") == status and e.get("kind") in ("validation", "internal")
          and any(needle in x for x in errs), r.text[:300])
    v = requests.get(URL + "/capabilities/version", verify=False, timeout=10)
    check(f"{name}: the server still answers", v.status_code == 200, v.status_code)


api = snappi.api(location=URL, verify=False, version_check=True)
v = api.get_version()
check("capabilities/version: api_spec_version 1.3.0", v.api_spec_version == "1.3.0", v.serialize())

# --- the documented example (docs/otg.md runs it too) ---------------------
cfg = api.config()
p1 = cfg.ports.add(name="p1", location="net_ring0")
p2 = cfg.ports.add(name="p2", location="net_ring1")
f1 = cfg.flows.add(name="f1")
f1.tx_rx.port.tx_name, f1.tx_rx.port.rx_names = p1.name, [p1.name]
f1.size.fixed, f1.rate.pps = 128, 20000
f1.duration.fixed_packets.packets = 1000
f1.metrics.enable = True
eth, ip, udp = f1.packet.ethernet().ipv4().udp()
eth.src.value, eth.dst.value = "02:00:00:00:00:01", "02:00:00:00:00:02"
ip.src.increment.start, ip.src.increment.step, ip.src.increment.count = "10.0.0.1", "0.0.0.1", 10
ip.dst.value = "10.1.0.1"
udp.src_port.value = 1234
udp.dst_port.values = [5000, 5001]
f2 = cfg.flows.add(name="f2")
f2.tx_rx.port.tx_name, f2.tx_rx.port.rx_names = p2.name, [p2.name]
f2.size.fixed = 72
f2.rate.percentage = 0.05     # of net_ring's 10 Gbit/s at L1: 6793 frames/s
f2.duration.fixed_packets.packets = 500
f2.metrics.enable = True
eth2, vlan2, ip2, tcp2 = f2.packet.ethernet().vlan().ipv4().tcp()
vlan2.id.decrement.start, vlan2.id.decrement.step, vlan2.id.decrement.count = 100, 1, 5
ip2.src.value, ip2.dst.value = "192.168.1.1", "192.168.2.1"
tcp2.src_port.value, tcp2.dst_port.increment.start, tcp2.dst_port.increment.count = 80, 8000, 4
api.set_config(cfg)
check("set_config: accepted", True)

got = api.get_config()
check("get_config: the flows and ports as set", [f.name for f in got.flows] == ["f1", "f2"]
      and [p.location for p in got.ports] == ["net_ring0", "net_ring1"], got.serialize()[:300])

start_all(api)
fm = wait_stopped(api, 30)
by = {m.name: m for m in fm}
for name, n, size in (("f1", 1000, 128), ("f2", 500, 72)):
    m = by[name]
    check(f"{name}: transmit stopped", m.transmit == "stopped", m.transmit)
    check(f"{name}: frames_tx == {n}", m.frames_tx == n, m.frames_tx)
    check(f"{name}: frames_rx == frames_tx", m.frames_rx == m.frames_tx, (m.frames_rx, m.frames_tx))
    check(f"{name}: bytes_tx == bytes_rx == {n} x {size}", m.bytes_tx == n * size and m.bytes_rx == n * size,
          (m.bytes_tx, m.bytes_rx))
    check(f"{name}: loss 0", m.loss == 0, m.loss)
mr = api.metrics_request()
mr.port.port_names = []
pm = {m.name: m for m in api.get_metrics(mr).port_metrics}
check("port p1: frames_tx == frames_rx == 1000 (a loopback)", pm["p1"].frames_tx == 1000 and pm["p1"].frames_rx == 1000,
      pm["p1"].serialize())
check("port p2: frames_tx == 500", pm["p2"].frames_tx == 500, pm["p2"].serialize())

# a continuous flow runs until stopped; a config set meanwhile is a 409
cont = json.loads(cfg.serialize())
cont["flows"][0]["duration"] = {"choice": "continuous", "continuous": {"gap": 12}}
cont["flows"][1]["duration"] = {"choice": "continuous", "continuous": {"gap": 12}}
api.set_config(json.dumps(cont))
cs = api.control_state()
cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.START
api.set_control_state(cs)
cs.traffic.flow_transmit.flow_names = ["f1"]
time.sleep(0.3)
r = post("/config", cfg.serialize())
check("set_config while traffic runs: 409", r.status_code == 409 and r.json().get("code") == 409,
      (r.status_code, r.text[:200]))
mr = api.metrics_request()
mr.flow.flow_names = ["f1"]
m = api.get_metrics(mr).flow_metrics[0]
check("continuous f1: transmit started, sending", m.transmit == "started" and m.frames_tx > 0, m.serialize())
# pause: the flow's sending stops (its last burst may still go), resume: it goes on
cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.PAUSE
api.set_control_state(cs)
time.sleep(0.1)
p1 = api.get_metrics(mr).flow_metrics[0]
time.sleep(0.3)
p2 = api.get_metrics(mr).flow_metrics[0]
check("pause: transmit paused, frames_tx still (%d)" % p1.frames_tx,
      p1.transmit == "paused" and p2.transmit == "paused" and p2.frames_tx == p1.frames_tx, (p1.serialize(), p2.frames_tx))
r = post("/config", cfg.serialize())
check("set_config while paused: 409", r.status_code == 409, r.status_code)
cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.RESUME
api.set_control_state(cs)
time.sleep(0.3)
p3 = api.get_metrics(mr).flow_metrics[0]
check("resume: transmit started, sending again (%d more)" % (p3.frames_tx - p2.frames_tx),
      p3.transmit == "started" and p3.frames_tx > p2.frames_tx + 1000, p3.serialize())
# stop of one named flow: it stops, the other goes on
cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.STOP
cs.traffic.flow_transmit.flow_names = ["f2"]
api.set_control_state(cs)
time.sleep(0.2)
mr2 = api.metrics_request()
mr2.flow.flow_names = ["f1", "f2"]
q1 = {m.name: m for m in api.get_metrics(mr2).flow_metrics}
time.sleep(0.2)
q2 = {m.name: m for m in api.get_metrics(mr2).flow_metrics}
check("stop f2 alone: f2 stopped, its counts final; f1 still sending",
      q1["f2"].transmit == "stopped" and q2["f2"].frames_tx == q1["f2"].frames_tx > 0
      and q2["f2"].frames_rx == q1["f2"].frames_rx == q1["f2"].frames_tx
      and q2["f1"].transmit == "started" and q2["f1"].frames_tx > q1["f1"].frames_tx,
      (q1["f2"].serialize(), q2["f1"].frames_tx, q1["f1"].frames_tx))
cs.traffic.flow_transmit.flow_names = []
api.set_control_state(cs)
m1 = api.get_metrics(mr).flow_metrics[0]
time.sleep(0.2)
m2 = api.get_metrics(mr).flow_metrics[0]
check("after stop: f1 transmit stopped, frames_tx final (%d)" % m1.frames_tx,
      m1.transmit == "stopped" and m1.frames_tx > 1000 and m2.frames_tx == m1.frames_tx
      and m2.frames_rx == m1.frames_rx and m1.frames_rx <= m1.frames_tx, (m1.serialize(), m2.frames_tx))

# --- refusals: each a model Error naming its path; the server goes on ------
good = json.loads(cfg.serialize())
bgp = dict(good, devices=[{"name": "d1", "bgp": {"router_id": "1.1.1.1"}}])
refused("devices[0].bgp", "/config", json.dumps(bgp), 400, "devices[0].bgp: not implemented by surge")
unk = json.loads(cfg.serialize())
unk["flows"][0]["colour"] = "red"
refused("unknown field", "/config", json.dumps(unk), 400, "flows[0].colour: unknown field")
wt = json.loads(cfg.serialize())
wt["flows"][0]["size"]["fixed"] = "big"
refused("wrong type", "/config", json.dumps(wt), 400, "flows[0].size.fixed: big is not an integer")
wt2 = json.loads(cfg.serialize())
wt2["flows"][0]["rate"]["pps"] = [1]
refused("wrong type (rate)", "/config", json.dumps(wt2), 400, "flows[0].rate.pps: expected an integer")
be = json.loads(cfg.serialize())
be["flows"][0]["rate"]["choice"] = "fast"
refused("bad enum", "/config", json.dumps(be), 400, "flows[0].rate.choice: 'fast' is not one of")
mp = json.loads(cfg.serialize())
mp["flows"][1]["tx_rx"]["port"]["tx_name"] = "p9"
refused("missing port", "/config", json.dumps(mp), 400, "flows[1].tx_rx.port.tx_name: 'p9' is not a port")
refused("malformed JSON", "/config", '{"ports": [', 400, "not JSON")
refused("deep JSON", "/config", "[" * 100000, 400, "nested deeper than")
refused("pause with no traffic", "/control/state",
        '{"choice":"traffic","traffic":{"choice":"flow_transmit","flow_transmit":{"state":"pause"}}}', 409,
        "no traffic runs")
refused("a state not of the model", "/control/state",
        '{"choice":"traffic","traffic":{"choice":"flow_transmit","flow_transmit":{"state":"halt"}}}', 400,
        "traffic.flow_transmit.state: 'halt' is not one of start, stop, pause, resume")
bl = json.loads(cfg.serialize())
bl["flows"][0]["size"] = {"choice": "increment", "increment": {"start": 256, "end": 128}}
refused("size increment end below start", "/config", json.dumps(bl), 400,
        "flows[0].size.increment.start: 256 is above end 128")
gap = json.loads(cfg.serialize())
gap["flows"][0]["duration"]["fixed_packets"]["gap"] = 5
refused("gap other than 12", "/config", json.dumps(gap), 400, "flows[0].duration.fixed_packets.gap: 5")
gre = json.loads(cfg.serialize())
gre["flows"][0]["packet"].append({"choice": "snmpv2c"})
refused("snmpv2c header", "/config", json.dumps(gre), 400, "flows[0].packet[3]")
refused("/control/action bgp", "/control/action", '{"choice":"protocol","protocol":{"choice":"bgp"}}', 400,
        "protocol.bgp: not implemented by surge")
refused("protocol.route state", "/control/state", '{"choice":"protocol","protocol":{"choice":"route"}}', 400,
        "protocol.route: not implemented by surge")
refused("an unknown path", "/nope", "{}", 404, "/nope: not a path of the OTG API")
# the config refused left the one set before: the traffic runs again
api.set_config(cfg)
check("a good config after the refusals: accepted", True)
print("otg basic: %d failed" % check.fails)
sys.exit(1 if check.fails else 0)
