"""The results loaders (surge.load, DataFrames) against files made as the results
tests make them (tests/e2e/test_results.sh): a flood, a latency run, a scenario
and a CSV file."""
import json
import os
import pathlib
import subprocess

import pytest

import surge
from conftest import SRC, SURGE

pd = pytest.importorskip("pandas")
EXAMPLES = os.path.join(SRC, "examples")


def run(tmp: str, name: str, *args: str) -> str:
    out = os.path.join(tmp, name)
    r = subprocess.run(["timeout", "-k", "5", "120", SURGE, "run", "--no-huge", "--file-prefix",
                        f"py-res-{os.getpid()}", "--output", out, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = str(tmp_path_factory.mktemp("results"))
    return {
        "flood": run(tmp, "flood.json", "--duration", "1.2", "--stats-interval", "0.2",
                     os.path.join(EXAMPLES, "udp-flood.lua")),
        "csv": run(tmp, "flood.csv", "--duration", "0.6", "--stats-interval", "0.2",
                   os.path.join(EXAMPLES, "udp-flood.lua")),
        "latency": run(tmp, "latency.json", "--stats-interval", "0.2", os.path.join(EXAMPLES, "latency.lua"),
                       "--rate", "100kpps", "--seconds", "1"),
        "scenario": run(tmp, "ll.json", "--vdev", "net_ring0", "load-latency", "--rates", "5kpps,10kpps",
                        "--trial", "0.3", "--settle", "0.1"),
    }


def test_flood_series(files: dict[str, str]) -> None:
    r = surge.load(files["flood"])
    raw = json.load(open(files["flood"]))
    assert r.status == "ok" and r.metadata["devices"][0]["driver"] == "net_null"
    df = r.ports_df()
    assert len(df) >= 5 and {"t", "port", "tx_pps", "tx_packets"} <= set(df.columns)
    # the series adds up exactly to the summary (docs/results.md)
    assert df[df.port == 0].tx_packets.sum() == raw["summary"]["ports"][0]["tx_packets"] == r.tx_packets(0)
    s = r.port_series(0, "tx_pps")
    assert s.index.name == "t" and len(s) == len(df[df.port == 0])
    q = r.queue_series(0, 0, "tx", "packets")
    assert q.sum() == raw["summary"]["queues"][0]["packets"]
    assert len(r.queues_df()) > 0 and len(r.tasks_df()) > 0
    assert r.summary_df().loc[0, "tx_packets"] == r.tx_packets()


def test_csv(files: dict[str, str]) -> None:
    r = surge.load(files["csv"])
    df = r.ports_df()
    assert len(df) >= 2 and df.tx_packets.dtype.kind == "i" and df.tx_packets.sum() > 0
    assert list(df.columns[:3]) == ["t", "interval_s", "port"]


def test_latency_histogram(files: dict[str, str]) -> None:
    r = surge.load(files["latency"])
    hs = r.latency()
    assert len(hs) == 1
    h = hs[0]
    assert h.total == h.probes > 0
    for q, key in ((50, "p50_ns"), (90, "p90_ns"), (99, "p99_ns"), (99.9, "p999_ns")):
        assert h.percentile(q) == pytest.approx(h.stats[key], rel=0.05), (q, h.percentile(q), h.stats[key])
    assert h.percentile(100) == pytest.approx(h.stats["max_ns"], rel=0.05)
    df = h.dataframe()
    assert df["count"].sum() == h.probes and df["percentile"].iloc[-1] == pytest.approx(100)
    assert r.latency_df().loc[0, "probes"] == h.probes
    with pytest.raises(ValueError):
        h.percentile(101)


def test_scenario_table(files: dict[str, str]) -> None:
    r = surge.load(files["scenario"])
    df = r.scenario_df("load-latency") if "load-latency" in r.scenarios else r.scenario_df("load_latency")
    assert len(df) == 2 and "p50_ns" in df.columns
    with pytest.raises(KeyError) as e:
        r.scenario_df("rfc2544")
    assert "no scenario 'rfc2544'" in str(e.value)


def test_bad_files(tmp_path: pathlib.Path) -> None:
    empty = tmp_path / "e.json"
    empty.write_text("")
    with pytest.raises(surge.ResultsError, match="empty file"):
        surge.load(empty)
    bad = tmp_path / "b.json"
    bad.write_text("{\n  \"schema\": ")
    with pytest.raises(surge.ResultsError, match=r"b\.json:2: not JSON"):
        surge.load(bad)
    other = tmp_path / "o.json"
    other.write_text("{}")
    with pytest.raises(surge.ResultsError, match="not a surge results file"):
        surge.load(other)
    with pytest.raises(surge.ResultsError, match="cannot read"):
        surge.load(tmp_path / "missing.json")
