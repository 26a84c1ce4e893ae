"""otgrun.py - what the OTG drivers do alike: their checks counted, a refusal
checked, a fixed UDP flow between two ports, start every flow, and wait until
every flow's transmit state is "stopped" (or a deadline passes)."""
import re
import time
from typing import Any, Callable, List


class Checks:
    """One line per check ("ok   NAME" or "FAIL NAME: DETAIL"), the failures counted."""

    def __init__(self) -> None:
        self.fails = 0

    def __call__(self, name: str, cond: bool, detail: Any = "") -> None:
        print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)))
        self.fails += 0 if cond else 1


# the drivers' checks (check.fails: how many failed)
check = Checks()


def refused(name: str, fn: Any, want: List[str], status: int = 400) -> None:
    """fn() must raise (snappi raises on any non-2xx answer) with status and every text of want."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - snappi raises a bare Exception
        text = re.sub(r"\s+", " ", str(e)).replace("''", "'")   # snappi's YAML: lines wrapped, quotes doubled
        check(name, all(w in text for w in want) and str(status) in text, text)
        return
    check(name, False, "accepted")


def wait_for(fn: Callable[[], bool], seconds: float) -> bool:
    """fn() polled every 0.1 s until true or seconds passed; its last answer."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if fn():
            return True
        time.sleep(0.1)
    return fn()


def start_all(api: Any) -> None:
    cs = api.control_state()
    cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.START
    api.set_control_state(cs)


def wait_stopped(api: Any, seconds: float, poll: float = 0.1) -> List[Any]:
    """The flow metrics once all flows stopped, or the last ones read at the deadline."""
    mr = api.metrics_request()
    mr.flow.flow_names = []
    deadline = time.time() + seconds
    while True:
        fm: List[Any] = api.get_metrics(mr).flow_metrics
        if all(m.transmit == "stopped" for m in fm) or time.time() >= deadline:
            return fm
        time.sleep(poll)


def udp_flow(cfg: Any, name: str, tx: str, rx: str, n: int, size: int, pps: int, sport: int, sports: int) -> Any:
    """A flow of n UDP frames of size bytes (FCS counted) from port tx to rx, metrics on:
    02:00:00:00:0a:01 -> 02:00:00:00:0b:01, 198.18.0.1 -> 198.19.0.1, the source port
    incremented from sport over sports values, destination port 7."""
    f = cfg.flows.add(name=name)
    f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = tx, [rx]
    f.size.fixed, f.rate.pps = size, pps
    f.duration.fixed_packets.packets = n
    f.metrics.enable = True
    eth, ip, udp = f.packet.ethernet().ipv4().udp()
    eth.src.value, eth.dst.value = "02:00:00:00:0a:01", "02:00:00:00:0b:01"
    ip.src.value, ip.dst.value = "198.18.0.1", "198.19.0.1"
    udp.src_port.increment.start, udp.src_port.increment.count = sport, sports
    udp.dst_port.value = 7
    return f
