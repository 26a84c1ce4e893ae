"""hosts.py - one OTG server driving ports on two hosts (test_otg_hosts.sh):
port p1 is this server's net_ring0, port p2 the net_ring0 of a surge otg
on REMOTE (HOST/LOCATION, reached over SSH); a flow on each, started
together, metrics merged; p2's capture read through this server; latency
across the hosts and names of no port refused by path (tests/e2e/otg/cross.py
runs flows across the hosts).

  PYTHONPATH=../shared/peers/otg python3 hosts.py URL REMOTE OUT

Prints one line per check; exits 1 when one failed.
"""
import sys
import time
from typing import Any

import snappi
from otgrun import check, refused, start_all, udp_flow, wait_stopped

URL, REMOTE, OUT = sys.argv[1], sys.argv[2], sys.argv[3]

api = snappi.api(location=URL, verify=False)


def config() -> Any:
    cfg = api.config()
    cfg.ports.add(name="p1", location="net_ring0")
    cfg.ports.add(name="p2", location=REMOTE + "/net_ring0")
    udp_flow(cfg, "fa", "p1", "p1", 300, 128, 20000, 1000, 100)
    udp_flow(cfg, "fb", "p2", "p2", 200, 256, 20000, 3000, 100)
    c = cfg.captures.add(name="c")
    c.port_names = ["p2"]
    return cfg


if len(sys.argv) > 4 and sys.argv[4] == "again":
    # the other host's server was killed: the first request says so, the next config starts it again
    refused("the other host's server gone: 500 naming the host", lambda: api.set_config(config()),
            ["host %s: no answer over SSH" % REMOTE], 500)
    api.set_config(config())
    start_all(api)
    fm = {m.name: m for m in wait_stopped(api, 30)}
    check("then fb runs there again: 200 sent, 200 received", fm["fb"].frames_rx == 200, fm["fb"].serialize())
    sys.exit(1 if check.fails else 0)

api.set_config(config())
got = api.get_config()
check("GET /config: p2 at %s/net_ring0, the flows in order" % REMOTE,
      [p.location for p in got.ports] == ["net_ring0", REMOTE + "/net_ring0"]
      and [f.name for f in got.flows] == ["fa", "fb"], got.serialize())
cs = api.control_state()
cs.port.capture.state = cs.port.capture.START
api.set_control_state(cs)
start_all(api)
fm = {m.name: m for m in wait_stopped(api, 30)}
check("fa (this host): 300 sent, 300 received", fm["fa"].transmit == "stopped" and fm["fa"].frames_tx == 300
      and fm["fa"].frames_rx == 300, fm["fa"].serialize())
check("fb (the other host): 200 sent, 200 received, 200 x 256 bytes", fm["fb"].transmit == "stopped"
      and fm["fb"].frames_tx == 200 and fm["fb"].frames_rx == 200 and fm["fb"].bytes_rx == 200 * 256,
      fm["fb"].serialize())
mr = api.metrics_request()
mr.port.port_names = []
pm = {m.name: m for m in api.get_metrics(mr).port_metrics}
check("port metrics of both hosts: p1 300 sent, p2 200 sent at its HOST/LOCATION",
      pm["p1"].frames_tx == 300 and pm["p2"].frames_tx == 200 and pm["p2"].location == REMOTE + "/net_ring0",
      [m.serialize() for m in pm.values()])
mr.port.port_names = ["p2"]
one = api.get_metrics(mr).port_metrics
check("port metrics of p2 alone: from the other host", len(one) == 1 and one[0].name == "p2", len(one))
req = api.capture_request()
req.port_name = "p2"
with open(OUT, "wb") as f:
    f.write(api.get_capture(req).read())
bad = config()
bad.flows[1].tx_rx.port.rx_names = ["p1"]
bad.flows[1].metrics.latency.enable = True
refused("a flow across the hosts with latency: 400 naming it (no common clock)", lambda: api.set_config(bad),
        ["flows[1].metrics.latency.enable: the flow's tx port is on %s and rx ports on other hosts" % REMOTE])
bad.flows[1].tx_rx.port.rx_names = ["p1", "p3"]
bad.flows[1].tx_rx.port.tx_name = "p4"
refused("names of no port in a flow: 400 naming each", lambda: api.set_config(bad),
        ["flows[1].tx_rx.port.tx_name: 'p4' is not a port of this config",
         "flows[1].tx_rx.port.rx_names[1]: 'p3' is not a port of this config"])
bad = config()
eth = bad.devices.add(name="d").ethernets.add(name="d.eth", mac="02:00:00:00:0d:01")
eth.connection.port_name = "p2"
refused("a device on the other host's port: 400 naming its port_name", lambda: api.set_config(bad),
        ["devices[0].ethernets[0].connection.port_name: port 'p2' is on %s" % REMOTE,
         "a device on another host is not implemented"])
bad = config()
bad.flows[1].size.fixed = 20000
refused("the other host's refusal comes back with this config's path", lambda: api.set_config(bad),
        ["flows[1].size", "(on %s)" % REMOTE])
bad = config()
bad.ports[1].location = "root@127.0.0.1:1/net_ring0"
t0 = time.time()
refused("a host that no sshd answers: 400 at once, naming the host, with ssh's words",
        lambda: api.set_config(bad), ["host root@127.0.0.1:1: its surge otg did not answer over SSH", "refused"])
check("... within 10 s (%.1f s)" % (time.time() - t0), time.time() - t0 < 10)
print("otg hosts: %d failed" % check.fails)
sys.exit(1 if check.fails else 0)
