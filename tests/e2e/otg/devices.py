"""devices.py - OTG devices against the kernel and against each other
(test_otg_devices.sh makes the interfaces, inside a network namespace this
driver runs in):

  PYTHONPATH=../shared/peers/otg python3 devices.py URL A K B C PCAP

A: surge's port whose veth peer K is the kernel's (192.0.2.1/24,
2001:db8:1::1/64); B and C: surge's ports, a veth pair. Checks: the device
on A resolves the kernel's address (ARP, ND: /monitor/states shows K's MAC)
and the kernel learns the device's (ip neigh, ip -6 neigh) between runs and
during one; the devices on B and C resolve each other; flows between them
carry their MACs and addresses (tshark on a capture of C) and arrive whole;
refusals (bgp, vlans, a flow naming no device, a states choice surge does
not serve) name their paths and the server keeps serving.
Prints one line per check; exits 1 when one failed.
"""
import os
import subprocess
import sys
import time
from collections import Counter
from typing import Any, Callable, Dict, List

import snappi
from otgrun import check, start_all, wait_for, wait_stopped

URL, A, K, B, C, PCAP = sys.argv[1:7]
MAC_A, MAC_B, MAC_C = "02:00:00:00:0a:01", "02:00:00:00:0b:01", "02:00:00:00:0c:01"
with open(f"/sys/class/net/{K}/address") as fh:
    MAC_K = fh.read().strip()


def sh(*args: str) -> str:
    return subprocess.run(args, capture_output=True, text=True).stdout


api = snappi.api(location=URL, verify=False)


def config(bgp: bool = False, vlan: bool = False, rx_name: str = "c.ip4") -> Any:
    cfg = api.config()
    for name, loc in (("pa", A), ("pb", B), ("pc", C)):
        cfg.ports.add(name=name, location=loc)
    da = cfg.devices.add(name="da")
    ea = da.ethernets.add(name="a.eth", mac=MAC_A)
    ea.connection.port_name = "pa"
    ea.ipv4_addresses.add(name="a.ip4", address="192.0.2.2", gateway="192.0.2.1")
    ea.ipv6_addresses.add(name="a.ip6", address="2001:db8:1::2", gateway="2001:db8:1::1")
    for d, mac, port, n, peer in (("b", MAC_B, "pb", 1, 2), ("c", MAC_C, "pc", 2, 1)):
        dev = cfg.devices.add(name="d" + d)
        e = dev.ethernets.add(name=d + ".eth", mac=mac)
        e.connection.port_name = port
        e.ipv4_addresses.add(name=d + ".ip4", address=f"198.18.0.{n}", gateway=f"198.18.0.{peer}", prefix=24)
        e.ipv6_addresses.add(name=d + ".ip6", address=f"2001:db8:2::{n}", gateway=f"2001:db8:2::{peer}")
        if vlan and d == "c":
            e.vlans.add(name="c.vlan", id=10)
    if bgp:
        cfg.devices[1].bgp.router_id = "198.18.0.1"
    for name, tx, rx, n, size in (("f4", "b.ip4", rx_name, 100, 128), ("f6", "b.ip6", "c.ip6", 50, 256)):
        f = cfg.flows.add(name=name)
        f.tx_rx.device.tx_names, f.tx_rx.device.rx_names = [tx], [rx]
        f.size.fixed, f.rate.pps = size, 2000
        f.duration.fixed_packets.packets = n
        f.metrics.enable = True
        if name == "f4":
            _, _, udp = f.packet.ethernet().ipv4().udp()
        else:
            _, _, udp = f.packet.ethernet().ipv6().udp()
        udp.src_port.value, udp.dst_port.value = 4000, 4001
    return cfg


def neighbors(six: bool) -> Dict[str, Any]:
    sr = api.states_request()
    if six:
        sr.ipv6_neighbors.ethernet_names = []
    else:
        sr.ipv4_neighbors.ethernet_names = []
    st = api.get_states(sr)
    rows = st.ipv6_neighbors if six else st.ipv4_neighbors
    return {r.ethernet_name: r for r in rows}


