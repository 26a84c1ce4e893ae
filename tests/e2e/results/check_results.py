#!/usr/bin/python3
"""check_results.py FILE.json [key=value ...] - validates a surge results file
against docs/results.schema.json and cross-checks its numbers:
  - the per-interval port series adds up to the summary (packets, bytes, drops)
  - each port's summary equals the sum of its queues, and (tx) the driver's
    own opackets/obytes (port:stats())
  - every latency histogram's counts add up to the probes it received, its
    buckets ascend, and p50/p99 lie inside the histogram's range
  - the interval times increase and end at the run's duration
Expectations from the test: status=ok|failed|interrupted, min_intervals=N,
error_re=REGEX, signal=N, device_tx=1 / device_rx=1 (compare tx / rx with the driver).
Prints one "ok"/"FAIL" line per check; exit 1 on any failure."""
import json
import re
import sys

import jsonschema

path, schema_path = sys.argv[1], sys.argv[2]
want = dict(a.split("=", 1) for a in sys.argv[3:])
fails = 0


def check(what, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else ": " + str(detail)))
    if not cond:
        fails += 1


with open(path) as f:
    res = json.load(f)
with open(schema_path) as f:
    schema = json.load(f)
try:
    jsonschema.validate(res, schema)
    check("valid against results.schema.json", True)
except jsonschema.ValidationError as e:
    check("valid against results.schema.json", False, e.message + " at " + "/".join(map(str, e.path)))

if "status" in want:
    check("status " + want["status"], res["status"] == want["status"], res["status"])
if "error_re" in want:
    check("error matches /%s/" % want["error_re"], re.search(want["error_re"], res["error"] or ""), res["error"])
if "signal" in want:
    check("signal " + want["signal"], str(res["signal"]) == want["signal"], res["signal"])

summary = res["summary"]
series = res["series"]["ports"]
dur = summary["duration_s"]
for p in summary["ports"]:
    rows = [r for r in series if r["port"] == p["port"]]
    n = int(want.get("min_intervals", "1"))
    check("port %d: %d intervals >= %d" % (p["port"], len(rows), n), len(rows) >= n)
    ts = [r["t"] for r in rows]
    check("port %d: interval times increase" % p["port"], ts == sorted(ts) and len(set(ts)) == len(ts))
    if rows:
        check("port %d: series ends at the duration" % p["port"], abs(ts[-1] - dur) < 1e-9, (ts[-1], dur))
        check("port %d: intervals add up to the duration" % p["port"],
              abs(sum(r["interval_s"] for r in rows) - dur) < 1e-6)
    for k in ("tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "drops"):
        check("port %d: series %s sum == summary (%d)" % (p["port"], k, p[k]), sum(r[k] for r in rows) == p[k],
              sum(r[k] for r in rows))
    qs = [q for q in summary["queues"] if q["port"] == p["port"]]
    for d in ("tx", "rx"):
        qsum = sum(q["packets"] for q in qs if q["dir"] == d)
        check("port %d: %s queues sum == port" % (p["port"], d), qsum == p[d + "_packets"], (qsum, p[d + "_packets"]))
        qrows = [q for q in res["series"]["queues"] if q["port"] == p["port"] and q["dir"] == d]
        check("port %d: %s queue series sum == port" % (p["port"], d),
              sum(q["packets"] for q in qrows) == p[d + "_packets"])
    if want.get("device_tx") == "1":
        check("port %d: tx == driver opackets (%d)" % (p["port"], p["device"]["opackets"]),
              p["tx_packets"] == p["device"]["opackets"], p["tx_packets"])
        if p["device"]["obytes"] > 0:      # net_null counts no bytes
            check("port %d: tx bytes == driver obytes" % p["port"], p["tx_bytes"] == p["device"]["obytes"],
                  (p["tx_bytes"], p["device"]["obytes"]))
    if want.get("device_rx") == "1":
        check("port %d: rx == driver ipackets (%d)" % (p["port"], p["device"]["ipackets"]),
              p["rx_packets"] == p["device"]["ipackets"], p["rx_packets"])
    if dur > 0:
        check("port %d: summary pps == packets / duration" % p["port"],
              abs(p["tx_pps"] - p["tx_packets"] / dur) <= 1e-6 * max(1, p["tx_pps"]))

for lat in res["latency"]:
    b = lat["buckets"]
    total = sum(b["count"])
    check("latency %d: histogram counts %d == probes %d" % (lat["id"], total, lat["probes"]), total == lat["probes"])
    check("latency %d: buckets ascend" % lat["id"],
          all(b["low_ns"][i] <= b["high_ns"][i] < b["low_ns"][i + 1] for i in range(len(b["count"]) - 1)))
    if total:
        check("latency %d: min <= p50 <= p99 <= max inside the buckets" % lat["id"],
              b["low_ns"][0] <= lat["min_ns"] <= lat["p50_ns"] <= lat["p99_ns"] <= lat["max_ns"] <= b["high_ns"][-1])
        # p50 from the buckets: the bucket where the cumulative count reaches half
        acc, mid = 0, None
        for lo, hi, c in zip(b["low_ns"], b["high_ns"], b["count"]):
            acc += c
            if acc >= total * 0.5:
                mid = (lo, hi)
                break
        check("latency %d: p50 lies in the bucket holding the median" % lat["id"],
              mid[0] - 1 <= lat["p50_ns"] <= mid[1] + 1 or lat["p50_ns"] in (lat["min_ns"], lat["max_ns"]),
              (lat["p50_ns"], mid))

sys.exit(1 if fails else 0)
