"""tags.py - a flow's metric tags and its tagged metrics (test_otg_tags.sh
makes the veth pair B-C, surge's ports, in a network namespace this driver
runs in):

  PYTHONPATH=../shared/peers/otg python3 tags.py URL B C PCAP

One flow from B to C: its IPv4 source incremented over 4 addresses with a
2-bit metric tag on their low bits, its UDP source port over 3 values with a
2-bit tag too. The flow's frame i has source i % 4 and port i % 3 (each
field on its own cycle), so the counts per pair of tag values are known;
snappi reads them as tagged metrics (sent and received, bytes, loss) and
tshark counts the same per pair in a capture of C. Then the request's
options (include_empty_metrics, metric_names, filters, include false) and
the refusals of tags surge cannot count.
Prints one line per check; exits 1 when one failed.
"""
import os
import subprocess
import sys
import time
from collections import Counter
from typing import Any, Dict, Tuple

import snappi
from otgrun import check, refused, start_all, wait_for, wait_stopped

URL, B, C, PCAP = sys.argv[1:5]
N, SIZE, SPORT = 402, 128, 5000
api = snappi.api(location=URL, verify=False)


def config(enable: bool = True, src_len: int = 2) -> Any:
    cfg = api.config()
    cfg.ports.add(name="pb", location=B)
    cfg.ports.add(name="pc", location=C)
    f = cfg.flows.add(name="t")
    f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = "pb", ["pc"]
    f.size.fixed, f.rate.pps = SIZE, 4000
    f.duration.fixed_packets.packets = N
    f.metrics.enable = enable
    eth, ip, udp = f.packet.ethernet().ipv4().udp()
    eth.src.value, eth.dst.value = "02:00:00:00:0b:01", "02:00:00:00:0c:01"
    ip.src.increment.start, ip.src.increment.step, ip.src.increment.count = "198.18.0.4", "0.0.0.1", 4
    ip.src.metric_tags.add(name="src", offset=32 - src_len, length=src_len)
    ip.dst.value = "198.19.0.1"
    udp.src_port.increment.start, udp.src_port.increment.count = SPORT, 3
    udp.src_port.metric_tags.add(name="sport", offset=14, length=2)
    udp.dst_port.value = 7
    return cfg


def tagged(**kw: Any) -> Dict[Tuple[str, str], Any]:
    """The flow's tagged metrics, keyed by its (src, sport) tag values."""
    mr = api.metrics_request()
    mr.flow.flow_names = ["t"]
    for k, v in kw.items():
        setattr(mr.flow.tagged_metrics, k, v)
    out = {}
    for tm in api.get_metrics(mr).flow_metrics[0].tagged_metrics:
        vals = {t.name: t.value.hex for t in tm.tags}
        out[(vals["src"], vals["sport"])] = tm
    return out


# frame i: source 198.18.0.(4 + i % 4) (tag i % 4), port SPORT + i % 3 (tag (5000 + i % 3) & 3)
want = Counter((hex((4 + i % 4) & 3), hex((SPORT + i % 3) & 3)) for i in range(N))

api.set_config(config())
cap = subprocess.Popen(["dumpcap", "-q", "-i", C, "-w", PCAP], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wait_for(lambda: os.path.exists(PCAP) and os.path.getsize(PCAP) > 0, 15)
time.sleep(0.5)
start_all(api)
m = wait_stopped(api, 20)[0]
check(f"the flow: {N} sent, {N} received on pc", m.frames_tx == N and m.frames_rx == N, m.serialize())
time.sleep(0.5)
cap.terminate()
cap.wait()
tm = tagged()
got = {k: (v.frames_tx, v.frames_rx) for k, v in tm.items()}
check("12 tagged metrics, one per (src, sport) pair sent, frames_tx and frames_rx as the pattern gives",
      got == {k: (n, n) for k, n in want.items()}, got)
check("tagged bytes_tx and bytes_rx: the frames times their size, loss 0",
      all(v.bytes_tx == v.frames_tx * SIZE and v.bytes_rx == v.frames_rx * SIZE and v.loss == 0 for v in tm.values()),
      [v.serialize() for v in tm.values()])
out = subprocess.run(["tshark", "-r", PCAP, "-Y", "udp.dstport == 7", "-T", "fields", "-e", "ip.src",
                      "-e", "udp.srcport"], capture_output=True, text=True).stdout
seen = Counter((hex(int(s.split(".")[3]) & 3), hex(int(p) & 3)) for s, p in
               (line.split("\t") for line in out.splitlines()))
check("tshark on pc counts per (source address, source port) what the tagged metrics say",
      seen == Counter({k: v.frames_rx for k, v in tm.items()}) and sum(seen.values()) == N, seen)
check("a tagged value 0x0 ... 0x3 per source address 198.18.0.4 ... 7",
      sorted({k[0] for k in tm}) == ["0x0", "0x1", "0x2", "0x3"], sorted(tm))

full = tagged(include_empty_metrics=True)
check("include_empty_metrics: all 16 values of the 4 tagged bits, 4 of them empty",
      len(full) == 16 and sum(1 for v in full.values() if v.frames_tx == 0 and v.frames_rx == 0) == 4, sorted(full))
only = tagged(metric_names=["frames_rx"])
check("metric_names [frames_rx]: frames_rx given, frames_tx and bytes_rx not",
      all(v.frames_rx > 0 and v.frames_tx is None and v.bytes_rx is None for v in only.values()),
      [v.serialize() for v in only.values()])
mr = api.metrics_request()
mr.flow.flow_names = ["t"]
mr.flow.tagged_metrics.filters.add(name="src", values=["0x1"])
flt = api.get_metrics(mr).flow_metrics[0].tagged_metrics
check("filters src [0x1]: the 3 values of source 198.18.0.5",
      len(flt) == 3 and all(t.value.hex == "0x1" for x in flt for t in x.tags if t.name == "src")
      and sum(x.frames_rx for x in flt) == sum(n for k, n in want.items() if k[0] == "0x1"), [x.serialize() for x in flt])
mr = api.metrics_request()
mr.flow.flow_names = ["t"]
mr.flow.tagged_metrics.include = False
check("include false: no tagged metrics", len(api.get_metrics(mr).flow_metrics[0].tagged_metrics) == 0)

refused("metric tags without metrics.enable: 400 naming the tag's field",
        lambda: api.set_config(config(enable=False)),
        ["flows[0].packet[1].ipv4.src.metric_tags:", "needs the flow's metrics.enable true"])
refused("16 tagged bits: 400, surge counts at most 12",
        lambda: api.set_config(config(src_len=14)),
        ["flows[0].packet[2].udp.src_port.metric_tags:", "16 tagged bits", "at most 12"])
many = config(src_len=10)
for i in range(1, 90):
    f = many.flows.add(name=f"t{i}")
    f.tx_rx.port.tx_name = "pb"
    f.metrics.enable = True
    _, ip = f.packet.ethernet().ipv4()
    ip.src.metric_tags.add(name="s", offset=20, length=12)
refused("90 flows of 12 tagged bits on 2 ports (3 x 4096 counts each): 400 at the flow past surge's 2^20 counts",
        lambda: api.set_config(many), ["flows[85]: its metric tags make 1056768 counts", "over surge's 1048576"])
check("the server still serves the config set before", len(api.get_config().flows) == 1)
print("otg tags: %d failed" % check.fails)
sys.exit(1 if check.fails else 0)
