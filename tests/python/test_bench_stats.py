"""The bench harness's statistics (bench/surgebench/stats.py) and tables
(common.table): known answers, and awk, which the shell benches computed
their medians and aligned their tables with, as the judge of "the same
figures and the same output as before"."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from typing import List

import pytest

from conftest import SRC

sys.path.insert(0, os.path.join(SRC, "bench"))

from surgebench import common, stats  # noqa: E402

# the shell benches' median (scripts/bench before the harness)
AWK_MEDIAN = "{ v[NR] = $1 } END { if (NR == 0) exit 1; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }"
# and their aligned tables
AWK_TABLE = ("{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NF } "
             "END { for (r = 1; r <= NR; r++) { line = sprintf(\"%-\" w[1] \"s\", c[r, 1]); "
             "for (i = 2; i <= n; i++) line = line sprintf(\"  %\" w[i] \"s\", c[r, i]); print line } }")


def awk(prog: str, text: str, sep: str = "") -> str:
    awk_bin = shutil.which("awk")
    if awk_bin is None:
        pytest.skip("no awk")
    args = [awk_bin] + (["-F", sep] if sep else []) + [prog]
    return subprocess.run(args, input=text, capture_output=True, text=True, check=True).stdout


def test_median_known_answers() -> None:
    assert stats.median([3.0]) == 3.0
    assert stats.median([5.0, 1.0, 3.0]) == 3.0
    assert stats.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    # an even count's mean as awk printed it: 6 significant digits
    assert stats.median([12.3456789, 12.3456781]) == 12.3457
    with pytest.raises(ValueError):
        stats.median([])


def test_median_as_awk_computed_it() -> None:
    rnd = random.Random(7)
    for n in range(1, 12):
        for _ in range(20):
            vals: List[str] = ["%.6f" % rnd.uniform(0.5, 200) for _ in range(n)]
            vals.sort(key=float)                  # sort -g
            old = awk(AWK_MEDIAN, "\n".join(vals) + "\n").strip()
            assert stats.median(float(v) for v in vals) == float(old), (vals, old)
            assert stats.median_text(vals) == old, (vals, old)


def test_ratio_and_spread() -> None:
    assert stats.ratio(10.0, 4.0) == "2.500"
    assert stats.ratio(1.0, 3.0) == "0.333"
    # numerically, not as text ("10.000" sorts before "9.000" as text)
    assert stats.spread(["9.000", "10.000", "0.950"]) == ("0.950", "10.000")
    with pytest.raises(ValueError):
        stats.spread([])
    assert stats.ratio_or_na(1.0, 0.0) == "n/a"
    assert stats.ratio_or_na(3.0, 2.0) == "1.50"


def test_best_cycles_cpu_share() -> None:
    assert stats.best([1.0, 7.5, 3.0]) == 7.5
    assert stats.cycles_per_packet(2_000_000_000, 20.0) == 100.0
    # per CPU-second: each sample divided by the share, kept to 6 decimals
    assert stats.per_cpu([10.0, 9.0], 0.5) == [20.0, 18.0]
    assert stats.per_cpu([1.0], 3.0) == [0.333333]
    assert stats.reached(0.7, 0.7) == "(reached)"
    assert stats.reached(0.69, 0.7) == "(not reached)"


def test_table_aligned_as_awk_did() -> None:
    rows = [["pair", "surge Mpps", "surge/testpmd", "per-rep ratios"],
            ["udp-flood vs txonly", "31.2", "1.05", "0.98-1.10"],
            ["--flows 1024 --clones 8 vs flowgen clones=8", "7.0", "0.99", "0.99-0.99"]]
    got: List[str] = []
    common.table(rows, False, out=got.append)
    old = awk(AWK_TABLE, "".join("\t".join(r) + "\n" for r in rows), "\t")
    assert got[0] == ""
    assert "\n".join(got[1:]) + "\n" == old
    md: List[str] = []
    common.table(rows[:2], True, flag="NOT COMPARABLE", out=md.append)
    assert md == ["", "NOT COMPARABLE", "| pair | surge Mpps | surge/testpmd | per-rep ratios |", "|---|---:|---:|---:|",
                  "| udp-flood vs txonly | 31.2 | 1.05 | 0.98-1.10 |"]
