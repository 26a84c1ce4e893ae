"""action.py - /control/action ping and /control/state protocol.all against
the kernel (test_otg_action.sh makes the interfaces, inside a network
namespace this driver runs in):

  PYTHONPATH=../shared/peers/otg python3 action.py URL A K B C PCAP

A: surge's port whose veth peer K is the kernel's: 192.0.2.1/24 and
2001:db8:1::1/64 on the device's subnets, 203.0.113.1 and 2001:db8:9::1
beyond them (reached through the gateway, the kernel); B and C: surge's
ports, a veth pair, a device on each (198.18.0.1 and .2, 2001:db8:2::1 and
::2): one pings the other (its port's task answers). A capture of K
(dumpcap) runs while the pings go. Checks: pings to the kernel's addresses
succeed, on the subnet and through the gateway; to addresses nobody has
fail, within the bounded wait; tshark reads the echo requests (addresses,
MACs, valid checksums); bad names and the bgp action are refused by path;
protocol.all stop makes the device deaf (the kernel's ping fails, its
neighbours forgotten, a ping action refused) and start brings it back.
Prints one line per check; exits 1 when one failed.
"""
import json
import os
import subprocess
import sys
import time
from typing import Any, List, Tuple

import requests
import snappi
from otgrun import check, refused, start_all, udp_flow, wait_for, wait_stopped

URL, A, K, B, C, PCAP = sys.argv[1:7]
MAC_A = "02:00:00:00:0a:01"
with open(f"/sys/class/net/{K}/address") as fh:
    MAC_K = fh.read().strip()

api = snappi.api(location=URL, verify=False)


def sh(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True)


def config() -> Any:
    cfg = api.config()
    cfg.ports.add(name="pa", location=A)
    e = cfg.devices.add(name="da").ethernets.add(name="a.eth", mac=MAC_A)
    e.connection.port_name = "pa"
    e.ipv4_addresses.add(name="a.ip4", address="192.0.2.2", gateway="192.0.2.1", prefix=24)
    e.ipv6_addresses.add(name="a.ip6", address="2001:db8:1::2", gateway="2001:db8:1::1", prefix=64)
    for d, loc, n, peer in (("b", B, 1, 2), ("c", C, 2, 1)):
        cfg.ports.add(name="p" + d, location=loc)
        e = cfg.devices.add(name="d" + d).ethernets.add(name=d + ".eth", mac=f"02:00:00:00:0{d}:01")
        e.connection.port_name = "p" + d
        e.ipv4_addresses.add(name=d + ".ip4", address=f"198.18.0.{n}", gateway=f"198.18.0.{peer}", prefix=24)
        e.ipv6_addresses.add(name=d + ".ip6", address=f"2001:db8:2::{n}", gateway=f"2001:db8:2::{peer}")
    return cfg


def ping(six: bool, pairs: List[Tuple[str, str]]) -> Tuple[List[Tuple[str, str, str]], float]:
    """The responses (src_name, dst_ip, result) of one ping action, and its seconds."""
    ca = api.control_action()
    p = ca.protocol.ipv6.ping if six else ca.protocol.ipv4.ping
    for src, dst in pairs:
        p.requests.add(src_name=src, dst_ip=dst)
    t0 = time.time()
    res = api.set_control_action(ca)
    took = time.time() - t0
    r = res.response.protocol.ipv6.ping if six else res.response.protocol.ipv4.ping
    return [(x.src_name, x.dst_ip, x.result) for x in r.responses], took


def protocol(state: str) -> None:
    cs = api.control_state()
    cs.protocol.all.state = state
    api.set_control_state(cs)


def neighbor_macs() -> List[Any]:
    """The gateway MACs a.ip4 and a.ip6 resolved, from /monitor/states (None: not yet)."""
    macs = []
    for choice in ("ipv4_neighbors", "ipv6_neighbors"):
        sr = api.states_request()
        getattr(sr, choice).ethernet_names = ["a.eth"]
        macs += [r.link_layer_address for r in getattr(api.get_states(sr), choice)]
    return macs


def kernel_pings() -> bool:
    sh("ip", "neigh", "flush", "dev", K)
    return sh("ping", "-4", "-c", "1", "-W", "1", "192.0.2.2").returncode == 0


