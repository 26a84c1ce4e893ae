"""surge.merge: several instances' results as one, every field kept (a field
the merge has never heard of is summed, not dropped), records matched by what
names them; valid against docs/results.schema.json."""
from __future__ import annotations

import copy
import json
import os
from typing import Any

import pytest

import surge
from conftest import SRC


def part(tx: int, extra: int, lcore_idle: float) -> dict[str, Any]:
    return {
        "schema": "surge-results", "schema_version": 1, "status": "ok", "exit_code": 0, "error": None,
        "signal": None,
        "metadata": {"surge_version": "0", "git_commit": "0", "dpdk_version": "22.11", "luajit_version": "2.1",
                     "cpu_model": "x", "tsc_hz": 1e9, "command_line": ["surge", "run", "x.lua"], "script": "x.lua",
                     "script_options": {}, "start_time": "2026-01-01T00:00:00Z", "duration_s": 1.0,
                     "file_prefix": None, "devices": []},
        "series": {"ports": [], "queues": [], "tasks": [], "counters": []},
        "summary": {
            "duration_s": 1.0 + extra,
            "ports": [{"port": 0, "tx_packets": tx, "tx_bytes": 60 * tx, "tx_pps": float(tx), "tx_bps_l2": 480.0 * tx,
                       "tx_bps_l1": 672.0 * tx, "rx_packets": 0, "rx_bytes": 0, "rx_pps": 0.0, "rx_bps_l2": 0.0,
                       "rx_bps_l1": 0.0, "drops": 1, "unsent": 0, "tx_future_field": extra,
                       "device": {"opackets": tx, "ipackets": 0, "obytes": 60 * tx, "ibytes": 0, "imissed": 0,
                                  "ierrors": 0, "oerrors": 0, "rx_nombuf": 0}}],
            "queues": [{"port": 0, "queue": 0, "dir": "tx", "packets": tx, "bytes": 60 * tx, "drops": 1, "unsent": 0,
                        "rate": {"target_pps": 100.0, "achieved_pps": 99.0, "achieved_bps_l1": 1.0, "packets": tx,
                                 "seconds": 1.0 + extra, "error_pct": -1.0}}],
            "tasks": [{"lcore": 1, "fn": "tx", "busy_cycles": 10, "idle_cycles": 30, "idle_pct": lcore_idle}],
        },
        "latency": [],
        "counters": [{"name": "sent", "kind": "counter", "value": tx, "lcores": 1}],
        "scenarios": {},
    }


def test_every_field_summed_or_kept() -> None:
    a, b = part(100, 1, 75.0), part(50, 2, 25.0)
    b["summary"]["ports"].append(dict(copy.deepcopy(b["summary"]["ports"][0]), port=1))
    m = surge.merge({"a": a, "b": b}, start_time=12.5)
    p0, p1 = m["summary"]["ports"]
    assert p0["port"] == 0 and p0["tx_packets"] == 150 and p0["tx_bytes"] == 9000 and p0["drops"] == 2
    assert p0["tx_future_field"] == 3, "a field the merge does not know is summed, not dropped"
    assert p0["device"]["opackets"] == 150 and p0["device"]["obytes"] == 9000
    assert p1["port"] == 1 and p1["tx_packets"] == 50, "a port only one instance has"
    q = m["summary"]["queues"][0]
    assert (q["port"], q["queue"], q["dir"], q["packets"]) == (0, 0, "tx", 150)
    assert q["rate"]["target_pps"] == 200.0 and q["rate"]["seconds"] == 3.0 and q["rate"]["error_pct"] == -1.0
    t = m["summary"]["tasks"][0]
    assert t["lcore"] == 1 and t["fn"] == "tx" and t["busy_cycles"] == 20 and t["idle_pct"] == 50.0
    assert m["summary"]["duration_s"] == 3.0
    assert m["counters"] == [{"name": "sent", "kind": "counter", "value": 150, "lcores": 2}]
    assert [i["name"] for i in m["scenarios"]["fleet"]["instances"]] == ["a", "b"]
    assert m["scenarios"]["fleet"]["start"] == 12.5
    jsonschema = pytest.importorskip("jsonschema")
    with open(os.path.join(SRC, "docs/results.schema.json")) as f:
        jsonschema.validate(json.loads(json.dumps(m)), json.load(f))


def test_status_is_the_worst() -> None:
    a, b = part(1, 0, 0.0), part(1, 0, 0.0)
    b["status"], b["error"], b["exit_code"] = "failed", "x.lua:3: boom", 1
    m = surge.merge({"a": a, "b": b})
    assert m["status"] == "failed" and m["error"] == "b: x.lua:3: boom" and m["exit_code"] == 1


def test_refuses_what_is_not_results() -> None:
    with pytest.raises(ValueError, match="no results"):
        surge.merge({})
    with pytest.raises(surge.ResultsError, match="the results of b: not a surge results file"):
        surge.merge({"a": part(1, 0, 0.0), "b": {"status": "ok"}})
