"""mesh.py - flows between several device endpoints, tx_rx.device's mesh
and one_to_one (test_otg_mesh.sh makes the interfaces, inside a network
namespace this driver runs in):

  PYTHONPATH=../shared/peers/otg python3 mesh.py URL A D B C PCAP_D PCAP_C E

B-C: a veth pair, both surge's ports, two devices on each (b1 b2, c1 c2 on
198.18.0.0/24). A and D: surge's ports whose peers K (192.0.2.1/24) and E
(10.9.0.1/24) are the kernel's, forwarding: devices a1 a2 on A, d1 d2 on D,
the kernel their gateway. Flows: mesh [b1, b2] -> [c1, c2] (4 pairs), one_to_one
[b1, b2] -> [c2, c1] (2 pairs), and mesh [a1, a2] -> [d1, d2] through the kernel
(each pair's frames to the tx device's resolved gateway; the kernel routes
them to D). tshark on captures of C and D counts the frames per address
pair: the flow's frames split evenly over its pairs, in the model's order.
Then the refusals (one_to_one of unequal counts, tx names on two ports, a
pair of one endpoint).
Prints one line per check; exits 1 when one failed.
"""
import os
import subprocess
import sys
import time
from collections import Counter
from typing import Any, Dict, List, Tuple

import snappi
from otgrun import check, refused, start_all, wait_for, wait_stopped

URL, A, D, B, C, PCAP_D, PCAP_C, E = sys.argv[1:9]
with open(f"/sys/class/net/{E}/address") as fh:
    MAC_E = fh.read().strip()
# name -> (port, mac, address, gateway)
DEV: Dict[str, Tuple[str, str, str, str]] = {
    "b1": ("pb", "02:00:00:00:0b:01", "198.18.0.1", "198.18.0.2"),
    "b2": ("pb", "02:00:00:00:0b:02", "198.18.0.3", "198.18.0.4"),
    "c1": ("pc", "02:00:00:00:0c:01", "198.18.0.2", "198.18.0.1"),
    "c2": ("pc", "02:00:00:00:0c:02", "198.18.0.4", "198.18.0.3"),
    "a1": ("pa", "02:00:00:00:0a:01", "192.0.2.2", "192.0.2.1"),
    "a2": ("pa", "02:00:00:00:0a:02", "192.0.2.3", "192.0.2.1"),
    "d1": ("pd", "02:00:00:00:0d:01", "10.9.0.2", "10.9.0.1"),
    "d2": ("pd", "02:00:00:00:0d:02", "10.9.0.3", "10.9.0.1"),
}
api = snappi.api(location=URL, verify=False)


def config(flows: List[Tuple[str, str, List[str], List[str], int]]) -> Any:
    """flows: (name, mode, tx device names, rx device names, frames)."""
    cfg = api.config()
    for name, loc in (("pa", A), ("pd", D), ("pb", B), ("pc", C)):
        cfg.ports.add(name=name, location=loc)
    for name, (port, mac, addr, gw) in DEV.items():
        e = cfg.devices.add(name=name + ".dev").ethernets.add(name=name + ".eth", mac=mac)
        e.connection.port_name = port
        e.ipv4_addresses.add(name=name, address=addr, gateway=gw, prefix=24)
    for name, mode, tx, rx, n in flows:
        f = cfg.flows.add(name=name)
        f.tx_rx.device.mode = mode
        f.tx_rx.device.tx_names, f.tx_rx.device.rx_names = tx, rx
        f.size.fixed, f.rate.pps = 128, 2000
        f.duration.fixed_packets.packets = n
        f.metrics.enable = True
        _, _, udp = f.packet.ethernet().ipv4().udp()
        udp.src_port.value, udp.dst_port.value = 4000, 4001
    return cfg


