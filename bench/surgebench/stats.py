"""surgebench.stats - the benches' statistics, in one place: the median of
a run's per-second samples and of a row's runs, ratios, the spread of the
per-repetition ratios, the best second, cycles a packet.

The figures are formatted as the shell benches printed them (their awk):
a median of an even count is rounded to 6 significant digits (awk's
%.6g when it prints a computed number), a ratio is kept as its 3-decimal
string, a CPU share as its 4-decimal one. The tables therefore show the
same digits for the same samples.
"""
from __future__ import annotations

from typing import Iterable, List, Sequence, Tuple


def awk_num(x: float) -> float:
    """x as awk prints a computed number (%.6g), read back."""
    return float("%.6g" % x)


def median(values: Iterable[float]) -> float:
    """The median; the mean of the two middle values of an even count
    (rounded as awk printed it). ValueError when there is none."""
    v = sorted(values)
    n = len(v)
    if n == 0:
        raise ValueError("median of no values")
    if n % 2:
        return v[n // 2]
    return awk_num((v[n // 2 - 1] + v[n // 2]) / 2)


def ratio(a: float, b: float) -> str:
    """a / b to 3 decimals: the per-repetition ratio as it is kept and printed."""
    return "%.3f" % (a / b)


def ratio_or_na(a: float, b: float, fmt: str = "%.2f") -> str:
    """a / b, or n/a when b is not above 0 (bench-conn's ratios)."""
    return fmt % (a / b) if b > 0 else "n/a"


def spread(ratios: Sequence[str]) -> Tuple[str, str]:
    """The lowest and highest of the per-repetition ratios (as kept)."""
    if not ratios:
        raise ValueError("spread of no ratios")
    s = sorted(ratios, key=float)
    return s[0], s[-1]


def best(samples: Iterable[float]) -> float:
    """The best (highest) per-second sample: interference only ever slows
    a run down, so the best second is the closest to its undisturbed rate."""
    return max(samples)


def cycles_per_packet(tsc_hz: float, mpps: float) -> float:
    """TSC cycles a packet at mpps million packets a second."""
    return tsc_hz / (mpps * 1e6)


def per_cpu(samples: Sequence[float], share: float) -> List[float]:
    """Per-second samples divided by the CPU share the measured threads got
    (--cpu-time), each kept to 6 decimals as they are stored."""
    return [float("%.6f" % (s / share)) for s in samples]


def reached(value: float, target: float) -> str:
    return "(reached)" if value >= target else "(not reached)"


def median_text(values: Sequence[str]) -> str:
    """The median of numbers kept as text, printed as awk printed it: the
    middle one as written, or the mean of the two middle ones (%.6g)."""
    v = sorted(values, key=float)
    n = len(v)
    if n == 0:
        raise ValueError("median of no values")
    return v[n // 2] if n % 2 else "%.6g" % ((float(v[n // 2 - 1]) + float(v[n // 2])) / 2)