def kernel_learns(what: str) -> None:
    """The kernel pings the device's addresses: answered, it learned the device's MAC."""
    for six, addr in ((False, "192.0.2.2"), (True, "2001:db8:1::2")):
        fam = ["-6"] if six else ["-4"]
        sh("ip", *fam, "neigh", "flush", "dev", K)
        ping = subprocess.run(["ping", *fam, "-c", "1", "-W", "2", addr], capture_output=True, text=True)
        check(f"{what}: the kernel pings {addr} and gets the reply", ping.returncode == 0, ping.stdout)
        got = sh("ip", *fam, "neigh", "show", addr, "dev", K)
        check(f"{what}: the kernel learned {addr} at {MAC_A} (ip{' -6' if six else ''} neigh)",
              f"lladdr {MAC_A}" in got and ("REACHABLE" in got or "STALE" in got or "DELAY" in got), got.strip())


api.set_config(config())
got = api.get_config()
ip4 = got.devices[0].ethernets[0].ipv4_addresses[0]
check("GET /config: device defaults filled (prefix 24, gateway_mac auto, mtu 1500, ipv6 prefix 64)",
      ip4.prefix == 24 and ip4.gateway_mac.choice == "auto" and got.devices[0].ethernets[0].mtu == 1500
      and got.devices[0].ethernets[0].ipv6_addresses[0].prefix == 64, got.devices[0].serialize())

want4 = {"a.eth": ("192.0.2.1", MAC_K), "b.eth": ("198.18.0.2", MAC_C), "c.eth": ("198.18.0.1", MAC_B)}
want6 = {"a.eth": ("2001:db8:1::1", MAC_K), "b.eth": ("2001:db8:2::2", MAC_C), "c.eth": ("2001:db8:2::1", MAC_B)}
wait_for(lambda: all(r.link_layer_address for r in neighbors(False).values())
         and all(r.link_layer_address for r in neighbors(True).values()), 10)
n4, n6 = neighbors(False), neighbors(True)
check("ipv4_neighbors: the kernel's MAC for its address, each device's for the other's",
      {k: (r.ipv4_address, r.link_layer_address) for k, r in n4.items()} == want4, n4)
check("ipv6_neighbors: the kernel's MAC for its address, each device's for the other's",
      {k: (r.ipv6_address, r.link_layer_address) for k, r in n6.items()} == want6, n6)
sr = api.states_request()
sr.ipv4_neighbors.ethernet_names = ["b.eth"]
rows = api.get_states(sr).ipv4_neighbors
check("ipv4_neighbors ethernet_names [b.eth]: its row alone", [r.ethernet_name for r in rows] == ["b.eth"], rows)
kernel_learns("between runs")

