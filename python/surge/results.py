"""surge's results files (``--output run.json``, docs/results.md) as Python objects,
and as pandas DataFrames when pandas is installed (it is optional)."""
from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterator, NoReturn, Optional, Sequence, Union

__all__ = ["Results", "Histogram", "load", "merge", "ResultsError"]

PathLike = Union[str, "os.PathLike[str]"]


class ResultsError(ValueError):
    """The file is not a surge results file; the message names the file and the field."""


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:  # pragma: no cover - depends on the machine
        raise ImportError("the DataFrame loaders need pandas (Debian: python3-pandas; pip: pandas)") from None
    return pandas


@dataclass
class Histogram:
    """One latency receiver: its counts and its non-empty buckets (inclusive bounds, ns)."""
    id: int
    probes: int
    lost: int
    duplicated: int
    reordered: int
    stats: dict[str, float]
    low_ns: list[float] = field(default_factory=list)
    high_ns: list[float] = field(default_factory=list)
    count: list[int] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.count)

    def percentile(self, q: float) -> float:
        """The q-th percentile (0..100) in ns: the upper bound of the bucket that
        holds it, as surge reports ``p50_ns`` (HdrHistogram's convention)."""
        if not 0 <= q <= 100:
            raise ValueError(f"percentile: q must be in 0..100, got {q}")
        total = self.total
        if total == 0:
            return float("nan")
        want = max(1, -(-q * total // 100))   # ceil: the rank of the value
        cum = 0
        for c, hi in zip(self.count, self.high_ns):
            cum += c
            if cum >= want:
                return float(hi)
        return float(self.high_ns[-1])

    def cdf(self) -> list[tuple[float, float]]:
        """(upper bound ns, fraction of probes at or below it) per bucket."""
        total, cum, out = self.total, 0, []
        for c, hi in zip(self.count, self.high_ns):
            cum += c
            out.append((float(hi), cum / total))
        return out

    def dataframe(self) -> Any:
        """The buckets as a DataFrame: low_ns, high_ns, count, cum_count, percentile."""
        pd = _pandas()
        df = pd.DataFrame({"low_ns": self.low_ns, "high_ns": self.high_ns, "count": self.count})
        df["cum_count"] = df["count"].cumsum()
        df["percentile"] = df["cum_count"] * 100.0 / max(1, self.total)
        return df


# What the accessors below read, checked once when a file is loaded: a file
# with surge's schema name but another shape is one ResultsError naming the
# field, not a KeyError or TypeError from a method later. list -> the fields
# each of its records must have (a number; "name" a string).
_RECORDS = {("summary", "ports"): ("port", "tx_packets", "rx_packets"),
            ("latency",): ("id", "probes", "lost", "duplicated", "reordered"),
            ("counters",): ("name", "value")}


def _check_shape(data: dict[str, Any], source: str) -> None:
    def bad(where: str, what: str) -> NoReturn:
        raise ResultsError(f"{source}: not as surge writes it: {where} {what}")
    if not isinstance(data.get("status"), str):
        bad("status", "is not a string")
    if not isinstance(data.get("scenarios") or {}, dict):
        bad("scenarios", "is not an object")
    for path, fields in _RECORDS.items():
        where = ".".join(path)
        v: Any = data
        for k in path:
            v = v.get(k) if isinstance(v, dict) else None
        if not isinstance(v or [], list):
            bad(where, "is not a list")
        for i, r in enumerate(v or []):
            if not isinstance(r, dict):
                bad(f"{where}[{i}]", "is not an object")
            for f in fields:
                ok = isinstance(r.get(f), str) if f == "name" else \
                    isinstance(r.get(f), (int, float)) and not isinstance(r.get(f), bool)
                if not ok:
                    bad(f"{where}[{i}].{f}", "is missing or of another type")
            b = r.get("buckets")
            if b is not None and not (isinstance(b, dict) and all(isinstance(x, list) for x in b.values())):
                bad(f"{where}[{i}].buckets", "is not an object of lists")


class Results:
    """A results file: ``data`` is the JSON as Python data; the properties and the
    ``*_df`` methods read its parts."""

    def __init__(self, data: dict[str, Any], source: str = "<results>") -> None:
        if not isinstance(data, dict) or data.get("schema") != "surge-results":
            raise ResultsError(f"{source}: not a surge results file (no \"schema\": \"surge-results\")")
        for key in ("series", "summary", "metadata"):
            if not isinstance(data.get(key), dict):
                raise ResultsError(f"{source}: not as surge writes it: {key} is not an object")
        _check_shape(data, source)
        self.data, self.source = data, source

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __repr__(self) -> str:
        return f"<surge Results {self.source}: {self.status}, {len(self.data['summary'].get('ports', []))} ports>"

    status = property(lambda self: self.data["status"], doc="ok, failed, interrupted or running")
    error = property(lambda self: self.data.get("error"), doc="the error that ended the run, or None")
    metadata = property(lambda self: self.data["metadata"])
    summary = property(lambda self: self.data["summary"])
    series = property(lambda self: self.data["series"])
    scenarios = property(lambda self: self.data.get("scenarios") or {})
    counters = property(lambda self: {c["name"]: c["value"] for c in self.data.get("counters") or []},
                        doc="custom counters and gauges by name")

    def tx_packets(self, port: Optional[int] = None) -> int:
        """Packets sent, by one port or all."""
        return sum(p["tx_packets"] for p in self.summary.get("ports") or [] if port is None or p["port"] == port)

    def rx_packets(self, port: Optional[int] = None) -> int:
        """Packets received, by one port or all."""
        return sum(p["rx_packets"] for p in self.summary.get("ports") or [] if port is None or p["port"] == port)

    def latency(self) -> list[Histogram]:
        """The latency receivers, in creation order."""
        out = []
        for r in self.data.get("latency") or []:
            b = r.get("buckets") or {}
            out.append(Histogram(id=r["id"], probes=r["probes"], lost=r["lost"], duplicated=r["duplicated"],
                                 reordered=r["reordered"],
                                 stats={k: v for k, v in r.items() if k.endswith("_ns")},
                                 low_ns=list(b.get("low_ns", [])), high_ns=list(b.get("high_ns", [])),
                                 count=list(b.get("count", []))))
        return out

    # -- DataFrames -------------------------------------------------------------
    def ports_df(self) -> Any:
        """``series.ports``: one row per interval and port (t, port, tx_pps, ...)."""
        return _pandas().DataFrame(self.series.get("ports") or [])

    def queues_df(self) -> Any:
        """``series.queues``: one row per interval and queue (port, queue, dir, pps, ...)."""
        return _pandas().DataFrame(self.series.get("queues") or [])

    def tasks_df(self) -> Any:
        """``series.tasks``: one row per interval and task lcore (busy/idle cycles, idle %)."""
        return _pandas().DataFrame(self.series.get("tasks") or [])

    def counters_df(self) -> Any:
        """``series.counters``: per sampling round and custom counter (t, name, value)."""
        return _pandas().DataFrame(self.series.get("counters") or [])

    def port_series(self, port: int, column: str = "tx_pps") -> Any:
        """One column of one port over time, indexed by t (a pandas Series)."""
        df = self.ports_df()
        return df[df["port"] == port].set_index("t")[column].rename(f"port {port} {column}")

    def queue_series(self, port: int, queue: int, dir: str = "tx", column: str = "pps") -> Any:
        """One column of one queue over time, indexed by t."""
        df = self.queues_df()
        df = df[(df["port"] == port) & (df["queue"] == queue) & (df["dir"] == dir)]
        return df.set_index("t")[column].rename(f"{dir}q({port},{queue}) {column}")

    def summary_df(self) -> Any:
        """``summary.ports`` without the nested ``device`` counters."""
        rows = [{k: v for k, v in p.items() if k != "device"} for p in self.summary.get("ports") or []]
        return _pandas().DataFrame(rows)

    def latency_df(self) -> Any:
        """One row per receiver: probes, lost, ... min_ns, p50_ns, p99_ns, max_ns."""
        rows = [{k: v for k, v in r.items() if k != "buckets"} for r in self.data.get("latency") or []]
        return _pandas().DataFrame(rows)

    def scenario_df(self, name: str) -> Any:
        """A scenario's table (``scenarios[name].rows``, or its per-size list ``sizes``)."""
        sc = self.scenarios.get(name)
        if sc is None:
            raise KeyError(f"{self.source}: no scenario {name!r} (there are: {', '.join(self.scenarios) or 'none'})")
        rows = sc.get("rows") if isinstance(sc, dict) else None
        if rows is None and isinstance(sc, dict):
            rows = sc.get("sizes")
        if not isinstance(rows, list):
            raise ResultsError(f"{self.source}: scenario {name!r} has no table (rows)")
        return _pandas().json_normalize(rows)


_CSV_INTS = ("tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "drops", "unsent")


def _read_text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ResultsError(f"cannot read {path}: {e.strerror}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise ResultsError(f"{path}:{line}: not UTF-8 (byte {e.start}), not a file surge wrote") from None


def _csv_cell(path: str, line: int, key: str, v: Optional[str]) -> Union[int, float]:
    if v is None:
        raise ResultsError(f"{path}:{line}: the row has no {key} (fewer cells than the header)")
    try:
        if key == "port" or key in _CSV_INTS:
            return int(v)
        return float(v)
    except ValueError:
        raise ResultsError(f"{path}:{line}: {key} is {v[:40]!r}, not a number") from None


def _load_csv(path: str, text: str) -> Results:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows: list[dict[str, Any]] = []
    try:
        header = reader.fieldnames or []
        missing = [k for k in ("t", "port") + _CSV_INTS if k not in header]
        if missing:
            raise ResultsError(f"{path}:1: not surge's CSV: no column {', '.join(missing)}")
        for r in reader:
            line = reader.line_num
            if None in r:
                raise ResultsError(f"{path}:{line}: the row has more cells than the header")
            rows.append({k: _csv_cell(path, line, k, v) for k, v in r.items()})
    except csv.Error as e:
        raise ResultsError(f"{path}:{reader.line_num}: not CSV: {e}") from None
    data = {"schema": "surge-results", "schema_version": 1, "status": "ok", "metadata": {},
            "series": {"ports": rows, "queues": [], "tasks": [], "counters": []}, "summary": {"ports": []}}
    return Results(data, path)


def load(path: PathLike) -> Results:
    """Reads a ``--output`` file: JSON (everything) or CSV (the port series only,
    put under ``series.ports``). A file that is not one surge wrote (not UTF-8,
    not JSON or CSV, nested too deep, missing columns) is :class:`ResultsError`
    naming the file and line."""
    path = str(path)
    text = _read_text(path)
    if path.endswith(".csv"):
        return _load_csv(path, text)
    if not text.strip():
        raise ResultsError(f"{path}: empty file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None
    except ValueError as e:
        # a number of more than 4300 digits (Python's bound on int())
        raise ResultsError(f"{path}: not JSON surge writes: {str(e)[:60]}") from None
    except RecursionError:
        raise ResultsError(f"{path}: not a results file: its JSON is nested too deep") from None
    return Results(data, path)


def iter_files(paths: list[PathLike]) -> Iterator[Results]:
    """Each file loaded in turn."""
    for p in paths:
        yield load(p)


# -- several instances' results as one ----------------------------------------
# The one place results are added up across instances (surge.merge, Fleet.merged).
# Records are matched by what names them (a port by its number, a queue by port,
# queue and direction, a counter by name); every other field is kept, whatever
# it is called, so a field surge adds later is merged too, not dropped:
# numbers are summed, except times (the latest) and percentages (the mean);
# objects (a port's device counters, a queue's rate) are merged field by field
# with the same rules; anything else is the first instance's. Each instance's
# whole results stay in scenarios.fleet.instances.
_LATEST = frozenset({"t", "interval_s", "duration_s", "seconds"})


def _merge_field(name: str, vals: list[Any]) -> Any:
    if all(isinstance(v, dict) for v in vals):
        return _merge_records(vals)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        if name in _LATEST:
            return max(vals)
        if name.endswith("_pct"):
            return sum(vals) / len(vals)
        return sum(vals)
    return vals[0]


def _merge_records(records: Sequence[dict[str, Any]], keys: Sequence[str] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {k: records[0].get(k) for k in keys}
    for r in records:
        for k in r:
            if k not in out:
                out[k] = _merge_field(k, [x[k] for x in records if k in x])
    return out


def _merge_lists(lists: Sequence[list[dict[str, Any]]], keys: Sequence[str]) -> list[dict[str, Any]]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for lst in lists:
        for rec in lst:
            groups.setdefault(tuple(rec.get(k) for k in keys), []).append(rec)
    return [_merge_records(groups[k], keys) for k in sorted(groups, key=lambda k: tuple(str(x) for x in k))]


def merge(parts: dict[str, dict[str, Any]], start_time: Optional[float] = None) -> dict[str, Any]:
    """One results file (schema version 1) for several instances: ``summary`` holds
    the totals (ports and queues by number across instances, tasks by lcore, custom
    counters by name; every field, see above), ``scenarios.fleet`` each instance's
    whole results and how its start lined up. ``status`` is the worst of the parts."""
    if not parts:
        raise ValueError("merge: no results")
    for name, r in parts.items():
        Results(r, f"the results of {name}")
    first = next(iter(parts.values()))
    order = {"ok": 0, "running": 1, "interrupted": 2, "failed": 3}
    worst_name, worst = max(parts.items(), key=lambda kv: order.get(kv[1]["status"], 3))
    summaries = [r["summary"] for r in parts.values()]
    duration = max(float(s.get("duration_s", 0)) for s in summaries)
    leads = {}
    for name, r in parts.items():
        f = (r.get("scenarios") or {}).get("fleet")
        if isinstance(f, dict) and "armed_lead_s" in f:
            leads[name] = f["armed_lead_s"]
    fleet: dict[str, Any] = {"instances": [{"name": n, "results": r} for n, r in parts.items()]}
    if start_time is not None:
        fleet["start"] = start_time
    if leads:
        fleet["armed_lead_s"] = leads      # how far ahead of each host's clock the start time arrived
    meta = dict(first["metadata"])
    meta["command_line"] = ["surge-fleet"] + [f"{n}={' '.join(r['metadata'].get('command_line', []))}"
                                            for n, r in parts.items()]
    meta["duration_s"] = duration
    meta["devices"] = []
    return {
        "schema": "surge-results", "schema_version": 1,
        "status": worst["status"], "exit_code": max((r.get("exit_code") or 0) for r in parts.values()),
        "error": f"{worst_name}: {worst['error']}" if worst.get("error") else None,
        "signal": None,
        "metadata": meta,
        "series": {"ports": [], "queues": [], "tasks": [], "counters": []},
        "summary": {"duration_s": duration,
                    "ports": _merge_lists([s.get("ports") or [] for s in summaries], ("port",)),
                    "queues": _merge_lists([s.get("queues") or [] for s in summaries], ("port", "queue", "dir")),
                    "tasks": _merge_lists([s.get("tasks") or [] for s in summaries], ("lcore",))},
        "latency": [],
        "counters": _merge_lists([r.get("counters") or [] for r in parts.values()], ("name", "kind")),
        "scenarios": {"fleet": fleet},
    }