def capture(iface: str, path: str) -> Any:
    p = subprocess.Popen(["dumpcap", "-q", "-i", iface, "-w", path], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    wait_for(lambda: os.path.exists(path) and os.path.getsize(path) > 0, 15)
    return p


def pairs(path: str) -> Counter:
    out = subprocess.run(["tshark", "-r", path, "-Y", "udp.dstport == 4001", "-T", "fields", "-e", "eth.src",
                          "-e", "eth.dst", "-e", "ip.src", "-e", "ip.dst"], capture_output=True, text=True).stdout
    return Counter(tuple(line.split("\t")) for line in out.splitlines())


def want(pl: List[Tuple[str, str]], n: int, via: Tuple[str, str] = ("", "")) -> Counter:
    """n frames over the pairs pl in turn: (eth src, eth dst, ip src, ip dst) counted; via: the
    MACs a routed frame carries (the kernel's), else each pair's devices'."""
    c: Counter = Counter()
    for i in range(n):
        tx, rx = pl[i % len(pl)]
        macs = via if via[0] else (DEV[tx][1], DEV[rx][1])
        c[(macs[0], macs[1], DEV[tx][2], DEV[rx][2])] += 1
    return c


FLOWS = [("mesh", "mesh", ["b1", "b2"], ["c1", "c2"], 400),
         ("pairs", "one_to_one", ["b1", "b2"], ["c2", "c1"], 201),
         ("routed", "mesh", ["a1", "a2"], ["d1", "d2"], 200)]
api.set_config(config(FLOWS))


def resolved() -> bool:
    sr = api.states_request()
    sr.ipv4_neighbors.ethernet_names = []
    return all(r.link_layer_address for r in api.get_states(sr).ipv4_neighbors)


check("every device's gateway resolved (the kernel's for a and d, each other's for b and c)", wait_for(resolved, 10))
# the kernel learns d1's and d2's MACs before it forwards to them
for addr in ("10.9.0.2", "10.9.0.3"):
    ping = subprocess.run(["ping", "-c", "1", "-W", "2", addr], capture_output=True, text=True)
    check(f"the kernel pings {addr} (a device on D)", ping.returncode == 0, ping.stdout)
cap_d, cap_c = capture(D, PCAP_D), capture(C, PCAP_C)
time.sleep(0.5)
start_all(api)
fm = {m.name: m for m in wait_stopped(api, 20)}
for name, _, _, _, n in FLOWS:
    m = fm[name]
    check(f"{name}: {n} frames sent, all received", m.transmit == "stopped" and m.frames_tx == n and m.frames_rx == n,
          m.serialize())
check("routed: sent on pa, received on pd", fm["routed"].port_tx == "pa" and fm["routed"].port_rx == "pd",
      fm["routed"].serialize())
time.sleep(0.5)
for p in (cap_d, cap_c):
    p.terminate()
    p.wait()
seen_c = pairs(PCAP_C)
mesh = want([("b1", "c1"), ("b1", "c2"), ("b2", "c1"), ("b2", "c2")], 400)
one = want([("b1", "c2"), ("b2", "c1")], 201)
check("tshark on C: mesh's 400 frames, 100 for each of its 4 pairs, one_to_one's 201, 101 and 100 for its 2, "
      "each with its devices' MACs and addresses", seen_c == mesh + one, (seen_c, mesh + one))
seen_d = pairs(PCAP_D)
routed = want([("a1", "d1"), ("a1", "d2"), ("a2", "d1"), ("a2", "d2")], 200, (MAC_E, ""))
got_d = Counter({(k[0], "", k[2], k[3]): v for k, v in seen_d.items()})
check("tshark on D: the kernel forwarded each of the 4 pairs' 50 frames (a1 a2 to d1 d2), from its MAC",
      got_d == routed, (seen_d, routed))
check("tshark on D: each routed frame to its d device's MAC",
      all(k[1] == {"10.9.0.2": DEV["d1"][1], "10.9.0.3": DEV["d2"][1]}[k[3]] for k in seen_d), seen_d)

cs = api.control_state()
cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.STOP
api.set_control_state(cs)
refused("one_to_one of 2 tx_names and 1 rx_names: 400 naming rx_names",
        lambda: api.set_config(config([("x", "one_to_one", ["b1", "b2"], ["c1"], 10)])),
        ["flows[0].tx_rx.device.rx_names:", "1 names for 2 tx_names", "as many"])
refused("tx names on two ports: 400 naming the second",
        lambda: api.set_config(config([("x", "mesh", ["b1", "a1"], ["c1"], 10)])),
        ["flows[0].tx_rx.device.tx_names[1]:", "is on port pa", "a flow leaves from one port"])
refused("a pair of one endpoint (mesh [b1, b2] to [b2]): 400, as the model says",
        lambda: api.set_config(config([("x", "mesh", ["b1", "b2"], ["b2"], 10)])),
        ["flows[0].tx_rx.device.rx_names[0]:", "'b2' to itself"])
print("otg mesh: %d failed" % check.fails)
sys.exit(1 if check.fails else 0)