cap = subprocess.Popen(["dumpcap", "-q", "-i", C, "-w", PCAP], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# dumpcap writes the file's header once it captures (slow to start on a loaded host)
wait_for(lambda: os.path.exists(PCAP) and os.path.getsize(PCAP) > 0, 15)
time.sleep(0.5)
start_all(api)
fm = {m.name: m for m in wait_stopped(api, 20)}
for name, n in (("f4", 100), ("f6", 50)):
    m = fm[name]
    check(f"{name}: {n} frames sent, all received on pc", m.transmit == "stopped" and m.frames_tx == n
          and m.frames_rx == n, m.serialize())
kernel_learns("during a run (the port's task answers)")
time.sleep(0.5)
cap.terminate()
cap.wait()
out = sh("tshark", "-r", PCAP, "-Y", "udp.dstport == 4001", "-T", "fields", "-e", "eth.src", "-e", "eth.dst",
         "-e", "ip.src", "-e", "ip.dst", "-e", "ipv6.src", "-e", "ipv6.dst")
seen = Counter(tuple(line.split("\t")) for line in out.splitlines())
want = Counter({(MAC_B, MAC_C, "198.18.0.1", "198.18.0.2", "", ""): 100,
                (MAC_B, MAC_C, "", "", "2001:db8:2::1", "2001:db8:2::2"): 50})
check("tshark on pc: 100 IPv4 and 50 IPv6 frames, the devices' MACs and addresses", seen == want, seen)

cs = api.control_state()
cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.STOP
api.set_control_state(cs)


def refused(what: str, fn: Callable[[], Any], *want: str) -> None:
    try:
        fn()
        check(what, False, "accepted")
    except Exception as e:  # snappi raises the model's Error as an Exception
        text = str(e)
        check(what, all(w in text for w in want), text)


refused("bgp on a device: 400 naming devices[1].bgp", lambda: api.set_config(config(bgp=True)),
        "code: 400", "devices[1].bgp: not implemented by surge")
refused("vlans on an ethernet: 400 naming the path", lambda: api.set_config(config(vlan=True)),
        "code: 400", "devices[2].ethernets[0].vlans: not implemented by surge")
refused("a flow naming no device: 400 naming the path", lambda: api.set_config(config(rx_name="nope")),
        "code: 400", "flows[0].tx_rx.device.rx_names[0]:", "nope", "is no ethernet, ipv4 or ipv6")
bad = api.states_request()
bad.choice = "bgp_prefixes"
refused("states bgp_prefixes: 400 naming the choice", lambda: api.get_states(bad),
        "code: 400", "bgp_prefixes: not implemented by surge")
unknown = api.states_request()
unknown.ipv4_neighbors.ethernet_names = ["a.eth", "x.eth"]
refused("states naming no ethernet: 400 naming the path", lambda: api.get_states(unknown),
        "code: 400", "ipv4_neighbors.ethernet_names[1]:", "x.eth", "is not a device ethernet")
check("the server still serves the config set before", len(api.get_config().devices) == 3)
kernel_learns("after the refusals")

# two devices on one port (a net_ring loopback: what it sends it receives),
# each the other's gateway: resolving one answers for the other meanwhile
ring = api.config()
ring.ports.add(name="pr", location="net_ring7")
for d, n, peer in (("r1", 1, 2), ("r2", 2, 1)):
    e = ring.devices.add(name=d).ethernets.add(name=d + ".eth", mac=f"02:00:00:00:07:0{n}")
    e.connection.port_name = "pr"
    e.ipv4_addresses.add(name=d + ".ip4", address=f"10.7.0.{n}", gateway=f"10.7.0.{peer}")
# r3 off their subnet, its gateway nobody's: a flow r1 -> r3 goes by r1's
# gateway (r2, resolved); r3 -> r1 needs r3's, which never answers
e3 = ring.devices.add(name="r3").ethernets.add(name="r3.eth", mac="02:00:00:00:07:03")
e3.connection.port_name = "pr"
e3.ipv4_addresses.add(name="r3.ip4", address="10.8.0.3", gateway="10.8.0.9")
for name, tx, rx in (("via_gw", "r1.ip4", "r3.ip4"), ("no_gw", "r3.ip4", "r1.ip4")):
    f = ring.flows.add(name=name)
    f.tx_rx.device.tx_names, f.tx_rx.device.rx_names = [tx], [rx]
    f.size.fixed, f.rate.pps = 128, 1000
    f.duration.fixed_packets.packets = 20
    f.metrics.enable = True
    f.packet.ethernet().ipv4().udp()
api.set_config(ring)
wait_for(lambda: all(r.link_layer_address for k, r in neighbors(False).items() if k != "r3.eth"), 5)
got4 = {k: r.link_layer_address for k, r in neighbors(False).items()}
check("two devices on one port resolve each other; r3's gateway unresolved",
      got4 == {"r1.eth": "02:00:00:00:07:02", "r2.eth": "02:00:00:00:07:01", "r3.eth": None}, got4)
refused("a start of a flow whose gateway never answered: 409 naming it", lambda: start_all(api),
        "code: 409", "flows[1]: the gateway 10.8.0.9 of", "r3.ip4", "is not resolved")
cs = api.control_state()
cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.START
cs.traffic.flow_transmit.flow_names = ["via_gw"]
api.set_control_state(cs)
m = [x for x in wait_stopped(api, 10) if x.name == "via_gw"][0]
check("via_gw (by r1's resolved gateway): 20 sent, 20 received", m.frames_tx == 20 and m.frames_rx == 20,
      m.serialize())
print("otg devices: %d failed" % check.fails)
sys.exit(1 if check.fails else 0)
