"""otgrun.py - what the OTG drivers do alike: start every flow, and wait
until every flow's transmit state is "stopped" (or a deadline passes)."""
import time
from typing import Any, List


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


class Checks:
    """One line per check ("ok   NAME" or "FAIL NAME: DETAIL"), the failures counted."""

    def __init__(self) -> None:
        self.fails = 0

    def __call__(self, name: str, cond: bool, detail: Any = "") -> None:
        print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)))
        self.fails += 0 if cond else 1
