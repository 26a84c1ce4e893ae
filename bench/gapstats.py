#!/usr/bin/python3
"""gapstats.py GAPS_FILE RATE_PPS PATTERN - the shape of paced traffic.

GAPS_FILE holds one inter-departure gap in seconds a line (tshark -T fields
-e frame.time_delta, the first frame's line removed). Prints one line:
  gaps=N rate=PPS p50_err_us=X p99_err_us=Y ks=D under_0.5us=PCT
p50/p99_err_us: |gap - 1/rate| quantiles (constant rates); ks: the
Kolmogorov-Smirnov distance of the gaps to the exponential with mean 1/rate
(Poisson); under_0.5us: the share of gaps under 0.5 us (back-to-back
departures). Used by scripts/bench-gaps and tests/e2e/test_rate_gaps.sh.
"""
import math
import sys


def main() -> int:
    path, rate = sys.argv[1], float(sys.argv[2])
    gaps = sorted(float(x) for x in open(path) if x.strip())
    n = len(gaps)
    if n < 2:
        print("gaps=%d" % n)
        return 1
    mean = 1.0 / rate
    err = sorted(abs(g - mean) * 1e6 for g in gaps)
    ks = 0.0
    for i, g in enumerate(gaps):
        f = 1 - math.exp(-g / mean)
        ks = max(ks, abs((i + 1) / n - f), abs(i / n - f))
    small = sum(1 for g in gaps if g < 0.5e-6) * 100.0 / n
    print("gaps=%d rate=%.1f p50_err_us=%.2f p99_err_us=%.2f ks=%.4f under_0.5us=%.1f" % (
        n, n / sum(gaps), err[n // 2], err[int(n * 0.99)], ks, small))
    return 0


if __name__ == "__main__":
    sys.exit(main())
