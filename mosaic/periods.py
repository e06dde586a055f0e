"""The period class as a person reads it: "minute: 30 s-30 min", one notation everywhere.

A periodic direction's label names its magnitude (``write_periodic_minute``,
SPEC 3.4); pages, `mosaic apps`, `mosaic lookup` and the labels all say it
this way, with the bounds of the configuration that gave the labels. The
API keeps ``period_class`` (the decade k of 10^k <= period < 10^(k+1) s) as
a number for programs.
"""

from __future__ import annotations

import numpy as np

from mosaic.config import DEFAULT, Config
from mosaic.corpus.profiles import ApplicationProfile

MAGNITUDES = ("second", "minute", "hour", "day or more")  # as the labels periodic_second ...


def duration(seconds: float) -> str:
    """30 -> '30 s', 1800 -> '30 min', 43200 -> '12 h', 90 -> '1.5 min': the largest unit
    giving at least 1, three significant digits at most."""
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if abs(seconds) >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def run_time_text(seconds: float) -> str:
    """'32,865 s (9.13 h)', '0.07 s': a short run is not '0 s', a long one is also in hours."""
    exact = f"{seconds:,.0f} s" if seconds >= 100 else f"{seconds:.3g} s"
    friendly = duration(seconds)
    return exact if friendly == f"{seconds:.3g} s" else f"{exact} ({friendly})"


FOUND_BY = {"both": "mean shift and the FFT", "meanshift": "mean shift", "fft": "the FFT"}  # Verdict's source


def verdict_period(period: float, source: str) -> str:
    """'5.31 min, found by mean shift and the FFT': a periodic verdict's period and its finder,
    in the unit the labels use (not '318.6 s from both')."""
    return f"{duration(period)}, found by {FOUND_BY[source]}"


def bounds(config: Config = DEFAULT) -> tuple[float, float, float]:
    """The upper bounds of the second, minute and hour magnitudes (SPEC 3.4)."""
    return config.period_second_max, config.period_minute_max, config.period_hour_max


def magnitude(period: float, config: Config = DEFAULT) -> str:
    """The magnitude of ``period`` seconds with its range: 'minute: 30 s-30 min'."""
    edges = bounds(config)
    k = int(np.searchsorted(edges, period, side="left"))  # as verdict.labels: a bound is the lower name
    if k == 0:
        return f"{MAGNITUDES[0]}: up to {duration(edges[0])}"
    if k == len(edges):
        return f"{MAGNITUDES[k]}: over {duration(edges[-1])}"
    return f"{MAGNITUDES[k]}: {duration(edges[k - 1])}-{duration(edges[k])}"


def period_text(period: float | None, direction: str | None, config: Config = DEFAULT) -> str:
    """'write, minute: 30 s-30 min (median 47 s)', or '-' without a period."""
    if period is None or direction is None or not period > 0:
        return "-"
    return f"{direction}, {magnitude(period, config)} (median {duration(period)})"


def median_period(profile: ApplicationProfile) -> float | None:
    """The median period of the profile's periodic direction, over the runs where it is."""
    direction = profile["period_direction"]
    spread = profile[direction]["periodic"]["period_seconds"] if direction else None
    return None if spread is None else spread["median"]