api.set_config(config())
protocol("start")     # the model's no-op for started devices (featureprofiles' first call)
check("protocol.all start right after set_config: accepted, the gateways resolved",
      wait_for(lambda: neighbor_macs() == [MAC_K, MAC_K], 10), neighbor_macs())

cap = subprocess.Popen(["dumpcap", "-q", "-i", K, "-w", PCAP], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wait_for(lambda: os.path.exists(PCAP) and os.path.getsize(PCAP) > 0, 15)
time.sleep(0.5)
got, took = ping(False, [("a.ip4", "192.0.2.1"), ("a.ip4", "203.0.113.1")])
check("ipv4 ping: the kernel on the subnet and beyond the gateway: succeeded",
      got == [("a.ip4", "192.0.2.1", "succeeded"), ("a.ip4", "203.0.113.1", "succeeded")], got)
got, took = ping(False, [("a.ip4", "192.0.2.99"), ("a.ip4", "198.51.100.7")])
check("ipv4 ping: an address nobody has (no ARP answer) and one the gateway drops: failed",
      got == [("a.ip4", "192.0.2.99", "failed"), ("a.ip4", "198.51.100.7", "failed")], got)
# the bound: the resolves (1 s for all), then the replies' wait (1 s), and the task's start
check(f"ipv4 ping: the failures answered within the bound ({took:.2f} s <= 4 s)", took <= 4, took)
nobody = [("a.ip4", f"192.0.2.{n}") for n in range(100, 106)]
got, took = ping(False, nobody)
check(f"ipv4 ping: six addresses nobody has failed, resolved at once ({took:.2f} s <= 3.5 s, not 6 s and more)",
      got == [(s, d, "failed") for s, d in nobody] and took <= 3.5, (got, took))
got, took = ping(True, [("a.ip6", "2001:db8:1::1"), ("a.ip6", "2001:db8:9::1"), ("a.ip6", "2001:db8:1::99")])
check("ipv6 ping: the kernel on the subnet and beyond the gateway succeeded, an address nobody has failed",
      got == [("a.ip6", "2001:db8:1::1", "succeeded"), ("a.ip6", "2001:db8:9::1", "succeeded"),
              ("a.ip6", "2001:db8:1::99", "failed")], got)
got, _ = ping(False, [("b.ip4", "198.18.0.2")])
check("ipv4 ping from a device to a device on another port: succeeded", got == [("b.ip4", "198.18.0.2", "succeeded")],
      got)
got, _ = ping(True, [("c.ip6", "2001:db8:2::1")])
check("ipv6 ping from a device to a device on another port: succeeded",
      got == [("c.ip6", "2001:db8:2::1", "succeeded")], got)
time.sleep(0.5)
cap.terminate()
cap.wait()

# the echo requests as the wire carried them; the checksums tshark validated
out = sh("tshark", "-r", PCAP, "-o", "ip.check_checksum:TRUE", "-Y", "icmp.type == 8 || icmpv6.type == 128",
         "-T", "fields", "-e", "eth.src", "-e", "eth.dst", "-e", "ip.src", "-e", "ip.dst", "-e", "ip.checksum.status",
         "-e", "icmp.checksum.status", "-e", "ipv6.src", "-e", "ipv6.dst", "-e", "icmpv6.checksum.status").stdout
rows = sorted(tuple(line.split("\t")) for line in out.splitlines())
want = sorted([(MAC_A, MAC_K, "192.0.2.2", "192.0.2.1", "1", "1", "", "", ""),
               (MAC_A, MAC_K, "192.0.2.2", "203.0.113.1", "1", "1", "", "", ""),
               (MAC_A, MAC_K, "192.0.2.2", "198.51.100.7", "1", "1", "", "", ""),
               (MAC_A, MAC_K, "", "", "", "", "2001:db8:1::2", "2001:db8:1::1", "1"),
               (MAC_A, MAC_K, "", "", "", "", "2001:db8:1::2", "2001:db8:9::1", "1")])
check("tshark on K: one echo request a reachable destination, the device's MAC and address, checksums good",
      rows == want, rows)



def raw(name: str, path: str, body: Any, status: int, want: str) -> None:
    """The server's own answer to body (snappi would check it first): status and want in its errors."""
    r = requests.post(URL + path, data=json.dumps(body), headers={"Content-Type": "application/json"}, timeout=30)
    check(name, r.status_code == status and any(want in e for e in r.json().get("errors", [])),
          f"{r.status_code} {r.text}")


def ping4(src: str, dst: str) -> Any:
    return {"choice": "protocol", "protocol": {"choice": "ipv4", "ipv4": {"choice": "ping", "ping": {
        "requests": [{"src_name": src, "dst_ip": dst}]}}}}


raw("ipv4 ping from an IPv6 address: 400 naming it", "/control/action", ping4("a.ip6", "192.0.2.1"), 400,
    "protocol.ipv4.ping.requests[0].src_name: 'a.ip6' is not the name of a device's IPv4 address")
raw("ping from a name the config does not have: 400 naming it", "/control/action", ping4("nobody", "192.0.2.1"),
    400, "protocol.ipv4.ping.requests[0].src_name: 'nobody'")
raw("ping to an address that is none: 400 naming it", "/control/action", ping4("a.ip4", "192.0.2.300"), 400,
    "protocol.ipv4.ping.requests[0].dst_ip: '192.0.2.300' is not an IPv4 address")
raw("the bgp action: 400 naming its path", "/control/action", {"choice": "protocol", "protocol": {
    "choice": "bgp", "bgp": {"choice": "initiate_graceful_restart"}}}, 400, "protocol.bgp: not implemented by surge")
for proto in ("route", "lacp", "bgp", "isis"):
    raw(f"protocol.{proto} state: 400 naming its path", "/control/state",
        {"choice": "protocol", "protocol": {"choice": proto}}, 400, f"protocol.{proto}: not implemented by surge")

check("before protocol.all stop: the kernel pings the device", kernel_pings())
protocol("stop")
check("protocol.all stop: the device answers no more (the kernel's ping fails)", not kernel_pings())
check("protocol.all stop: the device's neighbours forgotten (/monitor/states)", neighbor_macs() == [None, None],
      neighbor_macs())
refused("ping with the devices stopped: 409", lambda: ping(False, [("a.ip4", "192.0.2.1")]),
        ["the devices are stopped"], 409)
protocol("start")
check("protocol.all start: the gateways resolved again", wait_for(lambda: neighbor_macs() == [MAC_K, MAC_K], 10),
      neighbor_macs())
check("protocol.all start: the kernel pings the device again", kernel_pings())
got, _ = ping(False, [("a.ip4", "192.0.2.1")])
check("protocol.all start: the device pings again", got == [("a.ip4", "192.0.2.1", "succeeded")], got)

# with traffic: a flow on pa (to the kernel, which drops it), continuous, then one of 200 frames
cfg = config()
f = udp_flow(cfg, "t", "pa", "pa", 1, 128, 200, 4000, 1)
f.duration.continuous.gap = 12
api.set_config(cfg)
wait_for(lambda: neighbor_macs() == [MAC_K, MAC_K], 10)
start_all(api)
refused("ping while traffic runs: 409", lambda: ping(False, [("a.ip4", "192.0.2.1")]), ["traffic runs"], 409)
refused("protocol.all stop while traffic runs: 409", lambda: protocol("stop"), ["traffic runs"], 409)
cs = api.control_state()
cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.STOP
api.set_control_state(cs)
cfg = config()
udp_flow(cfg, "t", "pa", "pa", 200, 128, 2000, 4000, 1)
api.set_config(cfg)
start_all(api)
fm = wait_stopped(api, 10)
got, _ = ping(False, [("a.ip4", "192.0.2.1")])
check("ping after a run's flows ended (its tasks still up): succeeded", got == [("a.ip4", "192.0.2.1", "succeeded")],
      got)
fm = wait_stopped(api, 1)
check("the run's counts survive the ping: 200 frames sent", [m.frames_tx for m in fm] == [200], fm)
print("otg action: %d failed" % check.fails)
sys.exit(1 if check.fails else 0)
