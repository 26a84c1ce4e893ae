#!/usr/bin/python3
"""example_results.py OUT.json - a results file as `surge repl --output` writes
it for a session at the prompt: a rate set twice, then a load-latency sweep
of five trials (64 B, 0.5 to 8 Mpps through a DUT from port 0 to port 1),
each trial's latency receiver labelled, and an RFC 2544 table. Made up but
of the shape surge writes (docs/results.schema.json), and the same every
time: docs/img/make.sh draws it for docs/results.md, and
tests/e2e/test_plot.sh draws it again and compares."""
import json
import math
import sys

LINE = 14.88e6           # 64-byte frames at 10 Gbit/s
STEP = 0.5               # the stats interval
loads = [0.5e6, 1e6, 2e6, 4e6, 8e6]
events, ports, latency = [], [], []
rate_at = []             # (from, to, offered pps)
t = 1.0
events.append({"t": 0.4, "kind": "set_rate", "port": 0, "queue": 0, "text": "port 0 queue 0: rate 100kpps"})
events.append({"t": 0.8, "kind": "set_rate", "port": 0, "queue": 0, "text": "port 0 queue 0: rate unpaced"})
rate_at.append((0.4, 0.8, 1e5))
for i, load in enumerate(loads):
    label = "64 B at %g Mpps" % (load / 1e6)
    events.append({"t": t, "kind": "trial_start", "text": "the trial at %.0f pps: %s" % (load, label), "label": label})
    rate_at.append((t, t + 1.5, load))
    t += 1.5
    events.append({"t": t, "kind": "trial_end", "text": "the trial at %.0f pps ends" % load, "label": label})
    t += 0.5
    # a log-normal body that widens and shifts with the load, and a tail
    med = 2000 * (1 + (load / 5e6) ** 3)
    lows, highs, counts = [], [], []
    total = 0
    for k in range(60):
        lo = int(500 * 1.1 ** k)
        hi = int(500 * 1.1 ** (k + 1)) - 1
        x = math.log((lo + hi) / 2 / med) / (0.25 + 0.05 * i)
        c = int(round(20000 * math.exp(-x * x / 2) + (30 if x > 2 else 0) * math.exp(-(x - 2) / 3)))
        if c > 0:
            lows.append(lo); highs.append(hi); counts.append(c); total += c
    def pct(p):
        acc = 0
        for lo, hi, c in zip(lows, highs, counts):
            acc += c
            if acc >= p * total:
                return float(hi)
        return float(highs[-1])
    latency.append({"id": i, "label": label, "probes": total, "lost": 0, "duplicated": 0, "reordered": 0,
                    "min_ns": float(lows[0]), "mean_ns": pct(0.5), "p50_ns": pct(0.5), "p90_ns": pct(0.9),
                    "p99_ns": pct(0.99), "p999_ns": pct(0.999), "max_ns": float(highs[-1]),
                    "buckets": {"low_ns": lows, "high_ns": highs, "count": counts}})
end = t
n = int(round(end / STEP))
for k in range(1, n + 1):
    tk = k * STEP
    tx = 0.0
    for a, b, pps in rate_at:      # the offered rate's share of this interval
        tx += pps * max(0.0, min(b, tk) - max(a, tk - STEP)) / STEP
    rx = min(tx, 6.1e6 * (tx > 0))  # the DUT forwards at most 6.1 Mpps
    for port, tpps, rpps in ((0, tx, 0.0), (1, 0.0, rx)):
        pk_t, pk_r = int(tpps * STEP), int(rpps * STEP)
        ports.append({"t": tk, "interval_s": STEP, "port": port,
                      "tx_packets": pk_t, "tx_bytes": pk_t * 60, "tx_pps": tpps, "tx_bps_l2": tpps * 512,
                      "tx_bps_l1": tpps * 672, "rx_packets": pk_r, "rx_bytes": pk_r * 60, "rx_pps": rpps,
                      "rx_bps_l2": rpps * 512, "rx_bps_l1": rpps * 672, "drops": 0, "unsent": 0, "idle_pct": 0})
res = {
    "schema": "surge-results", "schema_version": 1, "status": "ok", "exit_code": 0, "error": None, "signal": None,
    "metadata": {"surge_version": "0.1.0", "git_commit": "v0.1.0-example", "dpdk_version": "DPDK 22.11.4",
                 "luajit_version": "LuaJIT 2.1.0-beta3", "cpu_model": "example CPU", "hostname": "lab1",
                 "tsc_hz": 2.0e9,
                 "command_line": ["surge", "repl", "--pci", "0000:03:00.0", "--pci", "0000:03:00.1",
                                  "--output", "session.json"],
                 "script": None, "script_options": {}, "start_time": "2026-01-15T09:30:00Z", "duration_s": end,
                 "file_prefix": "surge-4242",
                 "devices": [{"port": 0, "name": "0000:03:00.0", "driver": "net_ice", "link_speed_mbps": 10000,
                              "link_up": True, "mac": "02:00:00:00:00:01"},
                             {"port": 1, "name": "0000:03:00.1", "driver": "net_ice", "link_speed_mbps": 10000,
                              "link_up": True, "mac": "02:00:00:00:00:02"}]},
    "series": {"ports": ports, "queues": [], "tasks": [], "counters": []},
    "summary": {"duration_s": end, "ports": [], "queues": [], "tasks": []},
    "latency": latency, "counters": [],
    "scenarios": {
        "load-latency": {"rows": [{"load_pps": l, "loss_pct": max(0.0, 100 - 6.1e6 * 100 / l),
                                   "p50_ns": x["p50_ns"], "p99_ns": x["p99_ns"], "p999_ns": x["p999_ns"]}
                                  for l, x in zip(loads, latency)]},
        "rfc2544": {"rows": [{"frame_size": s, "throughput_pps": min(6.1e6, LINE * 84 / (s + 20)),
                              "throughput_mpps": min(6.1e6, LINE * 84 / (s + 20)) / 1e6,
                              "throughput_pct": min(6.1e6, LINE * 84 / (s + 20)) * 100 / (LINE * 84 / (s + 20)),
                              "p50_ns": 2100.0 + s, "p99_ns": 4800.0 + 3 * s, "max_ns": 9000.0 + 5 * s}
                             for s in (64, 128, 256, 512, 1024, 1280, 1518)]},
    },
    "events": events,
}
json.dump(res, open(sys.argv[1], "w"), indent=1)
