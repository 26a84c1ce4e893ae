"""capture.py - the bytes surge otg sends, for tshark (test_otg_capture.sh):
one flow per stack on a port whose location is a net_pcap device writing
what it sends to a file.

  PYTHONPATH=../shared/peers/otg python3 capture.py URL PCAP

Flows (fixed_packets, sent one after the other by a port's task):
  fa  ethernet/ipv4/udp, 100 B: ipv4.src increment 10.0.0.1 x5, udp.dst_port
      values 5000 5001 5002, eth.src value, ttl value 7
  fb  ethernet/vlan/ipv6/tcp, 120 B: vlan.id decrement 100 x4, ipv6.dst
      increment 2001:db8::10 x3, tcp.src_port 80, tcp.dst_port increment 8000 step 2 x 2
The shell script checks every frame's fields with tshark.
"""
import sys

import snappi
from otgrun import start_all, wait_stopped

URL, PCAP = sys.argv[1], sys.argv[2]
api = snappi.api(location=URL, verify=False)
cfg = api.config()
p = cfg.ports.add(name="cap", location="net_pcap9,rx_pcap=%s.in,tx_pcap=%s" % (PCAP, PCAP))
fa = cfg.flows.add(name="fa")
fa.tx_rx.port.tx_name = p.name
fa.size.fixed, fa.rate.pps = 100, 10000
fa.duration.fixed_packets.packets = 30
eth, ip, udp = fa.packet.ethernet().ipv4().udp()
eth.src.value, eth.dst.value = "02:aa:00:00:00:01", "02:bb:00:00:00:02"
ip.src.increment.start, ip.src.increment.step, ip.src.increment.count = "10.0.0.1", "0.0.0.1", 5
ip.dst.value, ip.time_to_live.value = "10.9.9.9", 7
udp.src_port.value = 4321
udp.dst_port.values = [5000, 5001, 5002]
fb = cfg.flows.add(name="fb")
fb.tx_rx.port.tx_name = p.name
fb.size.fixed, fb.rate.pps = 120, 10000
fb.duration.fixed_packets.packets = 24
eth, vlan, ip6, tcp = fb.packet.ethernet().vlan().ipv6().tcp()
eth.src.value, eth.dst.value = "02:aa:00:00:00:03", "02:bb:00:00:00:04"
vlan.id.decrement.start, vlan.id.decrement.step, vlan.id.decrement.count = 100, 1, 4
vlan.priority.value = 5
ip6.src.value = "2001:db8::1"
ip6.dst.increment.start, ip6.dst.increment.step, ip6.dst.increment.count = "2001:db8::10", "::1", 3
ip6.hop_limit.value = 9
tcp.src_port.value = 80
tcp.dst_port.increment.start, tcp.dst_port.increment.step, tcp.dst_port.increment.count = 8000, 2, 2
api.set_config(cfg)
start_all(api)
fm = wait_stopped(api, 20)
for m in fm:
    print("%s transmit %s frames_tx %d bytes_tx %d" % (m.name, m.transmit, m.frames_tx, m.bytes_tx))
