"""surgebench.cpu - the one CPU-time sampler of the benches: a process's
threads' utime + stime from /proc/PID/task/TID/stat (the DPDK workers,
named rte-worker-N, or the whole process), read from outside.

Used by scripts/bench --cpu-time (the TX lcores' share of a CPU over the
measured seconds), bench/telemetry-rate.py --cpu-of and
bench/conn-telemetry.py (a pair's CPU-seconds in its window). The
in-process figure of scripts/bench-rx-ab is the receiving thread's own CPU
clock (bench/rx-loop.lua --cpu-windows).
"""
from __future__ import annotations

import os
import threading
import time
from typing import Optional, Tuple

HZ = os.sysconf("SC_CLK_TCK")


def _ticks(stat_path: str) -> Optional[int]:
    """utime + stime (clock ticks, stat fields 14 and 15) of a stat file,
    None when the thread or process is gone."""
    try:
        with open(stat_path) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[11]) + int(fields[12])


def worker_ticks(pid: int) -> Tuple[int, int]:
    """utime + stime (clock ticks) of PID's rte-worker-N threads, and their number."""
    ticks = n = 0
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return 0, 0
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if not f.read().startswith("rte-worker"):
                    continue
        except OSError:                       # the thread ended
            continue
        t = _ticks("/proc/%d/task/%s/stat" % (pid, tid))
        if t is not None:
            ticks += t
            n += 1
    return ticks, n


def process_cpu_s(pid: int) -> float:
    """Seconds of CPU the process ran so far (user + system), 0 if gone."""
    t = _ticks("/proc/%d/stat" % pid)
    return 0.0 if t is None else t / HZ


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def child_of(pid: int) -> Optional[int]:
    """The first child of pid (the program `timeout` runs), None without one."""
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            kids.append(int(d))
    return min(kids) if kids else None


class TxShare(threading.Thread):
    """The share of one CPU the TX lcores' threads of a run got over its
    measured seconds (scripts/bench --cpu-time): from 1.5 s after the start
    (the first second of traffic is not measured either), for up to
    `duration` seconds or until the program ends (testpmd is stopped as
    soon as it printed its samples): the last reading while it ran; divided
    by the number of TX lcores. `share` is 0 when under 0.5 s were seen."""

    def __init__(self, pid: int, duration: float, tx_lcores: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.duration, self.tx = pid, duration, tx_lcores
        self.share = 0.0

    def run(self) -> None:
        time.sleep(1.5)
        p = child_of(self.pid) or self.pid     # timeout's child
        t0 = t = worker_ticks(p)[0]
        w0 = w = time.time()
        while alive(p):
            time.sleep(0.25)
            v = worker_ticks(p)[0]
            if not alive(p) or v < t:
                break
            t, w = v, time.time()
            if w - w0 >= self.duration:
                break
        # kept to 4 decimals, as it is reported
        self.share = float("%.4f" % ((t - t0) / HZ / (w - w0) / self.tx if w > w0 + 0.5 else 0))
