"""surge.load() of files surge did not write: always ResultsError naming the
file (and the line where there is one), never a raw UnicodeDecodeError,
RecursionError, KeyError or ValueError (issue 31.11)."""
from __future__ import annotations

import pathlib

import pytest

import surge

HEADER = "t,interval_s,port,tx_packets,tx_bytes,tx_pps,tx_bps_l2,tx_bps_l1,rx_packets,rx_bytes,rx_pps," \
         "rx_bps_l2,rx_bps_l1,drops,unsent,idle_pct\n"
ROW = "0.2,0.2,0,100,6000,500,2.4e6,3.2e6,0,0,0,0,0,0,0,99.5\n"

GOOD = b'{"schema": "surge-results", "status": "ok", "series": {}, "metadata": {}'
CASES: list[tuple[str, bytes, str]] = [
    ("run.json", b"", ": empty file"),
    ("run.json", b'{"schema": "surge-results", "x": "\xff\xfe"}', ":1: not UTF-8 (byte 34)"),
    ("run.json", b"[" * 100000 + b"]" * 100000, ": not a results file: its JSON is nested too deep"),
    ("run.json", b'{"schema": "surge-results",\n  oops}', ":2: not JSON"),
    ("run.json", b'{"schema": "other"}', ": not a surge results file"),
    ("run.json", b'{"schema": "surge-results", "series": [], "summary": {}, "metadata": {}}',
     ": not as surge writes it: series is not an object"),
    # surge's schema name, another shape: refused at load, naming the field (the
    # accessors raised KeyError, TypeError or AttributeError later)
    ("run.json", b'{"schema": "surge-results", "series": {}, "summary": {}, "metadata": {}}',
     ": not as surge writes it: status is not a string"),
    ("run.json", GOOD + b', "summary": {"ports": "x"}}', ": not as surge writes it: summary.ports is not a list"),
    ("run.json", GOOD + b', "summary": {"ports": [{"port": 0}]}}',
     ": not as surge writes it: summary.ports[0].tx_packets is missing or of another type"),
    ("run.json", GOOD + b', "summary": {"ports": [3]}}', ": not as surge writes it: summary.ports[0] is not an object"),
    ("run.json", GOOD + b', "summary": {}, "latency": "x"}', ": not as surge writes it: latency is not a list"),
    ("run.json", GOOD + b', "summary": {}, "latency": [{"id": 1}]}', "latency[0].probes is missing"),
    ("run.json", GOOD + b', "summary": {}, "latency": [{"id": 1, "probes": 1, "lost": 0, "duplicated": 0, '
     b'"reordered": 0, "buckets": {"count": 5}}]}', "latency[0].buckets is not an object of lists"),
    ("run.json", GOOD + b', "summary": {}, "counters": [{"value": 1}]}', "counters[0].name is missing"),
    ("run.json", GOOD + b', "summary": {}, "scenarios": [1]}', ": not as surge writes it: scenarios is not an object"),
    ("run.json", b'{"schema": "surge-results", "n": ' + b"1" * 5000 + b"}", ": not JSON surge writes"),
    ("run.csv", b"\xff\xfe" + HEADER.encode(), ":1: not UTF-8 (byte 0)"),
    ("run.csv", HEADER.encode() + ROW.encode() + b"0.4,0.2,0,1\xe9\n", ":3: not UTF-8"),
    ("run.csv", b"a,b,c\n1,2,3\n", ":1: not surge's CSV: no column t, port, tx_packets"),
    ("run.csv", b"", ":1: not surge's CSV: no column t"),
    ("run.csv", (HEADER + ROW + "0.4,0.2,0,100\n").encode(), ":3: the row has no tx_bytes"),
    ("run.csv", (HEADER + ROW + ROW.strip() + ",1,2\n").encode(), ":3: the row has more cells than the header"),
    ("run.csv", (HEADER + ROW.replace("6000", "lots")).encode(), ":2: tx_bytes is 'lots', not a number"),
    ("run.csv", (HEADER + ROW.replace(",100,", ",1.5,")).encode(), ":2: tx_packets is '1.5', not a number"),
    ("run.csv", (HEADER + '0.2,"0.2\n').encode(), ":2: the row has no port"),
    ("run.csv", b"\x00" * 100, "not"),
]


@pytest.mark.parametrize("name,content,message", CASES, ids=[f"{i}-{c[0]}" for i, c in enumerate(CASES)])
def test_load_refuses(tmp_path: pathlib.Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(surge.ResultsError) as e:
        surge.load(path)
    assert str(e.value).startswith(str(path)), str(e.value)
    assert message in str(e.value), str(e.value)


def test_load_a_good_csv(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "run.csv"
    path.write_text(HEADER + ROW)
    r = surge.load(path)
    assert r.series["ports"] == [{"t": 0.2, "interval_s": 0.2, "port": 0, "tx_packets": 100, "tx_bytes": 6000,
                                  "tx_pps": 500.0, "tx_bps_l2": 2.4e6, "tx_bps_l1": 3.2e6, "rx_packets": 0,
                                  "rx_bytes": 0, "rx_pps": 0.0, "rx_bps_l2": 0.0, "rx_bps_l1": 0.0, "drops": 0,
                                  "unsent": 0, "idle_pct": 99.5}]


def test_missing_file(tmp_path: pathlib.Path) -> None:
    with pytest.raises(surge.ResultsError, match="cannot read .*: No such file"):
        surge.load(tmp_path / "none.json")
